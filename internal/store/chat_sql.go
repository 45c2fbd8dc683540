package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pressly/goose/v3"
)

const conversationColumns = `id, owner_uid, owner_username, title, status, task, claim_id, run_id, decision,
	decision_digest, decision_by, decision_reason, pending_input, error_message, error_code, pinned, archived,
	message_count, created_at, updated_at`

func scanConversation(sc rowScanner) (Conversation, error) {
	var c Conversation
	err := sc.Scan(&c.ID, &c.OwnerUID, &c.OwnerUsername, &c.Title, &c.Status, &c.Task, &c.ClaimID, &c.RunID,
		&c.Decision, &c.DecisionDigest, &c.DecisionBy, &c.DecisionReason, &c.PendingInput, &c.ErrorMessage,
		&c.ErrorCode, &c.Pinned, &c.Archived, &c.MessageCount, timeScanner{&c.CreatedAt}, timeScanner{&c.UpdatedAt})
	return c, err
}

// queryConversations runs a SELECT of conversationColumns and scans every
// row; what names the listing in errors.
func (s *sqlStore) queryConversations(ctx context.Context, what, q string, args ...any) ([]Conversation, error) {
	return queryAll(ctx, s.r, what, "a conversation", scanConversation, q, args...)
}

// ---- validation ----

func checkConversationID(id int64) error {
	if id <= 0 {
		return invalid("a conversation id is a positive number, not %d", id)
	}
	return nil
}

// checkRunes is checkText with the bound counted in characters (runes),
// as the chat's sanitiser cuts error messages.
func checkRunes(what, v string, max int) error {
	if err := checkText(what, v, len(v)); err != nil { // encoding only
		return err
	}
	if n := utf8.RuneCountInString(v); n > max {
		return invalid("%s is %d characters long, more than the %d allowed", what, n, max)
	}
	return nil
}

// checkCutoff refuses the zero time, which would select nothing and is
// always a caller's mistake.
func checkCutoff(what string, t time.Time) error {
	if t.IsZero() {
		return invalid("%s needs a cut-off time", what)
	}
	return nil
}

// cutoff is t as the store compares it: UTC, microsecond precision. SQLite
// compares timestamps as text, which orders correctly only in one zone.
func cutoff(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func checkConversationState(st ConversationState) error {
	for _, f := range []struct{ what, v string }{
		{"claim id", st.ClaimID}, {"run id", st.RunID}, {"decision digest", st.DecisionDigest},
		{"decider (DecisionBy)", st.DecisionBy}, {"error code", st.ErrorCode},
	} {
		if err := checkText(f.what, f.v, MaxNameLen); err != nil {
			return err
		}
	}
	if !st.Decision.Valid() {
		return invalid("%q is not a decision (approve, deny, input or none)", st.Decision)
	}
	if err := checkText("decision reason", st.DecisionReason, MaxChatMessageLen); err != nil {
		return err
	}
	if err := checkText("pending input", st.PendingInput, MaxChatMessageLen); err != nil {
		return err
	}
	if st.PendingInput != "" {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(st.PendingInput), &obj); err != nil || obj == nil {
			return invalid("pending input must be a JSON object")
		}
	}
	return checkRunes("conversation error message", st.ErrorMessage, MaxConversationErrorLen)
}

func checkNewChatMessages(msgs []NewChatMessage) error {
	if len(msgs) > MaxChatMessagesPerChange {
		return invalid("%d chat messages in one change, more than the %d allowed", len(msgs), MaxChatMessagesPerChange)
	}
	for i, m := range msgs {
		if !m.Role.Valid() {
			return invalid("chat message %d has role %q; a role is user or assistant", i+1, m.Role)
		}
		if err := checkText("chat message "+strconv.Itoa(i+1), m.Content, MaxChatMessageLen); err != nil {
			return err
		}
		if err := checkText("notice of chat message "+strconv.Itoa(i+1), m.Notice, MaxNameLen); err != nil {
			return err
		}
	}
	return nil
}

