package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/typo3"
)

// TitleLen is how many characters of the first user message become the
// title of an untitled conversation.
const TitleLen = 80

// resumeMarker, stored as DecisionReason with no Decision on a processing
// row, says the turn was queued by Retry: the worker runs it as
// resumeChatTurn. It is no recorded decision (HasPendingDecision stays
// false) and every later change writes the state whole, so it never
// outlives the turn it marks.
const resumeMarker = "resume"

// mayChat reports whether actor may use the chat at all: admins always,
// others when no groups are configured or one of their groups is listed.
//
// The reference checks the directly assigned groups; a resolved user only
// carries its effective groups (GroupUIDs, sub groups included), so those
// are checked.
func (s *Service) mayChat(actor *typo3.BackendUser) bool {
	if actor == nil {
		return false
	}
	if actor.Admin || len(s.set.AllowedGroups) == 0 {
		return true
	}
	for _, g := range actor.GroupUIDs {
		if slices.Contains(s.set.AllowedGroups, g) {
			return true
		}
	}
	return false
}

func (s *Service) check(actor *typo3.BackendUser) error {
	if !s.mayChat(actor) {
		name := "<nobody>"
		if actor != nil {
			name = actor.Username
		}
		return refusal(http.StatusForbidden, CodeAccessDenied, name+" is not in a group allowed to chat")
	}
	return nil
}

// taskFor is the task a new conversation of actor uses: the first group
// mapping that matches one of the actor's effective groups, else the
// default task.
func (s *Service) taskFor(actor *typo3.BackendUser) string {
	for _, gt := range s.set.GroupTasks {
		if slices.Contains(actor.GroupUIDs, gt.Group) {
			return gt.Task
		}
	}
	return s.set.Task
}

// mayDecide reports whether actor may decide the pending card of c at
// all: an admin or the owner. What they may decide is the runtime's
// (rights).
func mayDecide(actor *typo3.BackendUser, c store.Conversation) bool {
	return actor != nil && (actor.Admin || (actor.UID == c.OwnerUID && actor.Username == c.OwnerUsername))
}

// rights says what actor may decide on the card of c, by the runtime's
// rule (the one Approve applies): the owner of a run whose configuration
// requires a second approver may deny, not approve. A conversation not
// awaiting approval has no card: nothing may be decided, no reason.
func (s *Service) rights(ctx context.Context, actor *typo3.BackendUser, c store.Conversation) (mayApprove, mayDeny bool, reason Code) {
	if c.Status != store.ConversationAwaitingApproval || c.RunID == "" {
		return false, false, ""
	}
	if !mayDecide(actor, c) {
		return false, false, CodeApprovalNotAllowed
	}
	r, err := s.rt.Rights(ctx, actor, agent.Access{}, c.RunID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, false, CodeNotAwaitingApproval
	case err != nil:
		s.log.WarnContext(ctx, "what may be decided on a card cannot be read", "conversation", c.ID, "run_id", c.RunID, "error", err.Error())
		return false, false, CodeApprovalNotAllowed
	}
	switch {
	case r.MayApprove:
		reason = ""
	case r.Reason == agent.RefusedSelfApproval:
		reason = CodeSecondApproverRequired
	case r.Reason == agent.RefusedNotWaiting:
		reason = CodeNotAwaitingApproval
	default:
		reason = CodeApprovalNotAllowed
	}
	return r.MayApprove, r.MayDeny, reason
}

// resumable: failed, or processing without a recorded decision.
func resumable(c store.Conversation) bool {
	return c.Status == store.ConversationFailed || (c.Status == store.ConversationProcessing && !c.HasPendingDecision())
}

func (s *Service) view(ctx context.Context, actor *typo3.BackendUser, c store.Conversation) View {
	v := View{Conversation: c, Resumable: resumable(c)}
	v.MayApprove, v.MayDeny, v.DecideReason = s.rights(ctx, actor, c)
	v.MayDecide = v.MayApprove || v.MayDeny
	return v
}

