package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Caller of the runs the chat starts.
const (
	CallerSource        = "chat"
	OperationTurn       = "chatTurn"
	OperationResumeTurn = "resumeChatTurn"
)

// Process claims conversation id (processing → locked) and runs its turn,
// or carries out its recorded decision or answer. It reports false when
// the conversation is not claimable (not processing, or claimed by
// another consumer). The error is an infrastructure failure; a turn that
// fails is written to the conversation, not returned.
func (s *Service) Process(ctx context.Context, id int64) (bool, error) {
	return s.claim(ctx, id)
}

// ProcessNext claims the least recently updated processing conversation
// and processes it as Process does; false when none is claimable.
func (s *Service) ProcessNext(ctx context.Context) (bool, error) {
	return s.claim(ctx, 0)
}

func (s *Service) claim(ctx context.Context, id int64) (bool, error) {
	claim := s.claimID()
	c, err := s.st.ClaimNextConversation(ctx, store.ClaimConversationParams{ID: id, ClaimID: claim})
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	s.notify(c.ID)
	ctx, span := s.startTurn(ctx, c)
	t := &turn{s: s, c: c, claim: claim}
	err = t.process(ctx)
	endTurn(span, err)
	return true, err
}

// turn is one claimed conversation; it lives on one goroutine.
type turn struct {
	s     *Service
	c     store.Conversation // as claimed
	claim string
}

func (t *turn) process(ctx context.Context) (err error) {
	defer func() {
		if v := recover(); v != nil {
			t.s.log.ErrorContext(ctx, "chat turn panicked", "conversation", t.c.ID, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			err = t.fail(ctx, CodeRunFailed, "The turn failed because of an internal error.")
		}
	}()
	switch t.c.Decision {
	case store.DecisionApprove, store.DecisionDeny:
		return t.decide(ctx)
	case store.DecisionInput:
		return t.input(ctx)
	}
	return t.newTurn(ctx)
}

// write is a compare-and-set expecting the row still locked by this
// turn. A lost one (cleanup failed the row meanwhile, or it was claimed
// again after that) is logged and not retried: the row is not ours.
func (t *turn) write(ctx context.Context, to store.ConversationStatus, st store.ConversationState, keep int, add []store.NewChatMessage) error {
	_, err := t.cas(ctx, to, st, keep, add)
	return err
}

// cas is write, reporting whether the change was made.
func (t *turn) cas(ctx context.Context, to store.ConversationStatus, st store.ConversationState, keep int, add []store.NewChatMessage) (bool, error) {
	c, err := t.s.change(ctx, store.ChangeConversationParams{
		ID: t.c.ID, From: []store.ConversationStatus{store.ConversationLocked}, ClaimID: t.claim,
		To: to, State: st, KeepMessages: keep, Append: add,
	})
	if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
		t.s.log.WarnContext(ctx, "chat turn lost its conversation; the result is dropped",
			"conversation", t.c.ID, "claim", t.claim, "to", string(to), "error", err.Error())
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("chat: write conversation %d: %w", t.c.ID, err)
	}
	t.c = c
	return true, nil
}

// fail ends the turn failed with a sanitised sentence and code.
func (t *turn) fail(ctx context.Context, code Code, msg string) error {
	return t.failRun(ctx, code, msg, "")
}

func (t *turn) failRun(ctx context.Context, code Code, msg, runID string) error {
	return t.write(ctx, store.ConversationFailed, store.ConversationState{
		RunID: runID, ErrorMessage: Sanitize(msg), ErrorCode: string(code),
	}, -1, nil)
}