func checkChangeConversation(p ChangeConversationParams) error {
	if err := checkConversationID(p.ID); err != nil {
		return err
	}
	if len(p.From) == 0 {
		return invalid("a conversation change needs the statuses it starts from")
	}
	for _, st := range p.From {
		if !st.Valid() {
			return invalid("%q is not a conversation status", st)
		}
	}
	if !p.To.Valid() {
		return invalid("%q is not a conversation status", p.To)
	}
	if err := checkText("claim id", p.ClaimID, MaxNameLen); err != nil {
		return err
	}
	if err := checkText("run id", p.RunID, MaxNameLen); err != nil {
		return err
	}
	if p.KeepMessages < -1 {
		return invalid("KeepMessages is -1 (keep all) or the number of messages to keep, not %d", p.KeepMessages)
	}
	if err := checkConversationState(p.State); err != nil {
		return err
	}
	return checkNewChatMessages(p.Append)
}

func statusNames(list []ConversationStatus) string {
	names := make([]string, len(list))
	for i, s := range list {
		names[i] = string(s)
	}
	return strings.Join(names, " or ")
}

// ---- conversations ----

func (s *sqlStore) CreateConversation(ctx context.Context, p CreateConversationParams) (Conversation, error) {
	if p.OwnerUID <= 0 {
		return Conversation{}, invalid("a conversation needs an owner uid > 0, not %d", p.OwnerUID)
	}
	if err := checkName("conversation owner", p.OwnerUsername); err != nil {
		return Conversation{}, err
	}
	if err := checkText("conversation title", p.Title, MaxConversationTitleLen); err != nil {
		return Conversation{}, err
	}
	if err := checkText("chat task", p.Task, MaxNameLen); err != nil {
		return Conversation{}, err
	}
	now := s.stamp()
	c, err := scanConversation(s.w.QueryRowContext(ctx, `
		INSERT INTO conversations (owner_uid, owner_username, title, status, task, claim_id, run_id, decision,
			decision_digest, decision_by, decision_reason, pending_input, error_message, error_code, pinned,
			archived, message_count, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, '', '', '', '', '', '', '', '', '', $6, $6, 0, $7, $7)
		RETURNING `+conversationColumns,
		p.OwnerUID, p.OwnerUsername, p.Title, ConversationIdle, p.Task, false, now))
	if err != nil {
		return Conversation{}, fmt.Errorf("store: cannot create a conversation for %s: %w", p.OwnerUsername, err)
	}
	return c, nil
}

func (s *sqlStore) Conversation(ctx context.Context, id int64) (Conversation, error) {
	if err := checkConversationID(id); err != nil {
		return Conversation{}, err
	}
	return s.readConversation(ctx, s.r, id)
}

