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
// out within ReconcileGrace, and returns how many conversations it
// changed. See reconcileOne.
func (s *Service) Reconcile(ctx context.Context) (int, error) {
	cs, err := s.st.ReconcileCandidates(ctx, s.now().Add(-s.set.ReconcileGrace), reconcileBatch)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, c := range cs {
		if ctx.Err() != nil {
			break
		}
		changed, err := s.reconcileOne(ctx, c)
		if err != nil {
			errs = append(errs, fmt.Errorf("conversation %d: %w", c.ID, err))
		}
		if changed {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// reconcileOne repairs one conversation: it acts only when it is
// processing with a run and a recorded decision, not updated for
// ReconcileGrace. Then, by the run's status: still waiting for approval
// or input, the card or question is handed back (decision cleared, an
// answer dropped); running or queued, nothing (a worker has it);
// finished, the conversation fails with runFinishedOutside. Every write
// expects processing, so a worker claiming the row meanwhile wins.
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
		p.To = store.ConversationFailed
		p.State = store.ConversationState{RunID: c.RunID, ErrorCode: string(CodeRunFinishedOutside),
			ErrorMessage: Sanitize(fmt.Sprintf("The run finished outside the chat (%s).", run.Status))}
		if gone {
			p.State = store.ConversationState{ErrorCode: string(CodeRunFinishedOutside), ErrorMessage: "The run no longer exists."}
		}
	}
	if _, err := s.change(ctx, p); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return false, nil
		}
		return false, err
	}
	s.log.InfoContext(ctx, "chat reconcile repaired a recorded decision", "conversation", c.ID, "run_id", c.RunID,
		"run_status", string(run.Status), "to", string(p.To))
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