// newTurn runs the turn over the stored transcript.
func (t *turn) newTurn(ctx context.Context) error {
	s := t.s
	op := OperationTurn
	if t.c.DecisionReason == resumeMarker {
		op = OperationResumeTurn
	}
	taskID := t.c.Task
	if taskID == "" {
		taskID = s.set.Task
	}
	if taskID == "" {
		return t.fail(ctx, CodeChatNotConfigured, "No chat task is configured.")
	}
	task, cfg, err := s.tasks.ResolveTask(ctx, taskID)
	if err != nil {
		s.log.WarnContext(ctx, "chat task does not resolve; failing the turn", "conversation", t.c.ID, "task", taskID, "error", err.Error())
		if errors.Is(err, agentconfig.ErrNotFound) || errors.Is(err, agentconfig.ErrInactive) || errors.Is(err, agentconfig.ErrCycle) {
			return t.fail(ctx, CodeChatNotConfigured, fmt.Sprintf("The chat task %q cannot be used: %v.", taskID, err))
		}
		return t.fail(ctx, CodeChatNotConfigured, fmt.Sprintf("The chat task %q cannot be read.", taskID))
	}
	owner, err := s.users.BackendUserByName(ctx, t.c.OwnerUsername)
	if err != nil {
		s.log.WarnContext(ctx, "the owner of a conversation cannot act", "conversation", t.c.ID, "owner", t.c.OwnerUsername, "error", err.Error())
		return t.fail(ctx, CodeRunFailed, "The conversation's owner cannot act.")
	}
	// Refresh updated_at, which cleanup measures, and check the row is
	// still ours; never processing, which would let another consumer in.
	if ok, err := t.cas(ctx, store.ConversationLocked, store.ConversationState{ClaimID: t.claim}, -1, nil); !ok {
		return err // lost (logged by cas) or failed
	}
	msgs, err := s.st.ChatMessages(ctx, store.ListChatMessagesParams{ConversationID: t.c.ID, Limit: store.MaxChatMessageLimit})
	if err != nil {
		s.log.ErrorContext(ctx, "cannot read a conversation's messages", "conversation", t.c.ID, "error", err.Error())
		return t.fail(ctx, CodeRunFailed, "The conversation's messages could not be read.")
	}
	res := s.rt.Run(ctx, agent.Request{
		Config:   cfg,
		Messages: Transcript(s.systemPrompt(task), msgs),
		Actor:    owner,
		Caller:   agent.Caller{Source: CallerSource, Operation: op},
		// Whoever decides the run's card, the conversation gets its answer.
		KeepAnswer: true,
	})
	return t.apply(ctx, res)
}

// decide carries out a recorded approval or denial as the person who
// made it, looked up afresh.
func (t *turn) decide(ctx context.Context) error {
	s := t.s
	by, err := s.users.BackendUserByName(ctx, t.c.DecisionBy)
	if err != nil {
		s.log.WarnContext(ctx, "the person who decided cannot act; handing the card back", "conversation", t.c.ID, "by", t.c.DecisionBy, "error", err.Error())
		return t.handBack(ctx, store.ConversationAwaitingApproval, HandBackApproverNotPermitted)
	}
	res, err := s.rt.Approve(ctx, agent.ApproveParams{
		RunID: t.c.RunID, Approver: by, Approved: t.c.Decision == store.DecisionApprove,
		Digest: t.c.DecisionDigest, Reason: t.c.DecisionReason,
	})
	if err != nil {
		return t.refused(ctx, err, store.ConversationAwaitingApproval)
	}
	return t.apply(ctx, res)
}

// input hands a recorded answer to the run as the person who gave it.
func (t *turn) input(ctx context.Context) error {
	s := t.s
	by, err := s.users.BackendUserByName(ctx, t.c.DecisionBy)
	if err != nil {
		s.log.WarnContext(ctx, "the person who answered cannot act; handing the question back", "conversation", t.c.ID, "by", t.c.DecisionBy, "error", err.Error())
		return t.handBack(ctx, store.ConversationAwaitingInput, HandBackInputNotPermitted)
	}
	res, err := s.rt.SubmitInput(ctx, agent.SubmitInputParams{
		RunID: t.c.RunID, Submitter: by, Data: json.RawMessage(t.c.PendingInput), Digest: t.c.DecisionDigest,
	})
	if err != nil {
		return t.refused(ctx, err, store.ConversationAwaitingInput)
	}
	return t.apply(ctx, res)
}

// approvalHandBack and inputHandBack map the runtime's refusals of a
// recorded decision or answer to the code shown beside the card.
var approvalHandBack = map[agent.RefusalCode]Code{
	agent.RefusedStaleTurn:            HandBackStaleTurn,
	agent.RefusedAlreadyResuming:      HandBackAlreadyResuming,
	agent.RefusedApproverNotPermitted: HandBackApproverNotPermitted,
	agent.RefusedSelfApproval:         HandBackApproverNotPermitted,
	agent.RefusedAccessDenied:         HandBackApproverNotPermitted,
	agent.RefusedConfigurationGone:    HandBackConfigurationInactive,
	agent.RefusedOwnerCannotAct:       HandBackConfigurationInactive,
	agent.RefusedNotWaiting:           HandBackNotAwaitingApproval,
	agent.RefusedToolUnavailable:      HandBackToolUnavailable,
	// The approval could not be recorded; the run waits again.
	agent.RefusedNotAuditable: HandBackAlreadyResuming,
}

