package storetest

import (
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/store/pgstore"
	"github.com/t3agent/t3agent/internal/store/sqlitestore"
)

// ---- chat conversations and their messages ----

// testChat runs every conversation test; Run lists it as one entry.
func testChat(t *testing.T, h harness) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, h harness)
	}{
		{"RoundTrip", testChatRoundTrip},
		{"StateIsWrittenWhole", testChatStateWhole},
		{"ChangeIsGuarded", testChatChangeGuarded},
		{"KeepMessages", testChatKeepMessages},
		{"RacingChangesOneWins", testChatRace},
		{"ClaimOrder", testChatClaimOrder},
		{"ClaimsOnce", testChatClaimsOnce},
		{"List", testChatList},
		{"Count", testChatCount},
		{"Flags", testChatFlags},
		{"Messages", testChatMessagesPaging},
		{"Reconcile", testChatReconcile},
		{"Stranded", testChatStranded},
		{"ChangeGuardedByRun", testChatChangeGuardedByRun},
		{"FailStale", testChatFailStale},
		{"ArchiveAndDelete", testChatArchiveDelete},
		{"Invalid", testChatInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, h)
		})
	}
}

func createConversation(t *testing.T, st store.Store, uid int64, title string) store.Conversation {
	t.Helper()
	c, err := st.CreateConversation(t.Context(), store.CreateConversationParams{
		OwnerUID: uid, OwnerUsername: fmt.Sprintf("user%d", uid), Title: title, Task: "chat",
	})
	if err != nil {
		t.Fatalf("CreateConversation: %v", err)
	}
	return c
}

func changeConversation(t *testing.T, st store.Store, p store.ChangeConversationParams) store.Conversation {
	t.Helper()
	c, err := st.ChangeConversation(t.Context(), p)
	if err != nil {
		t.Fatalf("ChangeConversation %+v: %v", p, err)
	}
	return c
}

func userMsg(text string) store.NewChatMessage {
	return store.NewChatMessage{Role: store.ChatRoleUser, Content: text}
}

func assistantMsg(text string) store.NewChatMessage {
	return store.NewChatMessage{Role: store.ChatRoleAssistant, Content: text}
}

// sendMessage is a chat send: idle (or failed) → processing with the
// user's message.
func sendMessage(t *testing.T, st store.Store, id int64, text string) store.Conversation {
	t.Helper()
	return changeConversation(t, st, store.ChangeConversationParams{
		ID: id, From: []store.ConversationStatus{store.ConversationIdle, store.ConversationFailed},
		To: store.ConversationProcessing, KeepMessages: -1, Append: []store.NewChatMessage{userMsg(text)},
	})
}

func chatMessages(t *testing.T, st store.Store, p store.ListChatMessagesParams) []store.ChatMessage {
	t.Helper()
	msgs, err := st.ChatMessages(t.Context(), p)
	if err != nil {
		t.Fatalf("ChatMessages %+v: %v", p, err)
	}
	if msgs == nil {
		t.Fatal("ChatMessages returned nil")
	}
	return msgs
}

// transcript renders messages as "seq:role:content" for comparison.
func transcript(msgs []store.ChatMessage) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = fmt.Sprintf("%d:%s:%s", m.Seq, m.Role, m.Content)
	}
	return out
}

func conversationIDs(list []store.Conversation) []int64 {
	out := make([]int64, len(list))
	for i, c := range list {
		out[i] = c.ID
	}
	return out
}

func getConversation(t *testing.T, st store.Store, id int64) store.Conversation {
	t.Helper()
	c, err := st.Conversation(t.Context(), id)
	if err != nil {
		t.Fatalf("Conversation %d: %v", id, err)
	}
	return c
}

// sameConversation compares everything but the time fields exactly and
// the times with Equal.
func sameConversation(a, b store.Conversation) bool {
	ta, tb := a, b
	ta.CreatedAt, ta.UpdatedAt, tb.CreatedAt, tb.UpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return ta == tb && a.CreatedAt.Equal(b.CreatedAt) && a.UpdatedAt.Equal(b.UpdatedAt)
}

func testChatRoundTrip(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	c, err := f.st.CreateConversation(ctx, store.CreateConversationParams{OwnerUID: 7, OwnerUsername: "jürgen", Title: "Seiten prüfen", Task: "chat-editors"})
	if err != nil {
		t.Fatal(err)
	}
	if c.ID <= 0 || c.OwnerUID != 7 || c.OwnerUsername != "jürgen" || c.Title != "Seiten prüfen" || c.Task != "chat-editors" ||
		c.Status != store.ConversationIdle || c.ConversationState != (store.ConversationState{}) || c.Pinned || c.Archived || c.MessageCount != 0 {
		t.Errorf("created = %+v", c)
	}
	checkTime(t, "CreatedAt", c.CreatedAt, f.clock.Stamp())
	checkTime(t, "UpdatedAt", c.UpdatedAt, f.clock.Stamp())
	if got := getConversation(t, f.st, c.ID); !sameConversation(got, c) {
		t.Errorf("read back %+v, want %+v", got, c)
	}
	if _, err := f.st.Conversation(ctx, c.ID+1000); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown conversation: %v, want ErrNotFound", err)
	}

	// A send, a claim, and the turn's answer with a line beside a tool call.
	f.clock.Advance(time.Second)
	sent := sendMessage(t, f.st, c.ID, "Wie viele Seiten?")
	if sent.Status != store.ConversationProcessing || sent.MessageCount != 1 {
		t.Errorf("after send = %+v", sent)
	}
	checkTime(t, "UpdatedAt after send", sent.UpdatedAt, f.clock.Stamp())
	checkTime(t, "CreatedAt after send", sent.CreatedAt, c.CreatedAt)
	sendAt := f.clock.Stamp()

	f.clock.Advance(time.Second)
	claimed, err := f.st.ClaimNextConversation(ctx, store.ClaimConversationParams{ClaimID: "worker_1_ab"})
	if err != nil {
		t.Fatal(err)
	}
	if claimed.ID != c.ID || claimed.Status != store.ConversationLocked || claimed.ClaimID != "worker_1_ab" || claimed.MessageCount != 1 {
		t.Errorf("claimed = %+v", claimed)
	}
	checkTime(t, "UpdatedAt after claim", claimed.UpdatedAt, f.clock.Stamp())

	f.clock.Advance(time.Second)
	done := changeConversation(t, f.st, store.ChangeConversationParams{
		ID: c.ID, From: []store.ConversationStatus{store.ConversationLocked}, ClaimID: "worker_1_ab",
		To: store.ConversationIdle, KeepMessages: -1,
		Append: []store.NewChatMessage{
			{Role: store.ChatRoleAssistant, Content: "Ich zähle nach.", BesideToolCall: true},
			{Role: store.ChatRoleAssistant, Content: "Es sind 12 Seiten.", Notice: "nothingSaved"},
		},
	})
	if done.Status != store.ConversationIdle || done.ClaimID != "" || done.MessageCount != 3 {
		t.Errorf("after the turn = %+v", done)
	}
	msgs := chatMessages(t, f.st, store.ListChatMessagesParams{ConversationID: c.ID})
	want := []string{"1:user:Wie viele Seiten?", "2:assistant:Ich zähle nach.", "3:assistant:Es sind 12 Seiten."}
	if got := transcript(msgs); !slices.Equal(got, want) {
		t.Fatalf("messages = %q, want %q", got, want)
	}
	if msgs[0].BesideToolCall || !msgs[1].BesideToolCall || msgs[2].BesideToolCall || msgs[2].Notice != "nothingSaved" || msgs[1].Notice != "" {
		t.Errorf("markers = %+v", msgs)
	}
	for _, m := range msgs {
		if m.ConversationID != c.ID {
			t.Errorf("message %d belongs to %d", m.Seq, m.ConversationID)
		}
	}
	checkTime(t, "message 1 CreatedAt", msgs[0].CreatedAt, sendAt)
	checkTime(t, "message 3 CreatedAt", msgs[2].CreatedAt, f.clock.Stamp())
	if got := getConversation(t, f.st, c.ID); !sameConversation(got, done) {
		t.Errorf("read back %+v, want %+v", got, done)
	}
}