// own returns conversation id if actor owns it; 404 otherwise, so that
// nobody learns which ids exist.
func (s *Service) own(ctx context.Context, actor *typo3.BackendUser, id int64) (store.Conversation, error) {
	if err := s.check(actor); err != nil {
		return store.Conversation{}, err
	}
	c, err := s.st.Conversation(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && (c.OwnerUID != actor.UID || c.OwnerUsername != actor.Username) {
		return store.Conversation{}, refusal(http.StatusNotFound, CodeConversationNotFound, fmt.Sprintf("conversation %d of %s", id, actor.Username))
	}
	return c, err
}

// Availability says whether actor may chat and whether the chat is
// configured for them. It never refuses: a reader who may not chat gets
// Available false with reason accessDenied, so a client can hide the
// chat instead of showing an error.
func (s *Service) Availability(ctx context.Context, actor *typo3.BackendUser) (Availability, error) {
	a := Availability{MaxLength: s.set.MaxMessageLength}
	if !s.mayChat(actor) {
		a.Reason = CodeAccessDenied
		return a, nil
	}
	_, busy, err := s.st.CountConversations(ctx, actor.UID)
	if err != nil {
		return Availability{}, err
	}
	a.ActiveCount = busy
	a.Conversation = s.taskFor(actor)
	if a.Conversation == "" {
		a.Reason = CodeChatNotConfigured
		return a, nil
	}
	if _, _, err := s.tasks.ResolveTask(ctx, a.Conversation); err != nil {
		s.log.WarnContext(ctx, "the chat task does not resolve", "task", a.Conversation, "error", err.Error())
		a.Reason = CodeChatNotConfigured
		return a, nil
	}
	a.Available = true
	return a, nil
}

// Create starts an idle conversation of actor with the task its groups
// map to.
func (s *Service) Create(ctx context.Context, actor *typo3.BackendUser) (View, error) {
	if err := s.check(actor); err != nil {
		return View{}, err
	}
	total, _, err := s.st.CountConversations(ctx, actor.UID)
	if err != nil {
		return View{}, err
	}
	if total >= s.set.MaxConversationsPerUser {
		return View{}, refusal(http.StatusTooManyRequests, CodeTooManyConversations,
			fmt.Sprintf("%s has %d conversations (max %d)", actor.Username, total, s.set.MaxConversationsPerUser))
	}
	c, err := s.st.CreateConversation(ctx, store.CreateConversationParams{
		OwnerUID: actor.UID, OwnerUsername: actor.Username, Task: s.taskFor(actor),
	})
	if err != nil {
		return View{}, err
	}
	return s.view(ctx, actor, c), nil
}

// List lists actor's conversations, pinned first, then the most recently
// updated.
func (s *Service) List(ctx context.Context, actor *typo3.BackendUser, includeArchived bool) ([]View, error) {
	if err := s.check(actor); err != nil {
		return nil, err
	}
	cs, err := s.st.Conversations(ctx, store.ListConversationsParams{OwnerUID: actor.UID, IncludeArchived: includeArchived, Limit: store.MaxConversationLimit})
	if err != nil {
		return nil, err
	}
	out := make([]View, 0, len(cs))
	for _, c := range cs {
		if c.OwnerUsername != actor.Username {
			continue
		}
		out = append(out, s.view(ctx, actor, c))
	}
	return out, nil
}

// Messages returns the conversation with its messages after Seq after.
// It first repairs a recorded decision no worker picked up (reconcile)
// and moves a conversation on whose run was decided elsewhere (follow).
// A waiting conversation carries its card or question (Pending); when
// the run's pending turn cannot be read, Pending is nil and the reason is
// logged.
func (s *Service) Messages(ctx context.Context, actor *typo3.BackendUser, id int64, after int) (Page, error) {
	c, err := s.own(ctx, actor, id)
	if err != nil {
		return Page{}, err
	}
	if changed, err := s.repair(ctx, c); err != nil {
		s.log.WarnContext(ctx, "chat reconcile failed", "conversation", id, "error", err.Error())
	} else if changed {
		if c, err = s.own(ctx, actor, id); err != nil {
			return Page{}, err
		}
	}
	msgs, err := s.st.ChatMessages(ctx, store.ListChatMessagesParams{ConversationID: id, After: max(after, 0), Limit: store.MaxChatMessageLimit})
	if err != nil {
		return Page{}, err
	}
	p := Page{View: s.view(ctx, actor, c), Messages: msgs, TotalCount: c.MessageCount}
	if (c.Status == store.ConversationAwaitingApproval || c.Status == store.ConversationAwaitingInput) && c.RunID != "" {
		item, err := s.rt.Pending(ctx, actor, agent.Access{}, c.RunID)
		if err != nil {
			s.log.WarnContext(ctx, "the pending turn of a waiting conversation cannot be read",
				"conversation", id, "run_id", c.RunID, "error", err.Error())
		} else {
			p.Pending = &item
		}
	}
	return p, nil
}

// content checks a message a person wrote.
func (s *Service) content(text string) (string, error) {
	if strings.TrimSpace(text) == "" {
		return "", refusal(http.StatusBadRequest, CodeEmptyMessage, "")
	}
	if n := utf8.RuneCountInString(text); n > s.set.MaxMessageLength {
		return "", refusal(http.StatusBadRequest, CodeMessageTooLong, fmt.Sprintf("%d characters, max %d", n, s.set.MaxMessageLength))
	}
	return text, nil
}

// startable are the statuses a new turn may start from.
var startable = []store.ConversationStatus{
	store.ConversationIdle, store.ConversationFailed, store.ConversationAwaitingApproval, store.ConversationAwaitingInput,
}

// leave prepares a new turn on c: busy conversations refuse, the owner's
// active limit applies, and a run the conversation waits on is cancelled
// first, so that nobody can approve a write the person has moved past
// (the CAS that follows may still lose; the run is cancelled anyway,
// which a waiting row can always leave by another message).
func (s *Service) leave(ctx context.Context, actor *typo3.BackendUser, c store.Conversation) error {
	if c.Status.Busy() {
		return refusal(http.StatusConflict, CodeConversationProcessing, fmt.Sprintf("conversation %d is %s", c.ID, c.Status))
	}
	if !slices.Contains(startable, c.Status) {
		return refusal(http.StatusConflict, CodeStateChanged, fmt.Sprintf("conversation %d is %s", c.ID, c.Status))
	}
	_, busy, err := s.st.CountConversations(ctx, c.OwnerUID)
	if err != nil {
		return err
	}
	if busy >= s.set.MaxActivePerUser {
		return refusal(http.StatusTooManyRequests, CodeTooManyActive, fmt.Sprintf("%d busy conversations (max %d)", busy, s.set.MaxActivePerUser))
	}
	if (c.Status == store.ConversationAwaitingApproval || c.Status == store.ConversationAwaitingInput) && c.RunID != "" {
		if _, err := s.rt.Cancel(ctx, actor, agent.Access{}, c.RunID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("cancel the waiting run %s: %w", c.RunID, err)
		}
	}
	return nil
}

// lost maps a lost compare-and-set to 409 stateChanged.
func lost(err error, id int64) error {
	if errors.Is(err, store.ErrConflict) {
		return refusal(http.StatusConflict, CodeStateChanged, fmt.Sprintf("conversation %d changed meanwhile", id))
	}
	return err
}

// Send appends a user message and queues a turn (processing). Leaving a
// waiting state cancels the waiting run. The first message titles an
// untitled conversation.
func (s *Service) Send(ctx context.Context, actor *typo3.BackendUser, p SendParams) (View, error) {
	c, err := s.own(ctx, actor, p.ID)
	if err != nil {
		return View{}, err
	}
	text, err := s.content(p.Content)
	if err != nil {
		return View{}, err
	}
	if err := s.leave(ctx, actor, c); err != nil {
		return View{}, err
	}
	// The title goes first: once the turn is queued a worker may take it
	// at once, and the answer must show the queued row, not a later one.
	if c.Title == "" {
		title := titleOf(text)
		if _, err := s.st.SetConversationFlags(ctx, store.SetConversationFlagsParams{ID: c.ID, Title: &title}); err != nil {
			s.log.WarnContext(ctx, "cannot title a conversation", "conversation", c.ID, "error", err.Error())
		}
	}
	c, err = s.change(ctx, store.ChangeConversationParams{
		ID: c.ID, From: []store.ConversationStatus{c.Status}, To: store.ConversationProcessing,
		KeepMessages: -1, Append: []store.NewChatMessage{{Role: store.ChatRoleUser, Content: text}},
	})
	if err != nil {
		return View{}, lost(err, p.ID)
	}
	return s.view(ctx, actor, c), nil
}

// titleOf is the first TitleLen characters of a message, on one line.
func titleOf(text string) string {
	t := strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(t) > TitleLen {
		t = string([]rune(t)[:TitleLen-1]) + "…"
	}
	return cutBytes(t, store.MaxConversationTitleLen)
}

// cutBytes cuts s to at most n bytes on a rune boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Edit replaces the user message at Seq, drops every message after it
// and queues a turn. The client names what it edited: when the message's
// text or the conversation's message count differ, another change came
// first (409 editStale).
func (s *Service) Edit(ctx context.Context, actor *typo3.BackendUser, p EditParams) (View, error) {
	c, err := s.own(ctx, actor, p.ID)
	if err != nil {
		return View{}, err
	}
	text, err := s.content(p.Content)
	if err != nil {
		return View{}, err
	}
	if c.Status.Busy() {
		return View{}, refusal(http.StatusConflict, CodeConversationProcessing, fmt.Sprintf("conversation %d is %s", c.ID, c.Status))
	}
	if p.Seq < 1 || p.Seq > c.MessageCount {
		return View{}, refusal(http.StatusBadRequest, CodeNotEditable, fmt.Sprintf("no message %d", p.Seq))
	}
	msgs, err := s.st.ChatMessages(ctx, store.ListChatMessagesParams{ConversationID: c.ID, After: p.Seq - 1, Limit: 1})
	if err != nil {
		return View{}, err
	}
	if len(msgs) == 0 || msgs[0].Seq != p.Seq || msgs[0].Role != store.ChatRoleUser || msgs[0].Notice != "" {
		return View{}, refusal(http.StatusBadRequest, CodeNotEditable, fmt.Sprintf("message %d is not a message the user wrote", p.Seq))
	}
	if c.MessageCount != p.MessageCount || msgs[0].Content != p.ExpectedContent {
		return View{}, refusal(http.StatusConflict, CodeEditStale, fmt.Sprintf("the client saw %d messages, there are %d", p.MessageCount, c.MessageCount))
	}
	if err := s.leave(ctx, actor, c); err != nil {
		return View{}, err
	}
	c, err = s.change(ctx, store.ChangeConversationParams{
		ID: c.ID, From: []store.ConversationStatus{c.Status}, To: store.ConversationProcessing,
		KeepMessages: p.Seq - 1, Append: []store.NewChatMessage{{Role: store.ChatRoleUser, Content: text}},
	})
	if err != nil {
		return View{}, lost(err, p.ID)
	}
	return s.view(ctx, actor, c), nil
}

// Retry queues the turn again over the stored transcript (a failed
// conversation, or one processing that no consumer took); the worker runs
// it as resumeChatTurn. It refuses while the turn runs (locked) and while
// a recorded decision or answer is not carried out yet: retrying then
// would run a second turn beside the approved write.
func (s *Service) Retry(ctx context.Context, actor *typo3.BackendUser, id int64) (View, error) {
	c, err := s.own(ctx, actor, id)
	if err != nil {
		return View{}, err
	}
	switch {
	case c.Status == store.ConversationLocked:
		return View{}, refusal(http.StatusConflict, CodeConversationProcessing, fmt.Sprintf("conversation %d is locked", id))
	case c.HasPendingDecision():
		return View{}, refusal(http.StatusConflict, CodeDecisionInFlight, fmt.Sprintf("conversation %d has a recorded %s not carried out yet", id, c.Decision))
	case !resumable(c):
		return View{}, refusal(http.StatusBadRequest, CodeNotResumable, fmt.Sprintf("conversation %d is %s", id, c.Status))
	}
	if c.Status == store.ConversationFailed {
		_, busy, err := s.st.CountConversations(ctx, c.OwnerUID)
		if err != nil {
			return View{}, err
		}
		if busy >= s.set.MaxActivePerUser {
			return View{}, refusal(http.StatusTooManyRequests, CodeTooManyActive, fmt.Sprintf("%d busy conversations (max %d)", busy, s.set.MaxActivePerUser))
		}
	}
	c, err = s.change(ctx, store.ChangeConversationParams{
		ID: c.ID, From: []store.ConversationStatus{c.Status}, To: store.ConversationProcessing,
		State: store.ConversationState{DecisionReason: resumeMarker}, KeepMessages: -1,
	})
	if err != nil {
		return View{}, lost(err, id)
	}
	return s.view(ctx, actor, c), nil
}

// Decide records an approval or a denial of the card a conversation
// waits on; the worker carries it out. A denial's reason is also kept as
// a user message (notice denyReason).
func (s *Service) Decide(ctx context.Context, actor *typo3.BackendUser, p DecideParams) (View, error) {
	c, err := s.own(ctx, actor, p.ID)
	if err != nil {
		return View{}, err
	}
	if !mayDecide(actor, c) {
		return View{}, refusal(http.StatusForbidden, CodeApprovalNotAllowed, actor.Username+" may not decide")
	}
	if c.Status != store.ConversationAwaitingApproval || c.RunID == "" {
		return View{}, refusal(http.StatusConflict, CodeNotAwaitingApproval, fmt.Sprintf("conversation %d is %s", c.ID, c.Status))
	}
	// What the runtime would refuse is refused here, before anything is
	// recorded: a decision the worker could only hand back would leave
	// the person waiting on a card they cannot release.
	mayApprove, mayDeny, why := s.rights(ctx, actor, c)
	if p.Approve && !mayApprove || !p.Approve && !mayDeny {
		switch why {
		case CodeSecondApproverRequired:
			return View{}, refusal(http.StatusForbidden, why, fmt.Sprintf("run %s needs a second person to approve; %s started it", c.RunID, actor.Username))
		case CodeNotAwaitingApproval:
			return View{}, refusal(http.StatusConflict, why, fmt.Sprintf("run %s no longer waits for approval", c.RunID))
		}
		return View{}, refusal(http.StatusForbidden, CodeApprovalNotAllowed, actor.Username+" may not decide on run "+c.RunID)
	}
	reason := strings.TrimSpace(p.Reason)
	if utf8.RuneCountInString(reason) > s.set.MaxMessageLength {
		return View{}, refusal(http.StatusBadRequest, CodeMessageTooLong, "the reason is too long")
	}
	st := store.ConversationState{RunID: c.RunID, Decision: store.DecisionDeny, DecisionDigest: p.Digest, DecisionBy: actor.Username, DecisionReason: reason}
	var add []store.NewChatMessage
	if p.Approve {
		st.Decision = store.DecisionApprove
	} else if reason != "" {
		add = append(add, store.NewChatMessage{Role: store.ChatRoleUser, Content: reason, Notice: string(NoticeDenyReason)})
	}
	c, err = s.change(ctx, store.ChangeConversationParams{
		ID: c.ID, From: []store.ConversationStatus{store.ConversationAwaitingApproval}, To: store.ConversationProcessing,
		State: st, KeepMessages: -1, Append: add,
	})
	if err != nil {
		return View{}, lost(err, p.ID)
	}
	return s.view(ctx, actor, c), nil
}

// Input records an answer to the question a conversation waits on; the
// worker hands it to the run. The answer (a JSON object) is also kept as
// a user message (notice inputAnswer), removed again when the runtime
// refuses it.
func (s *Service) Input(ctx context.Context, actor *typo3.BackendUser, p InputParams) (View, error) {
	c, err := s.own(ctx, actor, p.ID)
	if err != nil {
		return View{}, err
	}
	if c.Status != store.ConversationAwaitingInput || c.RunID == "" {
		return View{}, refusal(http.StatusConflict, CodeNotAwaitingInput, fmt.Sprintf("conversation %d is %s", c.ID, c.Status))
	}
	var obj map[string]any
	if err := json.Unmarshal(p.Data, &obj); err != nil || obj == nil {
		return View{}, refusal(http.StatusBadRequest, CodeInputInvalid, "the answer is not a JSON object")
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return View{}, refusal(http.StatusBadRequest, CodeInputInvalid, err.Error())
	}
	shown := answerText(obj)
	if utf8.RuneCount(data) > s.set.MaxMessageLength || utf8.RuneCountInString(shown) > s.set.MaxMessageLength {
		return View{}, refusal(http.StatusBadRequest, CodeMessageTooLong, "the answer is too long")
	}
	c, err = s.change(ctx, store.ChangeConversationParams{
		ID: c.ID, From: []store.ConversationStatus{store.ConversationAwaitingInput}, To: store.ConversationProcessing,
		State: store.ConversationState{RunID: c.RunID, Decision: store.DecisionInput, DecisionDigest: p.Digest,
			DecisionBy: actor.Username, PendingInput: string(data)},
		KeepMessages: -1, Append: []store.NewChatMessage{{Role: store.ChatRoleUser, Content: shown, Notice: string(NoticeInputAnswer)}},
	})
	if err != nil {
		return View{}, lost(err, p.ID)
	}
	return s.view(ctx, actor, c), nil
}

// answerText renders an answer for the transcript: the value of a
// one-key answer, else "key: value" lines in key order.
func answerText(obj map[string]any) string {
	str := func(v any) string {
		if s, ok := v.(string); ok {
			return s
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	if len(obj) == 1 {
		for _, v := range obj {
			if t := str(v); strings.TrimSpace(t) != "" {
				return t
			}
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	lines := make([]string, 0, len(keys))
	for _, k := range keys {
		lines = append(lines, k+": "+str(obj[k]))
	}
	if len(lines) == 0 {
		return "{}"
	}
	return strings.Join(lines, "\n")
}

func (s *Service) flags(ctx context.Context, actor *typo3.BackendUser, p store.SetConversationFlagsParams) (View, error) {
	if _, err := s.own(ctx, actor, p.ID); err != nil {
		return View{}, err
	}
	c, err := s.st.SetConversationFlags(ctx, p)
	if err != nil {
		return View{}, err
	}
	s.notify(c.ID)
	return s.view(ctx, actor, c), nil
}

// Archive archives a conversation (it leaves the default list; cleanup
// deletes it later).
func (s *Service) Archive(ctx context.Context, actor *typo3.BackendUser, id int64) (View, error) {
	yes := true
	return s.flags(ctx, actor, store.SetConversationFlagsParams{ID: id, Archived: &yes})
}

// Pin pins or unpins a conversation.
func (s *Service) Pin(ctx context.Context, actor *typo3.BackendUser, id int64, pinned bool) (View, error) {
	return s.flags(ctx, actor, store.SetConversationFlagsParams{ID: id, Pinned: &pinned})
}

// Rename sets the title (one line, at most store.MaxConversationTitleLen
// bytes).
func (s *Service) Rename(ctx context.Context, actor *typo3.BackendUser, id int64, title string) (View, error) {
	t := strings.Join(strings.Fields(title), " ")
	if t == "" {
		if err := s.check(actor); err != nil {
			return View{}, err
		}
		return View{}, refusal(http.StatusBadRequest, CodeEmptyTitle, "")
	}
	t = cutBytes(t, store.MaxConversationTitleLen)
	return s.flags(ctx, actor, store.SetConversationFlagsParams{ID: id, Title: &t})
}