func (s *sqlStore) readConversation(ctx context.Context, q queryRower, id int64) (Conversation, error) {
	c, err := scanConversation(q.QueryRowContext(ctx, `SELECT `+conversationColumns+` FROM conversations WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Conversation{}, notFound("conversation %d", id)
	}
	if err != nil {
		return Conversation{}, fmt.Errorf("store: cannot read conversation %d: %w", id, err)
	}
	return c, nil
}

func (s *sqlStore) Conversations(ctx context.Context, p ListConversationsParams) ([]Conversation, error) {
	limit := p.Limit
	switch {
	case limit == 0:
		limit = DefaultConversationLimit
	case limit < 0 || limit > MaxConversationLimit:
		return nil, invalid("a page of conversations holds 1 to %d conversations, not %d", MaxConversationLimit, p.Limit)
	}
	if p.Offset < 0 || p.OwnerUID < 0 {
		return nil, invalid("a conversation listing needs an offset and an owner uid ≥ 0")
	}
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if p.OwnerUID > 0 {
		where = append(where, "owner_uid = "+arg(p.OwnerUID))
	}
	if !p.IncludeArchived {
		where = append(where, "archived = "+arg(false))
	}
	q := `SELECT ` + conversationColumns + ` FROM conversations`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY pinned DESC, updated_at DESC, id DESC LIMIT ` + arg(limit) + ` OFFSET ` + arg(p.Offset)
	return s.queryConversations(ctx, "list conversations", q, args...)
}

func (s *sqlStore) CountConversations(ctx context.Context, ownerUID int64) (total, busy int, err error) {
	if ownerUID <= 0 {
		return 0, 0, invalid("an owner uid is a positive number, not %d", ownerUID)
	}
	err = s.r.QueryRowContext(ctx, `
		SELECT COUNT(*), COALESCE(SUM(CASE WHEN status IN ($3, $4) THEN 1 ELSE 0 END), 0)
		FROM conversations WHERE owner_uid = $1 AND archived = $2`,
		ownerUID, false, ConversationProcessing, ConversationLocked).Scan(&total, &busy)
	if err != nil {
		return 0, 0, fmt.Errorf("store: cannot count the conversations of owner %d: %w", ownerUID, err)
	}
	return total, busy, nil
}

// explainConversationMiss says why a guarded update of conversation id
// touched no row.
func explainConversationMiss(ctx context.Context, q queryRower, id int64, from []ConversationStatus, claimID, runID string) error {
	var status ConversationStatus
	var claim, run string
	err := q.QueryRowContext(ctx, `SELECT status, claim_id, run_id FROM conversations WHERE id = $1`, id).Scan(&status, &claim, &run)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return notFound("conversation %d", id)
	case err != nil:
		return fmt.Errorf("store: cannot read conversation %d: %w", id, err)
	}
	want := statusNames(from)
	if claimID != "" {
		want += " under claim " + strconv.Quote(claimID)
	}
	if runID != "" {
		want += " on run " + strconv.Quote(runID)
	}
	return conflictError{msg: fmt.Sprintf("conversation %d is %s (claim %q, run %q), not %s", id, status, claim, run, want)}
}

func (s *sqlStore) ChangeConversation(ctx context.Context, p ChangeConversationParams) (Conversation, error) {
	if err := checkChangeConversation(p); err != nil {
		return Conversation{}, err
	}
	now := s.stamp()
	st := p.State
	args := []any{p.To, st.ClaimID, st.RunID, st.Decision, st.DecisionDigest, st.DecisionBy, st.DecisionReason,
		st.PendingInput, st.ErrorMessage, st.ErrorCode, p.KeepMessages, len(p.Append), now, p.ID}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	in := make([]string, len(p.From))
	for i, f := range p.From {
		in[i] = arg(f)
	}
	guard := `id = $14 AND status IN (` + strings.Join(in, ", ") + `)`
	if p.ClaimID != "" {
		guard += ` AND claim_id = ` + arg(p.ClaimID)
	}
	if p.RunID != "" {
		guard += ` AND run_id = ` + arg(p.RunID)
	}
	var out Conversation
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		// The guarded update comes first: on PostgreSQL it takes the row
		// lock, so a racing change waits here and then finds the status
		// moved on. message_count equals the highest seq, so the new count
		// says where the kept messages end.
		var err error
		out, err = scanConversation(tx.QueryRowContext(ctx, `
			UPDATE conversations SET status = $1, claim_id = $2, run_id = $3, decision = $4, decision_digest = $5,
				decision_by = $6, decision_reason = $7, pending_input = $8, error_message = $9, error_code = $10,
				message_count = (CASE WHEN $11 < 0 OR $11 >= message_count THEN message_count ELSE $11 END) + $12,
				updated_at = $13
			WHERE `+guard+`
			RETURNING `+conversationColumns, args...))
		if errors.Is(err, sql.ErrNoRows) {
			return explainConversationMiss(ctx, tx, p.ID, p.From, p.ClaimID, p.RunID)
		}
		if err != nil {
			return fmt.Errorf("store: cannot change conversation %d: %w", p.ID, err)
		}
		kept := out.MessageCount - len(p.Append)
		if p.KeepMessages >= 0 {
			if _, err := tx.ExecContext(ctx, `DELETE FROM chat_messages WHERE conversation_id = $1 AND seq > $2`, p.ID, kept); err != nil {
				return fmt.Errorf("store: cannot cut the messages of conversation %d after %d: %w", p.ID, kept, err)
			}
		}
		return insertChatMessages(ctx, tx, p.ID, kept+1, p.Append, now)
	})
	if err != nil {
		return Conversation{}, err
	}
	return out, nil
}

// insertChatMessages appends msgs from seq first on, in one INSERT.
func insertChatMessages(ctx context.Context, tx *sql.Tx, id int64, first int, msgs []NewChatMessage, at time.Time) error {
	if len(msgs) == 0 {
		return nil
	}
	var q strings.Builder
	q.WriteString(`INSERT INTO chat_messages (conversation_id, seq, role, content, beside_tool_call, notice, created_at) VALUES `)
	args := make([]any, 0, 7*len(msgs))
	for i, m := range msgs {
		if i > 0 {
			q.WriteString(", ")
		}
		n := len(args)
		fmt.Fprintf(&q, "($%d, $%d, $%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6, n+7)
		args = append(args, id, first+i, m.Role, m.Content, m.BesideToolCall, m.Notice, at)
	}
	if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
		return fmt.Errorf("store: cannot append %d message(s) to conversation %d (from seq %d): %w", len(msgs), id, first, err)
	}
	return nil
}