// testChatStateWhole: a change writes the state whole, so what an earlier
// change recorded never survives a later one by accident.
func testChatStateWhole(t *testing.T, h harness) {
	f := h.setup(t)
	c := createConversation(t, f.st, 3, "")
	full := store.ConversationState{
		RunID: "0195f1c2-0000-7000-8000-000000000009", Decision: store.DecisionInput, DecisionDigest: "sha256:abc",
		DecisionBy: "editor", DecisionReason: "variant", PendingInput: `{"choice":"ja"}`,
		ErrorMessage: "Übergeben: " + strings.Repeat("ä", store.MaxConversationErrorLen-11), ErrorCode: "handBack.inputStale",
	}
	got := changeConversation(t, f.st, store.ChangeConversationParams{
		ID: c.ID, From: []store.ConversationStatus{store.ConversationIdle}, To: store.ConversationProcessing,
		KeepMessages: -1, State: full,
	})
	if got.ConversationState != full || !got.HasPendingDecision() {
		t.Errorf("state = %+v, want %+v", got.ConversationState, full)
	}
	if rb := getConversation(t, f.st, c.ID); rb.ConversationState != full {
		t.Errorf("read back state = %+v", rb.ConversationState)
	}
	got = changeConversation(t, f.st, store.ChangeConversationParams{
		ID: c.ID, From: []store.ConversationStatus{store.ConversationProcessing}, To: store.ConversationIdle, KeepMessages: -1,
	})
	if got.ConversationState != (store.ConversationState{}) || got.HasPendingDecision() {
		t.Errorf("state after an empty change = %+v, want empty", got.ConversationState)
	}
}

func testChatChangeGuarded(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	c := createConversation(t, f.st, 3, "t")
	sendMessage(t, f.st, c.ID, "hello")
	claimed, err := f.st.ClaimNextConversation(ctx, store.ClaimConversationParams{ClaimID: "worker_a"})
	if err != nil {
		t.Fatal(err)
	}
	before := getConversation(t, f.st, c.ID)
	f.clock.Advance(time.Minute)
	for _, p := range []store.ChangeConversationParams{
		// Not in From.
		{ID: c.ID, From: []store.ConversationStatus{store.ConversationIdle, store.ConversationFailed}, To: store.ConversationProcessing},
		// In From, but another consumer's claim.
		{ID: c.ID, From: []store.ConversationStatus{store.ConversationLocked}, ClaimID: "worker_b", To: store.ConversationIdle},
	} {
		p.KeepMessages = 0 // would delete every message, were the change to win
		p.Append = []store.NewChatMessage{assistantMsg("lost")}
		p.State = store.ConversationState{ErrorMessage: "lost", RunID: "r"}
		_, err := f.st.ChangeConversation(ctx, p)
		if !errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
			t.Errorf("change %+v: %v, want ErrConflict", p, err)
		}
	}
	if got := getConversation(t, f.st, c.ID); !sameConversation(got, before) {
		t.Errorf("a refused change wrote: %+v, want %+v", got, before)
	}
	if got := transcript(chatMessages(t, f.st, store.ListChatMessagesParams{ConversationID: c.ID})); !slices.Equal(got, []string{"1:user:hello"}) {
		t.Errorf("a refused change touched the messages: %q", got)
	}
	_, err = f.st.ChangeConversation(ctx, store.ChangeConversationParams{
		ID: c.ID + 1000, From: []store.ConversationStatus{store.ConversationIdle}, To: store.ConversationProcessing, KeepMessages: -1,
	})
	if !errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) {
		t.Errorf("change of an unknown conversation: %v, want ErrNotFound", err)
	}
	// The claim's owner still may.
	changeConversation(t, f.st, store.ChangeConversationParams{
		ID: c.ID, From: []store.ConversationStatus{store.ConversationLocked}, ClaimID: claimed.ClaimID,
		To: store.ConversationLocked, State: store.ConversationState{ClaimID: claimed.ClaimID}, KeepMessages: -1,
	})
}

