package web

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"time"

	"github.com/t3agent/t3agent/internal/chat"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Chat is what the API needs of the chat; *chat.Service implements it.
// Refusals are *chat.Error. It must be safe for concurrent use.
type Chat interface {
	Availability(ctx context.Context, actor *typo3.BackendUser) (chat.Availability, error)
	Create(ctx context.Context, actor *typo3.BackendUser) (chat.View, error)
	List(ctx context.Context, actor *typo3.BackendUser, includeArchived bool) ([]chat.View, error)
	Messages(ctx context.Context, actor *typo3.BackendUser, id int64, after int) (chat.Page, error)
	Send(ctx context.Context, actor *typo3.BackendUser, p chat.SendParams) (chat.View, error)
	Edit(ctx context.Context, actor *typo3.BackendUser, p chat.EditParams) (chat.View, error)
	Retry(ctx context.Context, actor *typo3.BackendUser, id int64) (chat.View, error)
	Decide(ctx context.Context, actor *typo3.BackendUser, p chat.DecideParams) (chat.View, error)
	Input(ctx context.Context, actor *typo3.BackendUser, p chat.InputParams) (chat.View, error)
	Archive(ctx context.Context, actor *typo3.BackendUser, id int64) (chat.View, error)
	Pin(ctx context.Context, actor *typo3.BackendUser, id int64, pinned bool) (chat.View, error)
	Rename(ctx context.Context, actor *typo3.BackendUser, id int64, title string) (chat.View, error)
	// Changes signals the changes this process makes to a conversation;
	// cancel unsubscribes.
	Changes(id int64) (<-chan struct{}, func())
	// Follow moves on the conversations whose run was decided, answered
	// or cancelled outside the chat; the runs routes call it after each.
	Follow(ctx context.Context) (int, error)
}

// conversationJSON is a conversation as the API shows it. The claim,
// the recorded decision's digest and the pending answer stay inside.
type conversationJSON struct {
	ID     int64                    `json:"id"`
	Title  string                   `json:"title"`
	Status store.ConversationStatus `json:"status"`
	Task   string                   `json:"task,omitempty"`
	// RunID is the agent run the conversation waits on or decided.
	RunID string `json:"runId,omitempty"`
	// ErrorCode is a label code (error.<code>); ErrorMessage the
	// sanitised sentence of a failure without one.
	ErrorCode    string `json:"errorCode,omitempty"`
	ErrorMessage string `json:"errorMessage,omitempty"`
	// DecisionPending: a recorded decision or answer is not carried out yet.
	DecisionPending bool `json:"decisionPending"`
	Pinned          bool `json:"pinned"`
	Archived        bool `json:"archived"`
	MessageCount    int  `json:"messageCount"`
	Resumable       bool `json:"resumable"`
	// MayDecide: the reader may approve or deny the card; MayApprove
	// and MayDeny say which, DecideReason (a label code, error.<code>)
	// why not approve — secondApproverRequired when the configuration
	// wants a second person and the reader started the run.
	MayDecide    bool      `json:"mayDecide"`
	MayApprove   bool      `json:"mayApprove"`
	MayDeny      bool      `json:"mayDeny"`
	DecideReason string    `json:"decideReason,omitempty"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`
}

func conversationOf(v chat.View) conversationJSON {
	c := v.Conversation
	return conversationJSON{
		ID: c.ID, Title: c.Title, Status: c.Status, Task: c.Task, RunID: c.RunID,
		ErrorCode: c.ErrorCode, ErrorMessage: c.ErrorMessage, DecisionPending: c.HasPendingDecision(),
		Pinned: c.Pinned, Archived: c.Archived, MessageCount: c.MessageCount,
		Resumable: v.Resumable, MayDecide: v.MayDecide, MayApprove: v.MayApprove, MayDeny: v.MayDeny,
		DecideReason: string(v.DecideReason), CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC(),
	}
}