var inputHandBack = map[agent.RefusalCode]Code{
	agent.RefusedStaleTurn:            HandBackInputStale,
	agent.RefusedInvalidInput:         HandBackInputInvalid,
	agent.RefusedApproverNotPermitted: HandBackInputNotPermitted,
	agent.RefusedSelfApproval:         HandBackInputNotPermitted,
	agent.RefusedAccessDenied:         HandBackInputNotPermitted,
	agent.RefusedAlreadyResuming:      HandBackInputAlreadyResuming,
	agent.RefusedConfigurationGone:    HandBackInputConfigOff,
	agent.RefusedOwnerCannotAct:       HandBackInputConfigOff,
	agent.RefusedNotWaiting:           HandBackNotAwaitingInput,
	agent.RefusedToolUnavailable:      HandBackToolUnavailable,
}

// HandBackCode is the hand-back code of a refusal, and false for a
// refusal that leaves nothing to hand back (a corrupt or unreadable
// pending turn: the conversation fails).
func HandBackCode(code agent.RefusalCode, input bool) (Code, bool) {
	m := approvalHandBack
	if input {
		m = inputHandBack
	}
	c, ok := m[code]
	return c, ok
}

// refused maps an error of Approve or SubmitInput: a refusal hands the
// card or question back with its code (the cause goes to the log only);
// anything else fails the conversation.
func (t *turn) refused(ctx context.Context, err error, back store.ConversationStatus) error {
	var re *agent.RefusedError
	if errors.As(err, &re) {
		if code, ok := HandBackCode(re.Code, back == store.ConversationAwaitingInput); ok {
			t.s.log.InfoContext(ctx, "the runtime refused a recorded decision; handing it back",
				"conversation", t.c.ID, "run_id", t.c.RunID, "refusal", string(re.Code), "error", err.Error())
			return t.handBack(ctx, back, code)
		}
	}
	t.s.log.ErrorContext(ctx, "a recorded decision could not be carried out", "conversation", t.c.ID, "run_id", t.c.RunID, "error", err.Error())
	return t.failRun(ctx, CodeRunFailed, "The decision could not be carried out.", t.c.RunID)
}

// handBack lets the conversation wait again on the same run, with the
// decision cleared and the reason as a code. A refused answer is dropped,
// its message too.
func (t *turn) handBack(ctx context.Context, to store.ConversationStatus, code Code) error {
	keep := -1
	if to == store.ConversationAwaitingInput {
		if k, ok := t.s.lastAnswer(ctx, t.c); ok {
			keep = k
		}
	}
	return t.write(ctx, to, store.ConversationState{RunID: t.c.RunID, ErrorCode: string(code)}, keep, nil)
}

// apply maps a run's outcome onto the conversation (the seed's outcome
// mapping). The text the model wrote beside tool calls comes first, each
// its own marked message, then the answer, card or question.
func (t *turn) apply(ctx context.Context, res agent.Result) error {
	var add []store.NewChatMessage
	beside := func() { add = answerMessages(res.Beside, "") }
	switch res.Outcome {
	case agent.OutcomeCompleted:
		add = answerMessages(res.Beside, res.Content)
		return t.write(ctx, store.ConversationIdle, store.ConversationState{}, -1, bounded(add))
	case agent.OutcomeAwaitingApproval:
		beside()
		// No sentence: the client renders the notice from the status.
		return t.write(ctx, store.ConversationAwaitingApproval, store.ConversationState{RunID: res.RunID}, -1, bounded(add))
	case agent.OutcomeAwaitingInput:
		beside()
		if res.Pending != nil {
			q := Question(res.Pending.InputSchema)
			if m := strings.TrimSpace(res.Pending.InputMessage); m != "" {
				// An MCP server's own question, marked as the server's.
				q = "The tool's server asks: " + m
				if u := res.Pending.InputURL; u != "" {
					q += "\nOpen " + u + " to answer, then confirm here."
				}
			}
			if q != "" {
				add = append(add, store.NewChatMessage{Role: store.ChatRoleAssistant, Content: q})
			}
		}
		return t.write(ctx, store.ConversationAwaitingInput, store.ConversationState{RunID: res.RunID}, -1, bounded(add))
	default:
		// Outcomes the runtime adds later land here too.
		msg := res.Error
		if strings.TrimSpace(msg) == "" {
			msg = fmt.Sprintf("The run ended %s.", strings.ReplaceAll(string(res.Outcome), "_", " "))
			if res.Outcome == "" {
				msg = "The run ended without an outcome."
			}
		}
		return t.failRun(ctx, CodeRunFailed, msg, res.RunID)
	}
}

