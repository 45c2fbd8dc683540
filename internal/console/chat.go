package console

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/chat"
	"github.com/t3agent/t3agent/internal/store"
)

type chatView struct {
	List []listItem
	// Available is whether the chat can answer; Reason its code when not.
	Available bool
	Reason    string
	// Conv is the open conversation, nil on the index.
	Conv *convView
}

type listItem struct {
	ID     int64
	Title  string
	Status store.ConversationStatus
	Pinned bool
	Open   bool
}

// convView is one conversation as the page shows it.
type convView struct {
	ID     int64
	Title  string
	Status store.ConversationStatus
	// Busy: the assistant works on it; the part polls as well as
	// listening to the stream.
	Busy      bool
	Messages  []message
	Steps     []step
	Card      *cardView
	RunID     string
	Resumable bool
	// ErrorKey is the label of a failure or a hand-back; ErrorText the
	// sanitised sentence of a failure, when there is one.
	ErrorKey  string
	ErrorText string
	// StreamURL is the conversation's event stream, "" to poll only.
	StreamURL string
	// State identifies the state rendered (the fields of the stream's
	// view the fragment shows); the page script skips a stream event that
	// announces the same state.
	State string
	Page  *pageData
}

// message is a chat message with its labels looked up: a long
// conversation renders without a label call per message.
type message struct {
	Seq     int
	Role    store.ChatRole
	Who     string
	Beside  bool
	Notice  string
	Content string
}

func messagesOf(q *req, ms []store.ChatMessage) []message {
	who := map[store.ChatRole]string{}
	beside := q.t("chat.besideToolCall")
	out := make([]message, len(ms))
	for i, m := range ms {
		w, ok := who[m.Role]
		if !ok {
			w = q.t("role." + string(m.Role))
			who[m.Role] = w
		}
		if m.BesideToolCall {
			w += " · " + beside
		}
		out[i] = message{Seq: m.Seq, Role: m.Role, Who: w, Beside: m.BesideToolCall, Content: m.Content}
		if m.Notice != "" {
			out[i].Notice = q.t(codeKey(m.Notice))
		}
	}
	return out
}

// Trigger is what refreshes the fragment: a change on the stream, and
// while the assistant works a poll as well (the fallback when the stream
// cannot connect); "" for nothing.
func (v *convView) Trigger() string {
	var t []string
	if v.StreamURL != "" {
		t = append(t, "sse:conversation")
	}
	if v.Busy {
		t = append(t, "every 2s")
	}
	return strings.Join(t, ", ")
}

// chatReady refuses the chat pages on a server without a chat.
func (c *Console) chatReady() error {
	if c.p.Chat == nil {
		return &pageError{http.StatusServiceUnavailable, "error.chatUnavailable"}
	}
	return nil
}

func convID(q *req) (int64, error) {
	id, err := strconv.ParseInt(q.r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, notFound()
	}
	return id, nil
}

// chatPage renders the chat with the list and, when open > 0, that
// conversation.
func (c *Console) chatPage(q *req, open int64) error {
	if err := c.chatReady(); err != nil {
		return err
	}
	ctx := q.r.Context()
	a, err := c.p.Chat.Availability(ctx, q.user())
	if err != nil {
		return err
	}
	vs, err := c.p.Chat.List(ctx, q.user(), false)
	if err != nil {
		return err
	}
	v := chatView{Available: a.Available, Reason: string(a.Reason)}
	for _, cv := range vs {
		cc := cv.Conversation
		v.List = append(v.List, listItem{ID: cc.ID, Title: cc.Title, Status: cc.Status, Pinned: cc.Pinned, Open: cc.ID == open})
	}
	d := &pageData{Title: q.t("chat.title"), Data: &v}
	if open > 0 {
		conv, err := c.conversation(q, open)
		if err != nil {
			return err
		}
		conv.Page = d
		v.Conv = conv
		if conv.Title != "" {
			d.Title = conv.Title
		}
	}
	c.render(q, http.StatusOK, "chat.html", d)
	return nil
}