type messageJSON struct {
	Seq     int            `json:"seq"`
	Role    store.ChatRole `json:"role"`
	Content string         `json:"content"`
	// BesideToolCall marks text the model wrote beside a tool call.
	BesideToolCall bool `json:"besideToolCall,omitempty"`
	// Notice is a label code (notice.<code>) shown with the message.
	Notice    string    `json:"notice,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

// pageJSON is a conversation with messages and the card or question it
// waits on.
type pageJSON struct {
	Conversation conversationJSON `json:"conversation"`
	Messages     []messageJSON    `json:"messages"`
	TotalCount   int              `json:"totalCount"`
	Pending      *pendingJSON     `json:"pending"`
}

func pageOf(p chat.Page) pageJSON {
	out := pageJSON{Conversation: conversationOf(p.View), Messages: make([]messageJSON, len(p.Messages)), TotalCount: p.TotalCount}
	for i, m := range p.Messages {
		out.Messages[i] = messageJSON{Seq: m.Seq, Role: m.Role, Content: m.Content, BesideToolCall: m.BesideToolCall,
			Notice: m.Notice, CreatedAt: m.CreatedAt.UTC()}
	}
	if p.Pending != nil {
		out.Pending = pendingOf(*p.Pending)
	}
	return out
}

// chatReady answers 503 chatUnavailable on a server without a chat.
func (s *Server) chatReady(w http.ResponseWriter, r *http.Request) bool {
	if s.api.Chat == nil {
		s.fail(w, r, apiErr(http.StatusServiceUnavailable, "chatUnavailable", nil))
		return false
	}
	return true
}

// chatID parses {id} and checks that the chat is there.
func (s *Server) chatID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	if !s.chatReady(w, r) {
		return 0, false
	}
	id, err := pathID(r, "id")
	if err != nil {
		s.fail(w, r, err)
		return 0, false
	}
	return id, true
}

// answerView answers a changed conversation, or the error.
func (s *Server) answerView(w http.ResponseWriter, r *http.Request, status int, v chat.View, err error) {
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, status, conversationOf(v))
}

func (s *Server) chatStatus(w http.ResponseWriter, r *http.Request, c *caller) {
	if !s.chatReady(w, r) {
		return
	}
	a, err := s.api.Chat.Availability(r.Context(), c.user)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

func (s *Server) chatList(w http.ResponseWriter, r *http.Request, c *caller) {
	if !s.chatReady(w, r) {
		return
	}
	archived, err := queryBool(r, "archived")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	vs, err := s.api.Chat.List(r.Context(), c.user, archived)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := make([]conversationJSON, len(vs))
	for i, v := range vs {
		out[i] = conversationOf(v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversations": out})
}

func (s *Server) chatCreate(w http.ResponseWriter, r *http.Request, c *caller) {
	if !s.chatReady(w, r) {
		return
	}
	var body struct{}
	if err := decode(r, &body, true); err != nil {
		s.fail(w, r, err)
		return
	}
	v, err := s.api.Chat.Create(r.Context(), c.user)
	s.answerView(w, r, http.StatusCreated, v, err)
}

// chatView reads a conversation without its messages, with its card or
// question: the conversation route and the stream.
func (s *Server) chatView(ctx context.Context, c *caller, id int64) (chat.Page, error) {
	return s.api.Chat.Messages(ctx, c.user, id, math.MaxInt32)
}

// chatShow is the conversation with the card or question it waits on,
// without messages.
func (s *Server) chatShow(w http.ResponseWriter, r *http.Request, c *caller) {
	id, ok := s.chatID(w, r)
	if !ok {
		return
	}
	p, err := s.chatView(r.Context(), c, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := pageOf(p)
	out.Messages = []messageJSON{}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) chatMessages(w http.ResponseWriter, r *http.Request, c *caller) {
	id, ok := s.chatID(w, r)
	if !ok {
		return
	}
	after, err := queryInt(r, "after", 0, 0, math.MaxInt32)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p, err := s.api.Chat.Messages(r.Context(), c.user, id, int(after))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, pageOf(p))
}

type sendBody struct {
	Content *string `json:"content"`
}

func (s *Server) chatSend(w http.ResponseWriter, r *http.Request, c *caller) {
	id, ok := s.chatID(w, r)
	if !ok {
		return
	}
	var body sendBody
	if err := decode(r, &body, false); err != nil {
		s.fail(w, r, err)
		return
	}
	if body.Content == nil {
		s.fail(w, r, badRequest("The field content is required."))
		return
	}
	v, err := s.api.Chat.Send(r.Context(), c.user, chat.SendParams{ID: id, Content: *body.Content})
	s.answerView(w, r, http.StatusAccepted, v, err)
}

type editBody struct {
	Content         *string `json:"content"`
	ExpectedContent *string `json:"expectedContent"`
	MessageCount    *int    `json:"messageCount"`
}

func (s *Server) chatEdit(w http.ResponseWriter, r *http.Request, c *caller) {
	id, ok := s.chatID(w, r)
	if !ok {
		return
	}
	seq, err := pathID(r, "seq")
	if err != nil || seq > math.MaxInt32 {
		s.fail(w, r, badRequest("The seq in the path must be a positive whole number."))
		return
	}
	var body editBody
	if err := decode(r, &body, false); err != nil {
		s.fail(w, r, err)
		return
	}
	if body.Content == nil || body.ExpectedContent == nil || body.MessageCount == nil {
		s.fail(w, r, badRequest("The fields content, expectedContent and messageCount are required."))
		return
	}
	v, err := s.api.Chat.Edit(r.Context(), c.user, chat.EditParams{
		ID: id, Seq: int(seq), Content: *body.Content, ExpectedContent: *body.ExpectedContent, MessageCount: *body.MessageCount,
	})
	s.answerView(w, r, http.StatusAccepted, v, err)
}

func (s *Server) chatRetry(w http.ResponseWriter, r *http.Request, c *caller) {
	id, ok := s.chatID(w, r)
	if !ok {
		return
	}
	v, err := s.api.Chat.Retry(r.Context(), c.user, id)
	s.answerView(w, r, http.StatusAccepted, v, err)
}

func (s *Server) chatDecide(approve bool) func(http.ResponseWriter, *http.Request, *caller) {
	return func(w http.ResponseWriter, r *http.Request, c *caller) {
		id, ok := s.chatID(w, r)
		if !ok {
			return
		}
		var body decideBody
		if err := decode(r, &body, false); err != nil {
			s.fail(w, r, err)
			return
		}
		v, err := s.api.Chat.Decide(r.Context(), c.user, chat.DecideParams{ID: id, Approve: approve, Digest: body.Digest, Reason: body.Reason})
		s.answerView(w, r, http.StatusAccepted, v, err)
	}
}

func (s *Server) chatInput(w http.ResponseWriter, r *http.Request, c *caller) {
	id, ok := s.chatID(w, r)
	if !ok {
		return
	}
	var body inputBody
	if err := decode(r, &body, false); err != nil {
		s.fail(w, r, err)
		return
	}
	if !isObject(body.Data) {
		s.fail(w, r, badRequest("The field data must be a JSON object."))
		return
	}
	v, err := s.api.Chat.Input(r.Context(), c.user, chat.InputParams{ID: id, Digest: body.Digest, Data: body.Data})
	s.answerView(w, r, http.StatusAccepted, v, err)
}

func (s *Server) chatArchive(w http.ResponseWriter, r *http.Request, c *caller) {
	id, ok := s.chatID(w, r)
	if !ok {
		return
	}
	v, err := s.api.Chat.Archive(r.Context(), c.user, id)
	s.answerView(w, r, http.StatusOK, v, err)
}

type pinBody struct {
	Pinned *bool `json:"pinned"`
}

func (s *Server) chatPin(w http.ResponseWriter, r *http.Request, c *caller) {
	id, ok := s.chatID(w, r)
	if !ok {
		return
	}
	var body pinBody
	if err := decode(r, &body, false); err != nil {
		s.fail(w, r, err)
		return
	}
	if body.Pinned == nil {
		s.fail(w, r, badRequest("The field pinned is required."))
		return
	}
	v, err := s.api.Chat.Pin(r.Context(), c.user, id, *body.Pinned)
	s.answerView(w, r, http.StatusOK, v, err)
}

type renameBody struct {
	Title *string `json:"title"`
}

func (s *Server) chatRename(w http.ResponseWriter, r *http.Request, c *caller) {
	id, ok := s.chatID(w, r)
	if !ok {
		return
	}
	var body renameBody
	if err := decode(r, &body, false); err != nil {
		s.fail(w, r, err)
		return
	}
	if body.Title == nil {
		s.fail(w, r, badRequest("The field title is required."))
		return
	}
	v, err := s.api.Chat.Rename(r.Context(), c.user, id, *body.Title)
	s.answerView(w, r, http.StatusOK, v, err)
}

// viewEvent is what the stream sends: the conversation and its count.
type viewEvent struct {
	conversationJSON
	TotalCount int `json:"totalCount"`
}

func viewEventOf(p chat.Page) ([]byte, error) {
	return json.Marshal(viewEvent{conversationOf(p.View), p.TotalCount})
}