func testChatKeepMessages(t *testing.T, h harness) {
	f := h.setup(t)
	c := createConversation(t, f.st, 3, "t")
	idle := []store.ConversationStatus{store.ConversationIdle}
	change := func(keep int, add ...store.NewChatMessage) store.Conversation {
		t.Helper()
		return changeConversation(t, f.st, store.ChangeConversationParams{ID: c.ID, From: idle, To: store.ConversationIdle, KeepMessages: keep, Append: add})
	}
	list := func() []string {
		return transcript(chatMessages(t, f.st, store.ListChatMessagesParams{ConversationID: c.ID}))
	}
	change(-1, userMsg("a"), assistantMsg("b"), userMsg("c"), assistantMsg("d"))
	// An edit of message 3: keep 2, append the new text.
	if got := change(2, userMsg("c'")); got.MessageCount != 3 {
		t.Errorf("MessageCount after an edit = %d, want 3", got.MessageCount)
	}
	if got := list(); !slices.Equal(got, []string{"1:user:a", "2:assistant:b", "3:user:c'"}) {
		t.Errorf("after an edit: %q", got)
	}
	// Keeping more than there are keeps all and appends after the last.
	if got := change(10, assistantMsg("e")); got.MessageCount != 4 {
		t.Errorf("MessageCount = %d, want 4", got.MessageCount)
	}
	// A cut without an append.
	if got := change(1); got.MessageCount != 1 {
		t.Errorf("MessageCount after a cut = %d, want 1", got.MessageCount)
	}
	if got := list(); !slices.Equal(got, []string{"1:user:a"}) {
		t.Errorf("after a cut: %q", got)
	}
	// 0 replaces everything.
	if got := change(0, userMsg("x"), assistantMsg("y")); got.MessageCount != 2 {
		t.Errorf("MessageCount after a full replace = %d, want 2", got.MessageCount)
	}
	if got := list(); !slices.Equal(got, []string{"1:user:x", "2:assistant:y"}) {
		t.Errorf("after a full replace: %q", got)
	}
	// -1 keeps all.
	if got := change(-1, userMsg("z")); got.MessageCount != 3 {
		t.Errorf("MessageCount = %d, want 3", got.MessageCount)
	}
	if got := list(); !slices.Equal(got, []string{"1:user:x", "2:assistant:y", "3:user:z"}) {
		t.Errorf("after an append: %q", got)
	}
}