// conversation reads a conversation with its messages, its card or
// question, and the tool steps of the run it waits on.
func (c *Console) conversation(q *req, id int64) (*convView, error) {
	ctx := q.r.Context()
	p, err := c.p.Chat.Messages(ctx, q.user(), id, 0)
	if err != nil {
		return nil, err
	}
	cc := p.Conversation
	v := &convView{ID: cc.ID, Title: cc.Title, Status: cc.Status, Messages: messagesOf(q, p.Messages), RunID: cc.RunID, Resumable: p.Resumable,
		Busy: cc.Status == store.ConversationProcessing || cc.Status == store.ConversationLocked}
	// The same fields, in the same order, as console.js reads them from
	// the stream's view (the API's JSON of the conversation).
	v.State = strings.Join([]string{string(cc.Status), cc.UpdatedAt.UTC().Format(time.RFC3339Nano), strconv.Itoa(p.TotalCount),
		cc.Title, cc.ErrorCode, cc.ErrorMessage, strconv.FormatBool(cc.HasPendingDecision()), cc.RunID}, "|")
	if cc.ErrorCode != "" {
		v.ErrorKey = codeKey(cc.ErrorCode)
	}
	// The sanitised sentence says what failed; the code's label says it
	// in the reader's language, so both show.
	v.ErrorText = cc.ErrorMessage
	if c.p.StreamPath != "" {
		v.StreamURL = fmt.Sprintf(c.p.StreamPath, cc.ID)
	}
	if p.Pending != nil {
		// The owner answers the questions of their conversation; the card
		// of an approval offers what the chat's rights allow.
		input := p.Pending.Input != ""
		v.Card = c.cardOf(ctx, *p.Pending, fmt.Sprintf("/chat/%d", cc.ID), input || p.MayDecide)
		if !input {
			v.Card.MayApprove, v.Card.MayDeny = p.MayApprove, p.MayDeny
			if p.DecideReason != "" {
				v.Card.DecideKey = codeKey(string(p.DecideReason))
			}
		}
		v.Card.Target = "#conv"
	}
	if cc.RunID != "" {
		evs, err := c.p.Runtime.Events(ctx, q.user(), agent.Access{}, cc.RunID, -1)
		if err != nil {
			c.p.Logger.Warn("console: the events of a conversation's run cannot be read", "conversation", id, "run", cc.RunID, "err", err)
		} else {
			v.Steps = stepsOf(evs)
		}
	}
	return v, nil
}

func (c *Console) chatIndex(q *req) error { return c.chatPage(q, 0) }

func (c *Console) chatShow(q *req) error {
	id, err := convID(q)
	if err != nil {
		return err
	}
	return c.chatPage(q, id)
}

// chatPart is the conversation fragment htmx swaps in when the stream
// says it changed, or on its polling fallback.
func (c *Console) chatPart(q *req) error {
	if err := c.chatReady(); err != nil {
		return err
	}
	id, err := convID(q)
	if err != nil {
		return err
	}
	return c.renderConv(q, id, "")
}

// renderConv answers a conversation: its fragment for htmx, else the
// page (a redirect after a post). formError is shown under the question.
func (c *Console) renderConv(q *req, id int64, formError string) error {
	if !q.htmx && q.r.Method == http.MethodPost {
		c.redirect(q, fmt.Sprintf("/chat/%d", id))
		return nil
	}
	if !q.htmx {
		return c.chatPage(q, id)
	}
	conv, err := c.conversation(q, id)
	if err != nil {
		return err
	}
	d := &pageData{Title: conv.Title, Data: &chatView{Conv: conv}}
	conv.Page = d
	if formError != "" && conv.Card != nil {
		conv.Card.FormError = formError
	}
	c.render(q, http.StatusOK, "chat.html", d)
	return nil
}

func (c *Console) chatCreate(q *req) error {
	if err := c.chatReady(); err != nil {
		return err
	}
	v, err := c.p.Chat.Create(q.r.Context(), q.user())
	if err != nil {
		return err
	}
	c.redirect(q, fmt.Sprintf("/chat/%d", v.Conversation.ID))
	return nil
}