// answerMessages are the messages of a run's answer: each text beside a
// tool call its own marked message, then the answer (blank ones left out).
func answerMessages(beside []string, content string) []store.NewChatMessage {
	var add []store.NewChatMessage
	for _, b := range beside {
		if strings.TrimSpace(b) != "" {
			add = append(add, store.NewChatMessage{Role: store.ChatRoleAssistant, Content: b, BesideToolCall: true})
		}
	}
	if strings.TrimSpace(content) != "" {
		add = append(add, store.NewChatMessage{Role: store.ChatRoleAssistant, Content: content})
	}
	return add
}

// bounded keeps the last messages of a change within the store's limit
// (the answer is last, so it survives).
func bounded(add []store.NewChatMessage) []store.NewChatMessage {
	if len(add) > store.MaxChatMessagesPerChange {
		return add[len(add)-store.MaxChatMessagesPerChange:]
	}
	return add
}

// Question is what an input schema asks: its title, else its description.
func Question(schema json.RawMessage) string {
	var s struct {
		Title       string `json:"title"`
		Description string `json:"description"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return ""
	}
	if t := strings.TrimSpace(s.Title); t != "" {
		return t
	}
	return strings.TrimSpace(s.Description)
}

// identity is the assistant's identity and behaviour contract, the first
// part of every chat turn's system message. The configuration's own
// system prompt is put before it by the runtime.
const identity = `You are the t3agent assistant of %s, working inside the TYPO3 backend for its editors.
- Act only through the tools you are offered. Never claim to have read, changed or published anything you did not do through a tool in this conversation.
- Never invent data: page ids, record contents, names, numbers or URLs come from tool results or from the user. If you do not know, say so or look it up.
- Changes that need a person's approval wait for it; say what you propose to do, not that it is done.
- Answer in the language the user writes in.`

// systemPrompt is the identity contract followed by the task's prompt
// template. {{input}} in the template is replaced by nothing: the user's
// messages follow as messages of their own, and putting the last one into
// the system message as well would repeat it with the system's weight.
func (s *Service) systemPrompt(task agentconfig.Task) string {
	site := "the TYPO3 site"
	if n := strings.TrimSpace(s.siteName); n != "" {
		site = fmt.Sprintf("the TYPO3 site %q", n)
	}
	out := fmt.Sprintf(identity, site)
	if p := strings.TrimSpace(task.Render("")); p != "" {
		out += "\n\n" + p
	}
	return out
}

// Transcript builds the messages of a turn: the system message, then the
// stored messages in order. Text the model wrote beside a tool call is
// joined (blank line) with the assistant message that follows it, so
// one assistant turn stays one message; beside texts followed by no
// assistant message become one assistant message of their own.
func Transcript(system string, msgs []store.ChatMessage) []llm.Message {
	out := make([]llm.Message, 0, len(msgs)+1)
	if strings.TrimSpace(system) != "" {
		out = append(out, llm.Message{Role: llm.RoleSystem, Content: system})
	}
	var pending []string
	flush := func() {
		if len(pending) > 0 {
			out = append(out, llm.Message{Role: llm.RoleAssistant, Content: strings.Join(pending, "\n\n")})
			pending = nil
		}
	}
	for _, m := range msgs {
		switch {
		case m.Role == store.ChatRoleAssistant && m.BesideToolCall:
			pending = append(pending, m.Content)
		case m.Role == store.ChatRoleAssistant:
			out = append(out, llm.Message{Role: llm.RoleAssistant, Content: strings.Join(append(pending, m.Content), "\n\n")})
			pending = nil
		default:
			flush()
			out = append(out, llm.Message{Role: llm.RoleUser, Content: m.Content})
		}
	}
	flush()
	return out
}

// ownerOf is the conversation's owner as far as reading its runs goes: the
// runtime lets a run's owner (uid and username) read it. Reconcile uses
// it without a site lookup so that a disabled owner's decision is still
// repaired.
func ownerOf(c store.Conversation) *typo3.BackendUser {
	return &typo3.BackendUser{UID: c.OwnerUID, Username: c.OwnerUsername}
}