func (s *sqlStore) SetConversationFlags(ctx context.Context, p SetConversationFlagsParams) (Conversation, error) {
	if err := checkConversationID(p.ID); err != nil {
		return Conversation{}, err
	}
	var sets []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if p.Title != nil {
		if err := checkText("conversation title", *p.Title, MaxConversationTitleLen); err != nil {
			return Conversation{}, err
		}
		sets = append(sets, "title = "+arg(*p.Title))
	}
	if p.Pinned != nil {
		sets = append(sets, "pinned = "+arg(*p.Pinned))
	}
	if p.Archived != nil {
		sets = append(sets, "archived = "+arg(*p.Archived))
	}
	if len(sets) == 0 {
		return s.Conversation(ctx, p.ID)
	}
	// Every change refreshes updated_at: an archived row ages from its
	// archiving, a renamed one counts as used.
	sets = append(sets, "updated_at = "+arg(s.stamp()))
	c, err := scanConversation(s.w.QueryRowContext(ctx, `UPDATE conversations SET `+strings.Join(sets, ", ")+
		` WHERE id = `+arg(p.ID)+` RETURNING `+conversationColumns, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return Conversation{}, notFound("conversation %d", p.ID)
	}
	if err != nil {
		return Conversation{}, fmt.Errorf("store: cannot change the flags of conversation %d: %w", p.ID, err)
	}
	return c, nil
}

func (s *sqlStore) ClaimNextConversation(ctx context.Context, p ClaimConversationParams) (Conversation, error) {
	if p.ID < 0 {
		return Conversation{}, invalid("a conversation id is a positive number, not %d", p.ID)
	}
	if err := checkName("claim id", p.ClaimID); err != nil {
		return Conversation{}, err
	}
	// PostgreSQL: concurrent claimers skip the row another one locked
	// instead of queueing behind it and then finding it taken. SQLite has
	// one writer, so the guarded UPDATE alone is enough.
	lock := ""
	if s.drv.Dialect() == goose.DialectPostgres {
		lock = ` FOR UPDATE SKIP LOCKED`
	}
	args := []any{ConversationLocked, p.ClaimID, s.stamp(), ConversationProcessing}
	pick := `SELECT id FROM conversations WHERE status = $4`
	if p.ID > 0 {
		args = append(args, p.ID)
		pick += ` AND id = $5`
	}
	pick += ` ORDER BY updated_at, id LIMIT 1` + lock
	c, err := scanConversation(s.w.QueryRowContext(ctx, `
		UPDATE conversations SET status = $1, claim_id = $2, updated_at = $3
		WHERE id = (`+pick+`) AND status = $4
		RETURNING `+conversationColumns, args...))
	if errors.Is(err, sql.ErrNoRows) {
		if p.ID > 0 {
			return Conversation{}, notFound("conversation %d waiting for a consumer", p.ID)
		}
		return Conversation{}, notFound("conversation waiting for a consumer")
	}
	if err != nil {
		return Conversation{}, fmt.Errorf("store: cannot claim a conversation: %w", err)
	}
	return c, nil
}

func (s *sqlStore) ChatMessages(ctx context.Context, p ListChatMessagesParams) ([]ChatMessage, error) {
	if err := checkConversationID(p.ConversationID); err != nil {
		return nil, err
	}
	if p.After < 0 {
		return nil, invalid("chat messages are listed after a seq ≥ 0, not %d", p.After)
	}
	limit := p.Limit
	switch {
	case limit == 0:
		limit = DefaultChatMessageLimit
	case limit < 0 || limit > MaxChatMessageLimit:
		return nil, invalid("a page of chat messages holds 1 to %d messages, not %d", MaxChatMessageLimit, p.Limit)
	}
	rows, err := s.r.QueryContext(ctx, `
		SELECT conversation_id, seq, role, content, beside_tool_call, notice, created_at FROM chat_messages
		WHERE conversation_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, p.ConversationID, p.After, limit)
	if err != nil {
		return nil, fmt.Errorf("store: cannot list the messages of conversation %d: %w", p.ConversationID, err)
	}
	defer rows.Close()
	out := []ChatMessage{}
	for rows.Next() {
		var m ChatMessage
		if err := rows.Scan(&m.ConversationID, &m.Seq, &m.Role, &m.Content, &m.BesideToolCall, &m.Notice, timeScanner{&m.CreatedAt}); err != nil {
			return nil, fmt.Errorf("store: cannot read a message of conversation %d: %w", p.ConversationID, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: cannot list the messages of conversation %d: %w", p.ConversationID, err)
	}
	return out, nil
}

func (s *sqlStore) ReconcileCandidates(ctx context.Context, before time.Time, limit int) ([]Conversation, error) {
	if err := checkCutoff("a reconcile", before); err != nil {
		return nil, err
	}
	if limit <= 0 || limit > MaxConversationLimit {
		return nil, invalid("a page of conversations holds 1 to %d conversations, not %d", MaxConversationLimit, limit)
	}
	return s.queryConversations(ctx, "list conversations to reconcile", `SELECT `+conversationColumns+` FROM conversations
		WHERE status = $1 AND run_id <> '' AND decision <> '' AND updated_at < $2
		ORDER BY updated_at, id LIMIT $3`, ConversationProcessing, cutoff(before), limit)
}

func (s *sqlStore) StrandedConversations(ctx context.Context, limit int) ([]Conversation, error) {
	if limit <= 0 || limit > MaxConversationLimit {
		return nil, invalid("a page of conversations holds 1 to %d conversations, not %d", MaxConversationLimit, limit)
	}
	return s.queryConversations(ctx, "list conversations waiting on runs that moved on", `SELECT `+conversationColumns+` FROM conversations
		WHERE status IN ($1, $2) AND run_id <> '' AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = conversations.run_id
			AND (r.status IN ($3, $4) OR conversations.status = $1 AND r.status = $5 OR conversations.status = $2 AND r.status = $6))
		ORDER BY updated_at, id LIMIT $7`, ConversationAwaitingApproval, ConversationAwaitingInput, RunQueued, RunRunning,
		RunWaitingForApproval, RunWaitingForInput, limit)
}

func (s *sqlStore) FailStaleConversations(ctx context.Context, p FailStaleConversationsParams) (int, error) {
	if err := checkCutoff("failing stale conversations", p.Before); err != nil {
		return 0, err
	}
	if err := checkRunes("conversation error message", p.ErrorMessage, MaxConversationErrorLen); err != nil {
		return 0, err
	}
	if err := checkText("error code", p.ErrorCode, MaxNameLen); err != nil {
		return 0, err
	}
	// The claim, run and decision go too, so a Retry cannot replay an old
	// approval and a late consumer's guarded write finds the row moved on.
	res, err := s.w.ExecContext(ctx, `
		UPDATE conversations SET status = $1, error_message = $2, error_code = $3, claim_id = '', run_id = '',
			decision = '', decision_digest = '', decision_by = '', decision_reason = '', pending_input = '',
			updated_at = $4
		WHERE status IN ($5, $6) AND updated_at < $7`,
		ConversationFailed, p.ErrorMessage, p.ErrorCode, s.stamp(), ConversationProcessing, ConversationLocked, cutoff(p.Before))
	return affected(res, err, "fail stale conversations")
}

func (s *sqlStore) ArchiveIdleConversations(ctx context.Context, before time.Time) (int, error) {
	if err := checkCutoff("archiving idle conversations", before); err != nil {
		return 0, err
	}
	// updated_at is refreshed, so deletion counts from the archiving.
	res, err := s.w.ExecContext(ctx, `
		UPDATE conversations SET archived = $1, updated_at = $2
		WHERE status = $3 AND pinned = $4 AND archived = $4 AND updated_at < $5`,
		true, s.stamp(), ConversationIdle, false, cutoff(before))
	return affected(res, err, "archive idle conversations")
}

func (s *sqlStore) DeleteArchivedConversations(ctx context.Context, before time.Time) (int, error) {
	if err := checkCutoff("deleting archived conversations", before); err != nil {
		return 0, err
	}
	// The messages go by ON DELETE CASCADE (SQLite's writer runs with
	// foreign_keys on): deleting them first in a second statement could,
	// on PostgreSQL, strip a row that was unarchived in between.
	res, err := s.w.ExecContext(ctx, `DELETE FROM conversations WHERE archived = $1 AND updated_at < $2`, true, cutoff(before))
	return affected(res, err, "delete archived conversations")
}

// affected is the row count of an Exec, with what naming it in errors.
func affected(res sql.Result, err error, what string) (int, error) {
	if err != nil {
		return 0, fmt.Errorf("store: cannot %s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: cannot %s: %w", what, err)
	}
	return int(n), nil
}