// chatAction runs one change of a conversation and answers the
// conversation.
func (c *Console) chatAction(q *req, do func(id int64) error) error {
	if err := c.chatReady(); err != nil {
		return err
	}
	id, err := convID(q)
	if err != nil {
		return err
	}
	if err := do(id); err != nil {
		return err
	}
	return c.renderConv(q, id, "")
}

func (c *Console) chatSend(q *req) error {
	return c.chatAction(q, func(id int64) error {
		_, err := c.p.Chat.Send(q.r.Context(), q.user(), chat.SendParams{ID: id, Content: q.r.PostForm.Get("content")})
		return err
	})
}

func (c *Console) chatRetry(q *req) error {
	return c.chatAction(q, func(id int64) error {
		_, err := c.p.Chat.Retry(q.r.Context(), q.user(), id)
		return err
	})
}

func (c *Console) chatArchive(q *req) error {
	if err := c.chatReady(); err != nil {
		return err
	}
	id, err := convID(q)
	if err != nil {
		return err
	}
	if _, err := c.p.Chat.Archive(q.r.Context(), q.user(), id); err != nil {
		return err
	}
	c.redirect(q, "/chat")
	return nil
}

// decision reads the approve/deny button.
func decision(q *req) (bool, error) {
	switch q.r.PostForm.Get("decision") {
	case "approve":
		return true, nil
	case "deny":
		return false, nil
	}
	return false, &pageError{http.StatusBadRequest, "error.form"}
}

func (c *Console) chatDecide(q *req) error {
	return c.chatAction(q, func(id int64) error {
		approve, err := decision(q)
		if err != nil {
			return err
		}
		_, err = c.p.Chat.Decide(q.r.Context(), q.user(), chat.DecideParams{ID: id, Approve: approve,
			Digest: q.r.PostForm.Get("digest"), Reason: q.r.PostForm.Get("reason")})
		return err
	})
}

// chatInput answers the question with the posted form, read against the
// pending question's schema; a form that does not fit is shown again.
func (c *Console) chatInput(q *req) error {
	if err := c.chatReady(); err != nil {
		return err
	}
	id, err := convID(q)
	if err != nil {
		return err
	}
	ctx := q.r.Context()
	p, err := c.p.Chat.Messages(ctx, q.user(), id, math.MaxInt32)
	if err != nil {
		return err
	}
	if p.Pending == nil || p.Pending.Input == "" {
		return &chat.Error{Code: chat.CodeNotAwaitingInput, Status: http.StatusConflict}
	}
	fields, data, ok := answerOf(p.Pending.Schema, q.r.PostForm)
	if !ok {
		return c.inputRefused(q, fmt.Sprintf("/chat/%d", id), *p.Pending, fields, true)
	}
	if _, err := c.p.Chat.Input(ctx, q.user(), chat.InputParams{ID: id, Digest: q.r.PostForm.Get("digest"), Data: data}); err != nil {
		return err
	}
	return c.renderConv(q, id, "")
}

// inputRefused shows the question again with the posted values and
// what does not fit (422).
func (c *Console) inputRefused(q *req, action string, it agent.InboxItem, fields []field, may bool) error {
	card := c.cardOf(q.r.Context(), it, action, may)
	if q.htmx {
		card.Target = "#conv"
	}
	card.Fields, card.FormError = fields, "form.invalid"
	d := &pageData{Title: q.t("form.title"), Data: card}
	if q.htmx {
		q.w.Header().Set("HX-Retarget", "#card")
		q.w.Header().Set("HX-Reswap", "outerHTML")
	}
	c.render(q, http.StatusUnprocessableEntity, "input.html", d)
	return nil
}

// codeKey is the label key of a chat code: notices are notice.<code>,
// everything else (hand-backs included) error.<code>.
func codeKey(code string) string {
	if code == string(chat.NoticeInputAnswer) || code == string(chat.NoticeDenyReason) {
		return "notice." + code
	}
	return "error." + code
}
