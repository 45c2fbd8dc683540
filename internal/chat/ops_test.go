package chat_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/chat"
	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/typo3"
)

// TestWhoMayChat: with allowed groups only their members (effective
// groups) and admins may chat; everything else answers 403; nobody reads
// another's conversation (404).
func TestWhoMayChat(t *testing.T) {
	f := setup(t, chattest.Options{Settings: &chat.Settings{Task: chattest.Task, AllowedGroups: []int64{1}}})
	ctx := context.Background()
	admin, editor, intern := f.Users["admin"], f.Users["editor"], f.Users["intern"]

	for _, u := range []*typo3.BackendUser{intern, nil} {
		_, err := f.Service.Create(ctx, u)
		wantCode(t, "create", err, chat.CodeAccessDenied, http.StatusForbidden)
		_, err = f.Service.List(ctx, u, false)
		wantCode(t, "list", err, chat.CodeAccessDenied, http.StatusForbidden)
		a, err := f.Service.Availability(ctx, u)
		if err != nil || a.Available || a.Reason != chat.CodeAccessDenied {
			t.Errorf("availability: %+v, %v", a, err)
		}
	}
	mine, err := f.Service.Create(ctx, editor)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := f.Service.Create(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	id := mine.Conversation.ID
	a, err := f.Service.Availability(ctx, editor)
	if err != nil || !a.Available || a.Reason != "" || a.MaxLength != chat.DefaultMaxMessageLength {
		t.Errorf("editor's availability: %+v, %v", a, err)
	}
	// Every operation on an existing conversation checks the group first.
	for name, op := range map[string]func(u *typo3.BackendUser, id int64) error{
		"messages": func(u *typo3.BackendUser, id int64) error { _, err := f.Service.Messages(ctx, u, id, 0); return err },
		"send": func(u *typo3.BackendUser, id int64) error {
			_, err := f.Service.Send(ctx, u, chat.SendParams{ID: id, Content: "x"})
			return err
		},
		"edit": func(u *typo3.BackendUser, id int64) error {
			_, err := f.Service.Edit(ctx, u, chat.EditParams{ID: id, Seq: 1, Content: "x"})
			return err
		},
		"retry": func(u *typo3.BackendUser, id int64) error { _, err := f.Service.Retry(ctx, u, id); return err },
		"decide": func(u *typo3.BackendUser, id int64) error {
			_, err := f.Service.Decide(ctx, u, chat.DecideParams{ID: id, Approve: true})
			return err
		},
		"input": func(u *typo3.BackendUser, id int64) error {
			_, err := f.Service.Input(ctx, u, chat.InputParams{ID: id, Data: []byte(`{}`)})
			return err
		},
		"archive": func(u *typo3.BackendUser, id int64) error { _, err := f.Service.Archive(ctx, u, id); return err },
		"pin":     func(u *typo3.BackendUser, id int64) error { _, err := f.Service.Pin(ctx, u, id, true); return err },
		"rename":  func(u *typo3.BackendUser, id int64) error { _, err := f.Service.Rename(ctx, u, id, "t"); return err },
	} {
		wantCode(t, name+" as intern", op(intern, id), chat.CodeAccessDenied, http.StatusForbidden)
		wantCode(t, name+" of another's", op(editor, theirs.Conversation.ID), chat.CodeConversationNotFound, http.StatusNotFound)
		wantCode(t, name+" by an admin of another's", op(admin, id), chat.CodeConversationNotFound, http.StatusNotFound)
		wantCode(t, name+" of none", op(editor, 999999), chat.CodeConversationNotFound, http.StatusNotFound)
	}
	list, err := f.Service.List(ctx, editor, true)
	if err != nil || len(list) != 1 || list[0].Conversation.ID != id {
		t.Errorf("editor's list: %+v, %v", list, err)
	}
}

// TestGroupTasks: the first mapping of one of the user's effective
// groups picks the task, else the default; a mapped task that does not
// exist leaves that user's chat unconfigured.
func TestGroupTasks(t *testing.T) {
	f := setup(t, chattest.Options{Settings: &chat.Settings{Task: chattest.Task, GroupTasks: []chat.GroupTask{
		{Group: 9, Task: "nobody"}, {Group: 2, Task: "interns"}, {Group: 3, Task: "news"},
	}}})
	ctx := context.Background()
	for user, task := range map[string]string{"intern": "interns", "editor": chattest.Task, "admin": chattest.Task} {
		v, err := f.Service.Create(ctx, f.Users[user])
		if err != nil || v.Conversation.Task != task {
			t.Errorf("%s's conversation: task %q, %v; want %q", user, v.Conversation.Task, err, task)
		}
	}
	if a, err := f.Service.Availability(ctx, f.Users["intern"]); err != nil || a.Available || a.Reason != chat.CodeChatNotConfigured {
		t.Errorf("intern's availability: %+v, %v", a, err)
	}
	id := f.Start(t, "intern", "Hello")
	f.Drain(t)
	if c := f.Conversation(t, id); c.Status != store.ConversationFailed || c.ErrorCode != string(chat.CodeChatNotConfigured) || !strings.Contains(c.ErrorMessage, "interns") {
		t.Errorf("intern's turn: %+v", c)
	}
}

// TestLimits: message length, empty messages, busy conversations and the
// per-user limits.
func TestLimits(t *testing.T) {
	f := setup(t, chattest.Options{
		Settings: &chat.Settings{Task: chattest.Task, MaxActivePerUser: 1, MaxConversationsPerUser: 2, MaxMessageLength: 10},
		Rounds:   rounds(llmtest.Text("ok"), llmtest.Text("ok")),
	})
	ctx := context.Background()
	ed := f.Users["editor"]
	one, err := f.Service.Create(ctx, ed)
	if err != nil {
		t.Fatal(err)
	}
	two, err := f.Service.Create(ctx, ed)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Service.Create(ctx, ed)
	wantCode(t, "third conversation", err, chat.CodeTooManyConversations, http.StatusTooManyRequests)
	if _, err := f.Service.Create(ctx, f.Users["admin"]); err != nil {
		t.Errorf("another user's limit is their own: %v", err)
	}

	send := func(id int64, text string) error {
		_, err := f.Service.Send(ctx, ed, chat.SendParams{ID: id, Content: text})
		return err
	}
	wantCode(t, "empty", send(one.Conversation.ID, " \n\t"), chat.CodeEmptyMessage, http.StatusBadRequest)
	wantCode(t, "too long", send(one.Conversation.ID, "01234567890"), chat.CodeMessageTooLong, http.StatusBadRequest)
	if err := send(one.Conversation.ID, "ääääääääää"); err != nil {
		t.Fatalf("ten characters: %v", err)
	}
	wantCode(t, "busy", send(one.Conversation.ID, "more"), chat.CodeConversationProcessing, http.StatusConflict)
	wantCode(t, "second active", send(two.Conversation.ID, "hi"), chat.CodeTooManyActive, http.StatusTooManyRequests)
	if a, err := f.Service.Availability(ctx, ed); err != nil || a.ActiveCount != 1 {
		t.Errorf("availability: %+v, %v", a, err)
	}
	f.Drain(t)
	if err := send(two.Conversation.ID, "hi"); err != nil {
		t.Errorf("after the first turn: %v", err)
	}
	f.Drain(t)
	if got := shape(f.Messages(t, one.Conversation.ID)); got != "user:ääääääääää\nassistant:ok\n" {
		t.Errorf("messages:\n%s", got)
	}
}

// TestEdit replaces a user message and everything after it.
func TestEdit(t *testing.T) {
	f := setup(t, chattest.Options{Rounds: rounds(
		llmtest.Text("A1"),
		llmtest.Text("A2").WithCheck(func(t testing.TB, r llmtest.Request) {
			if got := wireMessages(t, r); len(got) != 2 || got[1] != "user:Q1b" {
				t.Errorf("the edited turn read %q", got)
			}
		}),
	)})
	ctx := context.Background()
	ed := f.Users["editor"]
	id := f.Start(t, "editor", "Q1")
	edit := func(seq int, expected string, count int) error {
		_, err := f.Service.Edit(ctx, ed, chat.EditParams{ID: id, Seq: seq, Content: "Q1b", ExpectedContent: expected, MessageCount: count})
		return err
	}
	wantCode(t, "edit while busy", edit(1, "Q1", 1), chat.CodeConversationProcessing, http.StatusConflict)
	f.Drain(t)
	wantCode(t, "edit an answer", edit(2, "A1", 2), chat.CodeNotEditable, http.StatusBadRequest)
	wantCode(t, "edit beyond the end", edit(3, "", 2), chat.CodeNotEditable, http.StatusBadRequest)
	wantCode(t, "stale content", edit(1, "Q0", 2), chat.CodeEditStale, http.StatusConflict)
	wantCode(t, "stale count", edit(1, "Q1", 1), chat.CodeEditStale, http.StatusConflict)
	_, err := f.Service.Edit(ctx, ed, chat.EditParams{ID: id, Seq: 1, Content: "", ExpectedContent: "Q1", MessageCount: 2})
	wantCode(t, "empty edit", err, chat.CodeEmptyMessage, http.StatusBadRequest)
	if err := edit(1, "Q1", 2); err != nil {
		t.Fatal(err)
	}
	if got := shape(f.Messages(t, id)); got != "user:Q1b\n" {
		t.Errorf("after the edit:\n%s", got)
	}
	f.Drain(t)
	if got := shape(f.Messages(t, id)); got != "user:Q1b\nassistant:A2\n" {
		t.Errorf("after the turn:\n%s", got)
	}
}

// TestFlags: pin, archive, rename, titles and the list order.
func TestFlags(t *testing.T) {
	f := setup(t, chattest.Options{})
	ctx := context.Background()
	ed := f.Users["editor"]
	var ids []int64
	for range 3 {
		v, err := f.Service.Create(ctx, ed)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, v.Conversation.ID)
	}
	long := strings.Repeat("Pumpen ", 30)
	if _, err := f.Service.Send(ctx, ed, chat.SendParams{ID: ids[0], Content: long}); err != nil {
		t.Fatal(err)
	}
	if c := f.Conversation(t, ids[0]); len([]rune(c.Title)) != chat.TitleLen || !strings.HasSuffix(c.Title, "…") || strings.Contains(c.Title, "  ") {
		t.Errorf("title %q", c.Title)
	}
	_, err := f.Service.Rename(ctx, ed, ids[1], " \n ")
	wantCode(t, "empty title", err, chat.CodeEmptyTitle, http.StatusBadRequest)
	if v, err := f.Service.Rename(ctx, ed, ids[1], "  Pump\nprices "); err != nil || v.Conversation.Title != "Pump prices" {
		t.Errorf("rename: %+v, %v", v.Conversation, err)
	}
	if v, err := f.Service.Pin(ctx, ed, ids[2], true); err != nil || !v.Conversation.Pinned {
		t.Errorf("pin: %+v, %v", v.Conversation, err)
	}
	if v, err := f.Service.Archive(ctx, ed, ids[1]); err != nil || !v.Conversation.Archived {
		t.Errorf("archive: %+v, %v", v.Conversation, err)
	}
	list, err := f.Service.List(ctx, ed, false)
	if err != nil || len(list) != 2 || list[0].Conversation.ID != ids[2] {
		t.Errorf("list: %+v, %v", list, err)
	}
	if all, err := f.Service.List(ctx, ed, true); err != nil || len(all) != 3 {
		t.Errorf("list with archived: %d, %v", len(all), err)
	}
	// Sending does not retitle.
	if v, err := f.Service.Send(ctx, ed, chat.SendParams{ID: ids[1], Content: "Another"}); err != nil || v.Conversation.Title != "Pump prices" {
		t.Errorf("send on a titled conversation: %+v, %v", v.Conversation, err)
	}
}

// TestDecideRefusals: deciding or answering where nothing waits.
func TestDecideRefusals(t *testing.T) {
	f := setup(t, chattest.Options{})
	ctx := context.Background()
	ed := f.Users["editor"]
	v, err := f.Service.Create(ctx, ed)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Service.Decide(ctx, ed, chat.DecideParams{ID: v.Conversation.ID, Approve: true, Digest: "d"})
	wantCode(t, "decide idle", err, chat.CodeNotAwaitingApproval, http.StatusConflict)
	_, err = f.Service.Input(ctx, ed, chat.InputParams{ID: v.Conversation.ID, Digest: "d", Data: []byte(`{"choice":"a"}`)})
	wantCode(t, "input idle", err, chat.CodeNotAwaitingInput, http.StatusConflict)
}
