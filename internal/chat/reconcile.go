package chat

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/store"
)

// reconcileBatch bounds one Reconcile pass.
const reconcileBatch = 100

// Reconcile repairs the recorded decisions and answers no worker carried
// out within ReconcileGrace (see reconcileOne), then moves on the
// conversations whose run was decided elsewhere (see Follow), and
// returns how many conversations it changed.
func (s *Service) Reconcile(ctx context.Context) (int, error) {
	cs, err := s.st.ReconcileCandidates(ctx, s.now().Add(-s.set.ReconcileGrace), reconcileBatch)
	if err != nil {
		return 0, err
	}
	n, rerr := s.each(ctx, cs, s.reconcileOne)
	followed, ferr := s.Follow(ctx)
	return n + followed, errors.Join(rerr, ferr)
}

// each repairs every conversation of cs with fn until ctx ends, and
// returns how many it changed; the errors are joined.
func (s *Service) each(ctx context.Context, cs []store.Conversation, fn func(context.Context, store.Conversation) (bool, error)) (int, error) {
	n := 0
	var errs []error
	for _, c := range cs {
		if ctx.Err() != nil {
			break
		}
		changed, err := fn(ctx, c)
		if err != nil {
			errs = append(errs, fmt.Errorf("conversation %d: %w", c.ID, err))
		}
		if changed {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// Follow moves on the conversations waiting on a run that was decided,
// answered or cancelled elsewhere — through the runs API, the CLI or
// another process — and returns how many it changed. See followOne.
// serve and the chat worker run it with every maintenance pass, a
// decision taken through this process's API right after it, and reading
// a conversation (Messages) follows that one.
func (s *Service) Follow(ctx context.Context) (int, error) {
	cs, err := s.st.StrandedConversations(ctx, reconcileBatch)
	if err != nil {
		return 0, err
	}
	return s.each(ctx, cs, s.followOne)
}

// repair is reconcileOne for a processing conversation and followOne
// for a waiting one.
func (s *Service) repair(ctx context.Context, c store.Conversation) (bool, error) {
	if c.Status == store.ConversationAwaitingApproval || c.Status == store.ConversationAwaitingInput {
		return s.followOne(ctx, c)
	}
	return s.reconcileOne(ctx, c)
}

// reconcileOne repairs one conversation: it acts only when it is
// processing with a run and a recorded decision, not updated for
// ReconcileGrace. Then, by the run's status: still waiting for approval
// or input, the card or question is handed back (decision cleared, an
// answer dropped); running or queued, nothing (a worker has it);
// finished, as settled says (a completed run's kept answer appended,
// idle; otherwise failed with runFinishedOutside). Every write expects
// processing, so a worker claiming the row meanwhile wins.
func (s *Service) reconcileOne(ctx context.Context, c store.Conversation) (bool, error) {
	if c.Status != store.ConversationProcessing || !c.HasPendingDecision() || c.UpdatedAt.IsZero() ||
		!c.UpdatedAt.Before(s.now().Add(-s.set.ReconcileGrace)) {
		return false, nil
	}
	run, err := s.rt.Status(ctx, ownerOf(c), agent.Access{}, c.RunID)
	gone := errors.Is(err, store.ErrNotFound)
	if err != nil && !gone {
		return false, err
	}
	p := store.ChangeConversationParams{ID: c.ID, From: []store.ConversationStatus{store.ConversationProcessing}, KeepMessages: -1}
	switch {
	case !gone && run.Status == store.RunWaitingForApproval:
		p.To, p.State = store.ConversationAwaitingApproval, store.ConversationState{RunID: c.RunID}
	case !gone && run.Status == store.RunWaitingForInput:
		p.To, p.State = store.ConversationAwaitingInput, store.ConversationState{RunID: c.RunID}
		if c.Decision == store.DecisionInput {
			if k, ok := s.lastAnswer(ctx, c); ok {
				p.KeepMessages = k
			}
		}
	case !gone && !run.Status.Terminal():
		return false, nil // running or queued: someone carries it out
	default:
		if err := s.settled(ctx, c, run, gone, &p); err != nil {
			return false, err
		}
	}
	return s.repaired(ctx, c, run, p)
}

// followOne moves on a conversation waiting (awaiting approval or input)
// on a run that no longer waits for the same: decided or answered by
// someone else, or cancelled. By the run's status: waiting for the
// other kind, the conversation waits for that (a question's text
// appended); queued or running, nothing yet; finished, as settled says.
// Every write expects the conversation still waiting on that run.
func (s *Service) followOne(ctx context.Context, c store.Conversation) (bool, error) {
	waiting := c.Status == store.ConversationAwaitingApproval || c.Status == store.ConversationAwaitingInput
	if !waiting || c.RunID == "" {
		return false, nil
	}
	owner := ownerOf(c)
	run, err := s.rt.Status(ctx, owner, agent.Access{}, c.RunID)
	gone := errors.Is(err, store.ErrNotFound)
	if err != nil && !gone {
		return false, err
	}
	p := store.ChangeConversationParams{ID: c.ID, From: []store.ConversationStatus{c.Status}, RunID: c.RunID, KeepMessages: -1}
	switch {
	case !gone && run.Status == store.RunWaitingForApproval:
		if c.Status == store.ConversationAwaitingApproval {
			return false, nil
		}
		p.To, p.State = store.ConversationAwaitingApproval, store.ConversationState{RunID: c.RunID}
	case !gone && run.Status == store.RunWaitingForInput:
		if c.Status == store.ConversationAwaitingInput {
			return false, nil
		}
		p.To, p.State = store.ConversationAwaitingInput, store.ConversationState{RunID: c.RunID}
		if it, err := s.rt.Pending(ctx, owner, agent.Access{}, c.RunID); err == nil {
			if q := Question(it.Schema); q != "" {
				p.Append = []store.NewChatMessage{{Role: store.ChatRoleAssistant, Content: q}}
			}
		}
	case !gone && !run.Status.Terminal():
		return false, nil // decided, its turn runs: follow it when it ends
	default:
		if err := s.settled(ctx, c, run, gone, &p); err != nil {
			return false, err
		}
	}
	return s.repaired(ctx, c, run, p)
}

// settled fills p for a conversation whose run has finished (or is
// gone): a completed run's kept answer — the text beside its tool calls,
// then the answer — is appended and the conversation is idle; any other
// end fails it with runFinishedOutside.
func (s *Service) settled(ctx context.Context, c store.Conversation, run store.Run, gone bool, p *store.ChangeConversationParams) error {
	if gone {
		p.To, p.State = store.ConversationFailed, store.ConversationState{ErrorCode: string(CodeRunFinishedOutside), ErrorMessage: "The run no longer exists."}
		return nil
	}
	if run.Status == store.RunCompleted {
		a, ok, err := s.rt.Answer(ctx, ownerOf(c), agent.Access{}, c.RunID)
		if err != nil {
			return err
		}
		if ok {
			p.To, p.State = store.ConversationIdle, store.ConversationState{}
			p.Append = bounded(answerMessages(a.Beside, a.Content))
			return nil
		}
	}
	p.To = store.ConversationFailed
	p.State = store.ConversationState{RunID: c.RunID, ErrorCode: string(CodeRunFinishedOutside),
		ErrorMessage: Sanitize(fmt.Sprintf("The run finished outside the chat (%s).", run.Status))}
	return nil
}

// repaired applies a repair; a lost compare-and-set means someone else
// moved the conversation on first, which is no error.
func (s *Service) repaired(ctx context.Context, c store.Conversation, run store.Run, p store.ChangeConversationParams) (bool, error) {
	if _, err := s.change(ctx, p); err != nil {
		if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		return false, err
	}
	s.log.InfoContext(ctx, "chat followed a run that moved on outside the turn", "conversation", c.ID, "run_id", c.RunID,
		"from", string(c.Status), "run_status", string(run.Status), "to", string(p.To))
	return true, nil
}

// lastAnswer is the message count without the recorded answer's
// message, when it is the last one.
func (s *Service) lastAnswer(ctx context.Context, c store.Conversation) (int, bool) {
	if c.MessageCount < 1 {
		return 0, false
	}
	msgs, err := s.st.ChatMessages(ctx, store.ListChatMessagesParams{ConversationID: c.ID, After: c.MessageCount - 1, Limit: 1})
	if err != nil || len(msgs) != 1 || msgs[0].Notice != string(NoticeInputAnswer) {
		return 0, false
	}
	return msgs[0].Seq - 1, true
}

// Cleanup fails turns stuck processing or locked for StaleAfter (code
// timedOut; their claim, run and decision fields cleared, so a Retry
// cannot replay an old approval), archives idle conversations not
// updated for ArchiveAfter and deletes archived ones not updated for
// DeleteAfter. A zero parameter takes the setting; a negative one, and a
// setting ≤ 0 for archive and delete, skips that step.
func (s *Service) Cleanup(ctx context.Context, p CleanupParams) (CleanupReport, error) {
	pick := func(v, setting time.Duration) time.Duration {
		if v == 0 {
			return setting
		}
		return v
	}
	stale, archive, del := pick(p.StaleAfter, s.set.StaleAfter), pick(p.ArchiveAfter, s.set.ArchiveAfter), pick(p.DeleteAfter, s.set.DeleteAfter)
	now := s.now()
	var rep CleanupReport
	var err error
	if stale > 0 {
		rep.Failed, err = s.st.FailStaleConversations(ctx, store.FailStaleConversationsParams{
			Before: now.Add(-stale), ErrorCode: string(CodeTimedOut),
			ErrorMessage: fmt.Sprintf("Timed out after %s without completion.", stale),
		})
		if err != nil {
			return rep, fmt.Errorf("fail stale conversations: %w", err)
		}
	}
	if archive > 0 {
		if rep.Archived, err = s.st.ArchiveIdleConversations(ctx, now.Add(-archive)); err != nil {
			return rep, fmt.Errorf("archive idle conversations: %w", err)
		}
	}
	if del > 0 {
		if rep.Deleted, err = s.st.DeleteArchivedConversations(ctx, now.Add(-del)); err != nil {
			return rep, fmt.Errorf("delete archived conversations: %w", err)
		}
	}
	return rep, nil
}