// testChatRace: of eight changes from the same status exactly one wins;
// the losers' messages are not stored.
func testChatRace(t *testing.T, h harness) {
	f := h.setup(t)
	c := createConversation(t, f.st, 3, "t")
	const n = 8
	var mu sync.Mutex
	var won []int
	err := runAll(n, func(i int) error {
		_, err := f.st.ChangeConversation(t.Context(), store.ChangeConversationParams{
			ID: c.ID, From: []store.ConversationStatus{store.ConversationIdle}, To: store.ConversationProcessing,
			KeepMessages: -1, Append: []store.NewChatMessage{userMsg(fmt.Sprintf("from %d", i)), assistantMsg("x")},
		})
		if errors.Is(err, store.ErrConflict) {
			return nil
		}
		if err != nil {
			return err
		}
		mu.Lock()
		won = append(won, i)
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(won) != 1 {
		t.Fatalf("%d changes won, want exactly 1", len(won))
	}
	got := getConversation(t, f.st, c.ID)
	if got.Status != store.ConversationProcessing || got.MessageCount != 2 {
		t.Errorf("after the race = %+v", got)
	}
	want := []string{fmt.Sprintf("1:user:from %d", won[0]), "2:assistant:x"}
	if msgs := transcript(chatMessages(t, f.st, store.ListChatMessagesParams{ConversationID: c.ID})); !slices.Equal(msgs, want) {
		t.Errorf("messages = %q, want %q", msgs, want)
	}
}

// testChatClaimOrder: the least recently updated processing conversation
// goes first; a named claim takes only that one; a recorded decision
// travels with the claim.
func testChatClaimOrder(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	claim := func(id int64, claimID string) (store.Conversation, error) {
		return f.st.ClaimNextConversation(ctx, store.ClaimConversationParams{ID: id, ClaimID: claimID})
	}
	if _, err := claim(0, "w"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("claim with nothing queued: %v, want ErrNotFound", err)
	}
	a := createConversation(t, f.st, 1, "a")
	b := createConversation(t, f.st, 1, "b")
	d := createConversation(t, f.st, 1, "d")
	idle := createConversation(t, f.st, 1, "idle")
	// Queued in the order b, a, d; d carries a recorded decision.
	sendMessage(t, f.st, b.ID, "1")
	f.clock.Advance(time.Second)
	sendMessage(t, f.st, a.ID, "2")
	f.clock.Advance(time.Second)
	decision := store.ConversationState{RunID: "run-9", Decision: store.DecisionApprove, DecisionDigest: "dg", DecisionBy: "admin"}
	changeConversation(t, f.st, store.ChangeConversationParams{
		ID: d.ID, From: []store.ConversationStatus{store.ConversationIdle}, To: store.ConversationProcessing, KeepMessages: -1, State: decision,
	})
	f.clock.Advance(time.Second)

	if _, err := claim(idle.ID, "w"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("named claim of an idle conversation: %v, want ErrNotFound", err)
	}
	if _, err := claim(idle.ID+1000, "w"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("named claim of an unknown conversation: %v, want ErrNotFound", err)
	}
	got, err := claim(d.ID, "w-named")
	if err != nil {
		t.Fatal(err)
	}
	want := decision
	want.ClaimID = "w-named"
	if got.ID != d.ID || got.Status != store.ConversationLocked || got.ConversationState != want {
		t.Errorf("named claim = %+v, want d locked with state %+v", got, want)
	}
	if _, err := claim(d.ID, "w-again"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second claim of d: %v, want ErrNotFound", err)
	}
	var order []int64
	for {
		c, err := claim(0, "w")
		if errors.Is(err, store.ErrNotFound) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		order = append(order, c.ID)
	}
	if !slices.Equal(order, []int64{b.ID, a.ID}) {
		t.Errorf("claim order = %v, want %v (oldest first)", order, []int64{b.ID, a.ID})
	}
}

// testChatClaimsOnce: eight claimers drain thirty processing
// conversations; every one is claimed exactly once.
func testChatClaimsOnce(t *testing.T, h harness) {
	f := h.setup(t)
	const rows = 30
	for i := range rows {
		c := createConversation(t, f.st, int64(1+i%3), "c")
		sendMessage(t, f.st, c.ID, "go")
	}
	var mu sync.Mutex
	claimed := map[int64][]string{}
	err := runAll(8, func(i int) error {
		claimID := fmt.Sprintf("worker_%d", i)
		for {
			c, err := f.st.ClaimNextConversation(t.Context(), store.ClaimConversationParams{ClaimID: claimID})
			if errors.Is(err, store.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			if c.Status != store.ConversationLocked || c.ClaimID != claimID {
				return fmt.Errorf("claimed %+v", c)
			}
			mu.Lock()
			claimed[c.ID] = append(claimed[c.ID], claimID)
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(claimed) != rows {
		t.Errorf("%d conversations claimed, want %d", len(claimed), rows)
	}
	for id, by := range claimed {
		if len(by) != 1 {
			t.Errorf("conversation %d claimed by %v", id, by)
		}
		if c := getConversation(t, f.st, id); c.ClaimID != by[0] {
			t.Errorf("conversation %d holds claim %q, want %q", id, c.ClaimID, by[0])
		}
	}
}

func testChatList(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	list := func(p store.ListConversationsParams) []int64 {
		t.Helper()
		l, err := f.st.Conversations(ctx, p)
		if err != nil {
			t.Fatalf("Conversations %+v: %v", p, err)
		}
		if l == nil {
			t.Fatal("Conversations returned nil")
		}
		return conversationIDs(l)
	}
	if got := list(store.ListConversationsParams{}); len(got) != 0 {
		t.Errorf("empty store lists %v", got)
	}
	c1 := createConversation(t, f.st, 5, "1")
	c2 := createConversation(t, f.st, 5, "2")
	f.clock.Advance(time.Second)
	c3 := createConversation(t, f.st, 5, "3")
	other := createConversation(t, f.st, 6, "other")
	f.clock.Advance(time.Second)
	archived := createConversation(t, f.st, 5, "archived")
	if _, err := f.st.SetConversationFlags(ctx, store.SetConversationFlagsParams{ID: archived.ID, Archived: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	// Pinning refreshes updated_at, so pin c1 and then touch c2 later:
	// c1 still comes first.
	f.clock.Advance(time.Second)
	if _, err := f.st.SetConversationFlags(ctx, store.SetConversationFlagsParams{ID: c1.ID, Pinned: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Second)
	sendMessage(t, f.st, c2.ID, "bump")

	if got, want := list(store.ListConversationsParams{OwnerUID: 5}), []int64{c1.ID, c2.ID, c3.ID}; !slices.Equal(got, want) {
		t.Errorf("owner 5 = %v, want %v", got, want)
	}
	if got, want := list(store.ListConversationsParams{OwnerUID: 5, IncludeArchived: true}), []int64{c1.ID, c2.ID, archived.ID, c3.ID}; !slices.Equal(got, want) {
		t.Errorf("owner 5 with archived = %v, want %v", got, want)
	}
	// c3 and other were created in one instant: id breaks the tie, newest first.
	if got, want := list(store.ListConversationsParams{}), []int64{c1.ID, c2.ID, other.ID, c3.ID}; !slices.Equal(got, want) {
		t.Errorf("every owner = %v, want %v", got, want)
	}
	if got, want := list(store.ListConversationsParams{OwnerUID: 5, Limit: 2, Offset: 1}), []int64{c2.ID, c3.ID}; !slices.Equal(got, want) {
		t.Errorf("page = %v, want %v", got, want)
	}
	if got := list(store.ListConversationsParams{OwnerUID: 99}); len(got) != 0 {
		t.Errorf("unknown owner lists %v", got)
	}
	// Changed in one instant, in the other order: still id, newest first.
	f.clock.Advance(time.Second)
	sendMessage(t, f.st, other.ID, "x")
	sendMessage(t, f.st, c3.ID, "x")
	if got, want := list(store.ListConversationsParams{}), []int64{c1.ID, other.ID, c3.ID, c2.ID}; !slices.Equal(got, want) {
		t.Errorf("tie = %v, want %v", got, want)
	}
}

func testChatCount(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	count := func(uid int64) [2]int {
		t.Helper()
		total, busy, err := f.st.CountConversations(ctx, uid)
		if err != nil {
			t.Fatal(err)
		}
		return [2]int{total, busy}
	}
	if got := count(5); got != [2]int{0, 0} {
		t.Errorf("empty = %v", got)
	}
	a := createConversation(t, f.st, 5, "a")
	b := createConversation(t, f.st, 5, "b")
	c := createConversation(t, f.st, 5, "c")
	d := createConversation(t, f.st, 5, "d")
	createConversation(t, f.st, 6, "other")
	sendMessage(t, f.st, a.ID, "x")
	sendMessage(t, f.st, b.ID, "x")
	if _, err := f.st.ClaimNextConversation(ctx, store.ClaimConversationParams{ID: b.ID, ClaimID: "w"}); err != nil {
		t.Fatal(err)
	}
	changeConversation(t, f.st, store.ChangeConversationParams{
		ID: c.ID, From: []store.ConversationStatus{store.ConversationIdle}, To: store.ConversationAwaitingApproval, KeepMessages: -1,
	})
	// An archived busy one counts for neither.
	sendMessage(t, f.st, d.ID, "x")
	if _, err := f.st.SetConversationFlags(ctx, store.SetConversationFlagsParams{ID: d.ID, Archived: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	if got := count(5); got != [2]int{3, 2} {
		t.Errorf("count = %v, want 3 total, 2 busy", got)
	}
	if got := count(6); got != [2]int{1, 0} {
		t.Errorf("other owner = %v", got)
	}
}

func testChatFlags(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	c := createConversation(t, f.st, 5, "old")
	sendMessage(t, f.st, c.ID, "x")
	f.clock.Advance(time.Minute)
	got, err := f.st.SetConversationFlags(ctx, store.SetConversationFlagsParams{ID: c.ID, Title: ptr("Neuer Titel ✓"), Pinned: ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "Neuer Titel ✓" || !got.Pinned || got.Archived || got.Status != store.ConversationProcessing || got.MessageCount != 1 {
		t.Errorf("after rename and pin = %+v", got)
	}
	checkTime(t, "UpdatedAt", got.UpdatedAt, f.clock.Stamp())
	f.clock.Advance(time.Minute)
	got, err = f.st.SetConversationFlags(ctx, store.SetConversationFlagsParams{ID: c.ID, Pinned: ptr(false), Archived: ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "Neuer Titel ✓" || got.Pinned || !got.Archived {
		t.Errorf("after unpin and archive = %+v", got)
	}
	// Nothing to change: the row as it is, untouched.
	f.clock.Advance(time.Minute)
	same, err := f.st.SetConversationFlags(ctx, store.SetConversationFlagsParams{ID: c.ID})
	if err != nil || !sameConversation(same, got) {
		t.Errorf("empty change = %+v, %v; want %+v", same, err, got)
	}
	if _, err := f.st.SetConversationFlags(ctx, store.SetConversationFlagsParams{ID: c.ID + 1000, Pinned: ptr(true)}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown conversation: %v, want ErrNotFound", err)
	}
	if _, err := f.st.SetConversationFlags(ctx, store.SetConversationFlagsParams{ID: c.ID + 1000}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown conversation, nothing to change: %v, want ErrNotFound", err)
	}
	if _, err := f.st.SetConversationFlags(ctx, store.SetConversationFlagsParams{ID: c.ID, Title: ptr(strings.Repeat("x", store.MaxConversationTitleLen+1))}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("over-long title: %v, want ErrInvalid", err)
	}
}

func testChatMessagesPaging(t *testing.T, h harness) {
	f := h.setup(t)
	c := createConversation(t, f.st, 5, "t")
	var add []store.NewChatMessage
	for i := range 7 {
		add = append(add, userMsg(fmt.Sprint(i+1)))
	}
	changeConversation(t, f.st, store.ChangeConversationParams{ID: c.ID, From: []store.ConversationStatus{store.ConversationIdle}, To: store.ConversationIdle, KeepMessages: -1, Append: add})
	seqsOf := func(msgs []store.ChatMessage) []int {
		out := make([]int, len(msgs))
		for i, m := range msgs {
			out[i] = m.Seq
		}
		return out
	}
	if got := seqsOf(chatMessages(t, f.st, store.ListChatMessagesParams{ConversationID: c.ID, After: 2, Limit: 3})); !slices.Equal(got, []int{3, 4, 5}) {
		t.Errorf("page = %v", got)
	}
	if got := seqsOf(chatMessages(t, f.st, store.ListChatMessagesParams{ConversationID: c.ID, After: 5})); !slices.Equal(got, []int{6, 7}) {
		t.Errorf("after 5 = %v", got)
	}
	if got := chatMessages(t, f.st, store.ListChatMessagesParams{ConversationID: c.ID, After: 7}); len(got) != 0 {
		t.Errorf("after the last = %v", got)
	}
	if got := chatMessages(t, f.st, store.ListChatMessagesParams{ConversationID: c.ID + 1000}); len(got) != 0 {
		t.Errorf("unknown conversation = %v", got)
	}
}

func testChatReconcile(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	decided := func(runID string, d store.Decision) store.Conversation {
		c := createConversation(t, f.st, 5, "t")
		return changeConversation(t, f.st, store.ChangeConversationParams{
			ID: c.ID, From: []store.ConversationStatus{store.ConversationIdle}, To: store.ConversationProcessing, KeepMessages: -1,
			State: store.ConversationState{RunID: runID, Decision: d, DecisionDigest: "dg"},
		})
	}
	older := decided("run-1", store.DecisionApprove)
	f.clock.Advance(time.Second)
	old := decided("run-2", store.DecisionInput)
	decided("", store.DecisionDeny) // no run
	decided("run-3", store.DecisionNone)
	sendMessage(t, f.st, createConversation(t, f.st, 5, "plain").ID, "x")
	locked := decided("run-4", store.DecisionApprove)
	if _, err := f.st.ClaimNextConversation(ctx, store.ClaimConversationParams{ID: locked.ID, ClaimID: "w"}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Minute)
	decided("run-5", store.DecisionApprove) // within the grace
	grace := f.clock.Now().Add(-45 * time.Second)

	got, err := f.st.ReconcileCandidates(ctx, grace, 10)
	if err != nil {
		t.Fatal(err)
	}
	if ids := conversationIDs(got); !slices.Equal(ids, []int64{older.ID, old.ID}) {
		t.Errorf("candidates = %v, want %v", ids, []int64{older.ID, old.ID})
	}
	if got, err := f.st.ReconcileCandidates(ctx, grace, 1); err != nil || len(got) != 1 || got[0].ID != older.ID {
		t.Errorf("limit 1 = %v, %v", conversationIDs(got), err)
	}
	// The cut-off is exclusive: a row exactly at it is not older.
	if got, err := f.st.ReconcileCandidates(ctx, old.UpdatedAt, 10); err != nil || !slices.Equal(conversationIDs(got), []int64{older.ID}) {
		t.Errorf("cut-off at a row's time = %v, %v", conversationIDs(got), err)
	}
}

// testChatStranded: the conversations waiting on a run that no longer
// waits for the same are listed, oldest first; those whose run still
// waits, or is queued or running, are not.
func testChatStranded(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	run := func(id string, to store.RunStatus) {
		p := newRun(id, "editor")
		createRun(t, f.st, p)
		var err error
		switch {
		case to.Waiting():
			_, err = f.st.SuspendRun(ctx, store.SuspendRunParams{ID: id, LeaseOwner: p.LeaseOwner, Status: to, SuspendedState: "sealed"})
		case to.Terminal():
			_, err = f.st.SettleRun(ctx, store.SettleRunParams{ID: id, LeaseOwner: p.LeaseOwner, Status: to, Outcome: string(to)})
		}
		if err != nil {
			t.Fatalf("run %s to %s: %v", id, to, err)
		}
	}
	waiting := func(runID string, st store.ConversationStatus) store.Conversation {
		c := createConversation(t, f.st, 5, "t")
		f.clock.Advance(time.Second)
		return changeConversation(t, f.st, store.ChangeConversationParams{
			ID: c.ID, From: []store.ConversationStatus{store.ConversationIdle}, To: st, KeepMessages: -1,
			State: store.ConversationState{RunID: runID},
		})
	}
	run("r-appr", store.RunWaitingForApproval)
	run("r-input", store.RunWaitingForInput)
	run("r-running", store.RunRunning)
	run("r-done", store.RunCompleted)
	run("r-cancelled", store.RunCancelled)
	waiting("r-appr", store.ConversationAwaitingApproval)    // still waits: no
	waiting("r-input", store.ConversationAwaitingInput)      // still waits: no
	waiting("r-running", store.ConversationAwaitingApproval) // decided, running: no
	done := waiting("r-done", store.ConversationAwaitingApproval)
	other := waiting("r-input", store.ConversationAwaitingApproval) // now waits for input
	gone := waiting("r-gone", store.ConversationAwaitingInput)
	cancelled := waiting("r-cancelled", store.ConversationAwaitingInput)
	idle := createConversation(t, f.st, 5, "idle")
	sendMessage(t, f.st, idle.ID, "x")

	got, err := f.st.StrandedConversations(ctx, 10)
	want := []int64{done.ID, other.ID, gone.ID, cancelled.ID}
	if err != nil || !slices.Equal(conversationIDs(got), want) {
		t.Errorf("stranded = %v, %v, want %v", conversationIDs(got), err, want)
	}
	if got, err := f.st.StrandedConversations(ctx, 1); err != nil || !slices.Equal(conversationIDs(got), want[:1]) {
		t.Errorf("limit 1 = %v, %v", conversationIDs(got), err)
	}
	if _, err := f.st.StrandedConversations(ctx, 0); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("limit 0: err = %v, want ErrInvalid", err)
	}
}

// testChatChangeGuardedByRun: a change naming a run applies only while
// the conversation is about that run.
func testChatChangeGuardedByRun(t *testing.T, h harness) {
	f := h.setup(t)
	c := createConversation(t, f.st, 5, "t")
	c = changeConversation(t, f.st, store.ChangeConversationParams{
		ID: c.ID, From: []store.ConversationStatus{store.ConversationIdle}, To: store.ConversationAwaitingApproval,
		KeepMessages: -1, State: store.ConversationState{RunID: "run-b"},
	})
	_, err := f.st.ChangeConversation(t.Context(), store.ChangeConversationParams{
		ID: c.ID, From: []store.ConversationStatus{store.ConversationAwaitingApproval}, RunID: "run-a",
		To: store.ConversationIdle, KeepMessages: -1, Append: []store.NewChatMessage{assistantMsg("the answer of run-a")},
	})
	if !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), "run-a") {
		t.Errorf("a change about another run: err = %v, want ErrConflict naming run-a", err)
	}
	if got := getConversation(t, f.st, c.ID); got.Status != store.ConversationAwaitingApproval || got.MessageCount != 0 {
		t.Errorf("after the refused change: %+v", got)
	}
	got := changeConversation(t, f.st, store.ChangeConversationParams{
		ID: c.ID, From: []store.ConversationStatus{store.ConversationAwaitingApproval}, RunID: "run-b",
		To: store.ConversationIdle, KeepMessages: -1, Append: []store.NewChatMessage{assistantMsg("the answer of run-b")},
	})
	if got.Status != store.ConversationIdle || got.MessageCount != 1 || got.RunID != "" {
		t.Errorf("the change about its run: %+v", got)
	}
}

func testChatFailStale(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	withState := store.ConversationState{RunID: "run-1", Decision: store.DecisionApprove, DecisionDigest: "dg", DecisionBy: "a",
		DecisionReason: "r", PendingInput: `{"a":1}`, ErrorCode: "handBack.staleTurn"}
	processing := createConversation(t, f.st, 5, "processing")
	changeConversation(t, f.st, store.ChangeConversationParams{ID: processing.ID, From: []store.ConversationStatus{store.ConversationIdle},
		To: store.ConversationProcessing, KeepMessages: -1, State: withState})
	locked := createConversation(t, f.st, 5, "locked")
	sendMessage(t, f.st, locked.ID, "x")
	if _, err := f.st.ClaimNextConversation(ctx, store.ClaimConversationParams{ID: locked.ID, ClaimID: "crashed"}); err != nil {
		t.Fatal(err)
	}
	idle := createConversation(t, f.st, 5, "idle")
	waiting := createConversation(t, f.st, 5, "waiting")
	changeConversation(t, f.st, store.ChangeConversationParams{ID: waiting.ID, From: []store.ConversationStatus{store.ConversationIdle},
		To: store.ConversationAwaitingApproval, KeepMessages: -1, State: store.ConversationState{RunID: "run-w"}})
	f.clock.Advance(4 * time.Minute)
	fresh := createConversation(t, f.st, 5, "fresh")
	sendMessage(t, f.st, fresh.ID, "x")
	f.clock.Advance(2 * time.Minute)

	params := store.FailStaleConversationsParams{Before: f.clock.Now().Add(-5 * time.Minute), ErrorMessage: "Nach 5 Minuten abgebrochen.", ErrorCode: "timedOut"}
	n, err := f.st.FailStaleConversations(ctx, params)
	if err != nil || n != 2 {
		t.Fatalf("FailStaleConversations = %d, %v; want 2", n, err)
	}
	wantState := store.ConversationState{ErrorMessage: params.ErrorMessage, ErrorCode: "timedOut"}
	for _, id := range []int64{processing.ID, locked.ID} {
		c := getConversation(t, f.st, id)
		if c.Status != store.ConversationFailed || c.ConversationState != wantState {
			t.Errorf("stale %d = %+v, want failed with only the error", id, c)
		}
		checkTime(t, "UpdatedAt of a failed row", c.UpdatedAt, f.clock.Stamp())
	}
	for id, st := range map[int64]store.ConversationStatus{idle.ID: store.ConversationIdle, waiting.ID: store.ConversationAwaitingApproval, fresh.ID: store.ConversationProcessing} {
		if c := getConversation(t, f.st, id); c.Status != st {
			t.Errorf("conversation %d = %s, want it left %s", id, c.Status, st)
		}
	}
	// The crashed consumer, should it wake, finds its claim gone.
	_, err = f.st.ChangeConversation(ctx, store.ChangeConversationParams{ID: locked.ID, From: []store.ConversationStatus{store.ConversationLocked},
		ClaimID: "crashed", To: store.ConversationIdle, KeepMessages: -1, Append: []store.NewChatMessage{assistantMsg("late")}})
	if !errors.Is(err, store.ErrConflict) {
		t.Errorf("late write of a failed turn: %v, want ErrConflict", err)
	}
	if n, err := f.st.FailStaleConversations(ctx, params); err != nil || n != 0 {
		t.Errorf("second run = %d, %v; want 0", n, err)
	}
}

func testChatArchiveDelete(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	day := 24 * time.Hour
	oldIdle := createConversation(t, f.st, 5, "old idle")
	changeConversation(t, f.st, store.ChangeConversationParams{ID: oldIdle.ID, From: []store.ConversationStatus{store.ConversationIdle},
		To: store.ConversationIdle, KeepMessages: -1, Append: []store.NewChatMessage{userMsg("q"), assistantMsg("a")}})
	oldPinned := createConversation(t, f.st, 5, "old pinned")
	if _, err := f.st.SetConversationFlags(ctx, store.SetConversationFlagsParams{ID: oldPinned.ID, Pinned: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	oldFailed := createConversation(t, f.st, 5, "old failed")
	changeConversation(t, f.st, store.ChangeConversationParams{ID: oldFailed.ID, From: []store.ConversationStatus{store.ConversationIdle},
		To: store.ConversationFailed, KeepMessages: -1})
	f.clock.Advance(20 * day)
	recent := createConversation(t, f.st, 5, "recent")
	f.clock.Advance(11 * day)

	archivedAt := f.clock.Stamp()
	n, err := f.st.ArchiveIdleConversations(ctx, f.clock.Now().Add(-30*day))
	if err != nil || n != 1 {
		t.Fatalf("ArchiveIdleConversations = %d, %v; want 1", n, err)
	}
	got := getConversation(t, f.st, oldIdle.ID)
	if !got.Archived {
		t.Errorf("old idle not archived: %+v", got)
	}
	checkTime(t, "UpdatedAt of an archived row", got.UpdatedAt, archivedAt)
	for _, id := range []int64{oldPinned.ID, oldFailed.ID, recent.ID} {
		if c := getConversation(t, f.st, id); c.Archived {
			t.Errorf("%q was archived", c.Title)
		}
	}
	if n, err := f.st.ArchiveIdleConversations(ctx, f.clock.Now().Add(-30*day)); err != nil || n != 0 {
		t.Errorf("second archive = %d, %v; want 0", n, err)
	}

	// Deletion counts from the archiving: 60 days on it is not yet due.
	f.clock.Advance(60 * day)
	if n, err := f.st.DeleteArchivedConversations(ctx, f.clock.Now().Add(-90*day)); err != nil || n != 0 {
		t.Errorf("early delete = %d, %v; want 0", n, err)
	}
	if _, err := f.st.SetConversationFlags(ctx, store.SetConversationFlagsParams{ID: recent.ID, Archived: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(31 * day)
	n, err = f.st.DeleteArchivedConversations(ctx, f.clock.Now().Add(-90*day))
	if err != nil || n != 1 {
		t.Fatalf("DeleteArchivedConversations = %d, %v; want 1", n, err)
	}
	if _, err := f.st.Conversation(ctx, oldIdle.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleted conversation: %v, want ErrNotFound", err)
	}
	if _, err := f.st.Conversation(ctx, recent.ID); err != nil {
		t.Errorf("recently archived conversation: %v", err)
	}
	// Its messages went with it.
	if n := countRows(t, f.dsn, `SELECT COUNT(*) FROM chat_messages WHERE conversation_id = $1`, oldIdle.ID); n != 0 {
		t.Errorf("%d messages of a deleted conversation remain", n)
	}
}

// countRows runs a COUNT query on the suite's database through a
// connection of its own, to see what the store's interface cannot show.
func countRows(t *testing.T, dsn, q string, args ...any) int {
	t.Helper()
	var n int
	if err := rawDB(t, dsn).QueryRowContext(t.Context(), q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// rawDB opens the store's database directly, as an operator's SQL client
// would; it is closed when t ends.
func rawDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	type driver interface {
		Writer() *sql.DB
		Close() error
	}
	var d driver
	var err error
	if strings.HasPrefix(dsn, "postgres") {
		d, err = pgstore.Open(t.Context(), dsn)
	} else {
		d, err = sqlitestore.Open(t.Context(), strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "//"))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d.Writer()
}

func testChatInvalid(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	c := createConversation(t, f.st, 5, "t")
	before := getConversation(t, f.st, c.ID)
	idle := []store.ConversationStatus{store.ConversationIdle}
	chg := func(mod func(p *store.ChangeConversationParams)) func() error {
		return func() error {
			p := store.ChangeConversationParams{ID: c.ID, From: idle, To: store.ConversationProcessing, KeepMessages: -1,
				Append: []store.NewChatMessage{userMsg("ok")}}
			mod(&p)
			_, err := f.st.ChangeConversation(ctx, p)
			return err
		}
	}
	many := make([]store.NewChatMessage, store.MaxChatMessagesPerChange+1)
	for i := range many {
		many[i] = userMsg("m")
	}
	past := f.clock.Now().Add(-time.Hour)
	cases := []struct {
		name string
		call func() error
	}{
		{"create: no owner uid", func() error {
			_, err := f.st.CreateConversation(ctx, store.CreateConversationParams{OwnerUsername: "u"})
			return err
		}},
		{"create: no owner name", func() error {
			_, err := f.st.CreateConversation(ctx, store.CreateConversationParams{OwnerUID: 1})
			return err
		}},
		{"create: long title", func() error {
			_, err := f.st.CreateConversation(ctx, store.CreateConversationParams{OwnerUID: 1, OwnerUsername: "u", Title: strings.Repeat("t", store.MaxConversationTitleLen+1)})
			return err
		}},
		{"create: title with NUL", func() error {
			_, err := f.st.CreateConversation(ctx, store.CreateConversationParams{OwnerUID: 1, OwnerUsername: "u", Title: "a\x00b"})
			return err
		}},
		{"get: id 0", func() error { _, err := f.st.Conversation(ctx, 0); return err }},
		{"change: id 0", chg(func(p *store.ChangeConversationParams) { p.ID = 0 })},
		{"change: no From", chg(func(p *store.ChangeConversationParams) { p.From = nil })},
		{"change: unknown From", chg(func(p *store.ChangeConversationParams) { p.From = []store.ConversationStatus{"idle", "tool_loop"} })},
		{"change: unknown To", chg(func(p *store.ChangeConversationParams) { p.To = "done" })},
		{"change: empty To", chg(func(p *store.ChangeConversationParams) { p.To = "" })},
		{"change: KeepMessages -2", chg(func(p *store.ChangeConversationParams) { p.KeepMessages = -2 })},
		{"change: unknown decision", chg(func(p *store.ChangeConversationParams) { p.State.Decision = "maybe" })},
		{"change: pending input not JSON", chg(func(p *store.ChangeConversationParams) { p.State.PendingInput = "{" })},
		{"change: pending input not an object", chg(func(p *store.ChangeConversationParams) { p.State.PendingInput = `["a"]` })},
		{"change: long error", chg(func(p *store.ChangeConversationParams) {
			p.State.ErrorMessage = strings.Repeat("é", store.MaxConversationErrorLen+1)
		})},
		{"change: error not UTF-8", chg(func(p *store.ChangeConversationParams) { p.State.ErrorMessage = "\xff" })},
		{"change: long error code", chg(func(p *store.ChangeConversationParams) { p.State.ErrorCode = strings.Repeat("c", store.MaxNameLen+1) })},
		{"change: long run id", chg(func(p *store.ChangeConversationParams) { p.State.RunID = strings.Repeat("r", store.MaxNameLen+1) })},
		{"change: too many messages", chg(func(p *store.ChangeConversationParams) { p.Append = many })},
		{"change: long message", chg(func(p *store.ChangeConversationParams) {
			p.Append = []store.NewChatMessage{userMsg(strings.Repeat("x", store.MaxChatMessageLen+1))}
		})},
		{"change: message with NUL", chg(func(p *store.ChangeConversationParams) { p.Append = []store.NewChatMessage{userMsg("a\x00")} })},
		{"change: unknown role", chg(func(p *store.ChangeConversationParams) {
			p.Append = []store.NewChatMessage{{Role: "system", Content: "x"}}
		})},
		{"change: empty role", chg(func(p *store.ChangeConversationParams) { p.Append = []store.NewChatMessage{{Content: "x"}} })},
		{"flags: id 0", func() error {
			_, err := f.st.SetConversationFlags(ctx, store.SetConversationFlagsParams{Pinned: ptr(true)})
			return err
		}},
		{"claim: no claim id", func() error {
			_, err := f.st.ClaimNextConversation(ctx, store.ClaimConversationParams{})
			return err
		}},
		{"claim: negative id", func() error {
			_, err := f.st.ClaimNextConversation(ctx, store.ClaimConversationParams{ID: -1, ClaimID: "w"})
			return err
		}},
		{"list: limit", func() error {
			_, err := f.st.Conversations(ctx, store.ListConversationsParams{Limit: store.MaxConversationLimit + 1})
			return err
		}},
		{"list: negative offset", func() error {
			_, err := f.st.Conversations(ctx, store.ListConversationsParams{Offset: -1})
			return err
		}},
		{"count: owner 0", func() error { _, _, err := f.st.CountConversations(ctx, 0); return err }},
		{"messages: id 0", func() error {
			_, err := f.st.ChatMessages(ctx, store.ListChatMessagesParams{})
			return err
		}},
		{"messages: negative after", func() error {
			_, err := f.st.ChatMessages(ctx, store.ListChatMessagesParams{ConversationID: c.ID, After: -1})
			return err
		}},
		{"messages: limit", func() error {
			_, err := f.st.ChatMessages(ctx, store.ListChatMessagesParams{ConversationID: c.ID, Limit: store.MaxChatMessageLimit + 1})
			return err
		}},
		{"reconcile: zero time", func() error { _, err := f.st.ReconcileCandidates(ctx, time.Time{}, 10); return err }},
		{"reconcile: limit 0", func() error { _, err := f.st.ReconcileCandidates(ctx, past, 0); return err }},
		{"fail stale: zero time", func() error {
			_, err := f.st.FailStaleConversations(ctx, store.FailStaleConversationsParams{ErrorMessage: "x"})
			return err
		}},
		{"fail stale: long error", func() error {
			_, err := f.st.FailStaleConversations(ctx, store.FailStaleConversationsParams{Before: past, ErrorMessage: strings.Repeat("x", store.MaxConversationErrorLen+1)})
			return err
		}},
		{"archive: zero time", func() error { _, err := f.st.ArchiveIdleConversations(ctx, time.Time{}); return err }},
		{"delete: zero time", func() error { _, err := f.st.DeleteArchivedConversations(ctx, time.Time{}); return err }},
	}
	for _, tc := range cases {
		err := tc.call()
		if !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", tc.name, err)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "store: ") {
			t.Errorf("%s: %q is not one sentence", tc.name, msg)
		}
	}
	if got := getConversation(t, f.st, c.ID); !sameConversation(got, before) {
		t.Errorf("refused calls wrote: %+v, want %+v", got, before)
	}
	if msgs := chatMessages(t, f.st, store.ListChatMessagesParams{ConversationID: c.ID}); len(msgs) != 0 {
		t.Errorf("refused calls stored messages: %q", transcript(msgs))
	}
	// Exactly at the bounds is fine.
	changeConversation(t, f.st, store.ChangeConversationParams{ID: c.ID, From: idle, To: store.ConversationFailed, KeepMessages: -1,
		State:  store.ConversationState{ErrorMessage: strings.Repeat("é", store.MaxConversationErrorLen)},
		Append: []store.NewChatMessage{userMsg(strings.Repeat("x", store.MaxChatMessageLen)), {Role: store.ChatRoleAssistant}}})
}
