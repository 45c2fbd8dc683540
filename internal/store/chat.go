package store

import (
	"context"
	"time"
)

// Limits on conversations and their messages.
const (
	// MaxChatMessageLen bounds one stored message, in bytes. The chat's
	// own per-user limit (configurable) is lower.
	MaxChatMessageLen = 1 << 20
	// MaxConversationTitleLen bounds a title, in bytes.
	MaxConversationTitleLen = 255
	// MaxConversationErrorLen bounds a conversation's error message, in
	// characters (runes). Cutting a longer one is the caller's job: the
	// store refuses it.
	MaxConversationErrorLen = 500
	// MaxChatMessagesPerChange bounds the messages one change appends.
	MaxChatMessagesPerChange = 256
	// DefaultConversationLimit and MaxConversationLimit page Conversations.
	DefaultConversationLimit = 50
	MaxConversationLimit     = 500
	// DefaultChatMessageLimit and MaxChatMessageLimit page ChatMessages.
	DefaultChatMessageLimit = 1000
	MaxChatMessageLimit     = 10000
)

// ConversationStatus is where a conversation stands.
//
// idle: nothing to do. processing: a turn (or a recorded decision or
// answer) waits for a consumer. locked: a consumer runs the turn.
// awaiting_approval / awaiting_input: the run waits for a person.
// failed: the last turn did not complete; Retry may run it again.
type ConversationStatus string

const (
	ConversationIdle             ConversationStatus = "idle"
	ConversationProcessing       ConversationStatus = "processing"
	ConversationLocked           ConversationStatus = "locked"
	ConversationAwaitingApproval ConversationStatus = "awaiting_approval"
	ConversationAwaitingInput    ConversationStatus = "awaiting_input"
	ConversationFailed           ConversationStatus = "failed"
)

// Valid reports whether s is one of the statuses.
func (s ConversationStatus) Valid() bool {
	switch s {
	case ConversationIdle, ConversationProcessing, ConversationLocked,
		ConversationAwaitingApproval, ConversationAwaitingInput, ConversationFailed:
		return true
	}
	return false
}

// Busy reports whether a turn is queued or running (processing, locked).
func (s ConversationStatus) Busy() bool {
	return s == ConversationProcessing || s == ConversationLocked
}

// Decision is what a person recorded on a waiting conversation, to be
// carried out by the worker.
type Decision string

const (
	DecisionNone    Decision = ""
	DecisionApprove Decision = "approve"
	DecisionDeny    Decision = "deny"
	DecisionInput   Decision = "input"
)

// Valid reports whether d is one of the decisions (DecisionNone included).
func (d Decision) Valid() bool {
	return d == DecisionNone || d == DecisionApprove || d == DecisionDeny || d == DecisionInput
}

// ChatRole is the author of a stored chat message.
type ChatRole string

const (
	ChatRoleUser      ChatRole = "user"
	ChatRoleAssistant ChatRole = "assistant"
)

// Valid reports whether r is one of the roles.
func (r ChatRole) Valid() bool { return r == ChatRoleUser || r == ChatRoleAssistant }

// Conversation is one chat conversation as stored, without its messages.
type Conversation struct {
	ID            int64
	OwnerUID      int64  // the TYPO3 backend user who owns it
	OwnerUsername string // as it was at creation
	Title         string
	Status        ConversationStatus
	// Task is the chat task the conversation runs with, chosen at
	// creation (group → task mapping, else the default chat task).
	Task string
	ConversationState
	Pinned       bool
	Archived     bool
	MessageCount int
	CreatedAt    time.Time // UTC, microsecond precision
	// UpdatedAt is refreshed by every change; cleanup and reconcile
	// measure a conversation's age from it.
	UpdatedAt time.Time
}

// ConversationState are the fields a turn and a decision write. A change
// writes them whole, so a field an earlier state wrote never survives a
// later one by accident.
type ConversationState struct {
	// ClaimID names the consumer running the turn (locked).
	ClaimID string
	// RunID is the agent run being waited on or decided.
	RunID string
	// Decision, DecisionDigest, DecisionBy, DecisionReason and
	// PendingInput are a recorded decision or answer the worker has not
	// carried out yet.
	Decision       Decision
	DecisionDigest string
	DecisionBy     string // username of the person who decided
	DecisionReason string
	PendingInput   string // JSON object; "" when none
	// ErrorMessage is a sanitised sentence (≤ MaxConversationErrorLen);
	// ErrorCode a label code such as "chatNotConfigured" or a hand-back
	// reason.
	ErrorMessage string
	ErrorCode    string
}

// HasPendingDecision reports whether a recorded decision or answer waits
// to be carried out.
func (s ConversationState) HasPendingDecision() bool {
	return s.Decision != DecisionNone && s.RunID != ""
}

// ChatMessage is one stored message of a conversation.
type ChatMessage struct {
	ConversationID int64
	// Seq orders the messages of a conversation, from 1, without gaps.
	Seq     int
	Role    ChatRole
	Content string
	// BesideToolCall marks text the model wrote beside a tool call; on
	// later turns it is joined with the assistant message that follows.
	BesideToolCall bool
	// Notice is a label code shown with the message (e.g. "inputAnswer").
	Notice    string
	CreatedAt time.Time
}

// NewChatMessage is a message to append.
type NewChatMessage struct {
	Role           ChatRole
	Content        string
	BesideToolCall bool
	Notice         string
}

// CreateConversationParams are the parameters of CreateConversation.
type CreateConversationParams struct {
	OwnerUID      int64  // required, > 0
	OwnerUsername string // required
	Title         string
	Task          string
}

// ListConversationsParams filter and page Conversations.
type ListConversationsParams struct {
	OwnerUID        int64 // 0 lists every owner's
	IncludeArchived bool
	Limit           int // 0 = DefaultConversationLimit, at most MaxConversationLimit
	Offset          int
}

// ChangeConversationParams describe one compare-and-set change.
type ChangeConversationParams struct {
	ID int64 // required
	// From are the statuses the row must be in; required (a change is
	// always a compare-and-set).
	From []ConversationStatus
	// ClaimID, when set, must also equal the row's ClaimID (a consumer
	// writing only while the turn is still its own).
	ClaimID string
	// RunID, when set, must also equal the row's RunID (a change made
	// because of what that run did applies only while the conversation
	// is still about it).
	RunID string
	// To is the new status; required.
	To ConversationStatus
	// State replaces the row's ConversationState whole.
	State ConversationState
	// KeepMessages, when ≥ 0, deletes the messages with Seq greater than
	// it before appending (an edit replaces the tail); -1 keeps all.
	// Mind the zero value: 0 deletes every message. Values below -1 are
	// refused.
	KeepMessages int
	// Append are stored after the existing messages, in order, in the
	// same transaction as the row change.
	Append []NewChatMessage
}

// SetConversationFlagsParams change the presentation fields of a
// conversation; nil leaves a field as it is. They are no compare-and-set:
// they never touch the turn's state.
type SetConversationFlagsParams struct {
	ID       int64 // required
	Title    *string
	Pinned   *bool
	Archived *bool
}

// ClaimConversationParams are the parameters of ClaimNextConversation.
type ClaimConversationParams struct {
	// ID, when > 0, claims that conversation only.
	ID      int64
	ClaimID string // required
}

// ListChatMessagesParams page ChatMessages.
type ListChatMessagesParams struct {
	ConversationID int64 // required
	// After lists messages with Seq greater than it.
	After int
	Limit int // 0 = DefaultChatMessageLimit, at most MaxChatMessageLimit
}

// FailStaleConversationsParams are the parameters of FailStaleConversations.
type FailStaleConversationsParams struct {
	// Before: rows processing or locked whose UpdatedAt is older fail.
	Before       time.Time
	ErrorMessage string
	ErrorCode    string
}

// Conversations persists chat conversations and their ordered messages.
// Every status change is a compare-and-set: of two racing changes from the
// same state exactly one wins, the other gets ErrConflict and writes
// nothing (its messages included).
type Conversations interface {
	// CreateConversation stores a new idle conversation.
	CreateConversation(ctx context.Context, params CreateConversationParams) (Conversation, error)
	// Conversation returns one conversation; ErrNotFound.
	Conversation(ctx context.Context, id int64) (Conversation, error)
	// Conversations lists conversations pinned first, then most recently
	// updated first; never nil.
	Conversations(ctx context.Context, params ListConversationsParams) ([]Conversation, error)
	// CountConversations counts an owner's conversations that are not
	// archived, and how many of them are busy (processing or locked).
	CountConversations(ctx context.Context, ownerUID int64) (total, busy int, err error)
	// ChangeConversation applies one compare-and-set change with its
	// messages in one transaction and returns the row as stored, with
	// MessageCount exact and UpdatedAt refreshed; ErrConflict when the
	// row is not in params.From (or not claimed by params.ClaimID),
	// ErrNotFound for an unknown id. A refused change writes nothing.
	ChangeConversation(ctx context.Context, params ChangeConversationParams) (Conversation, error)
	// SetConversationFlags renames, pins or archives, refreshing
	// UpdatedAt (an archived conversation ages from its archiving); with
	// every field nil it returns the row unchanged. ErrNotFound.
	SetConversationFlags(ctx context.Context, params SetConversationFlagsParams) (Conversation, error)
	// ClaimNextConversation moves one processing conversation (the one
	// named, or the least recently updated) to locked under
	// params.ClaimID, keeping its state (a recorded decision travels with
	// it). Concurrent claims never get the same row; ErrNotFound when none
	// is claimable, also when the one named is unknown or not processing.
	ClaimNextConversation(ctx context.Context, params ClaimConversationParams) (Conversation, error)
	// ChatMessages lists a conversation's messages in Seq order; never nil.
	ChatMessages(ctx context.Context, params ListChatMessagesParams) ([]ChatMessage, error)
	// ReconcileCandidates lists processing conversations with a run and a
	// recorded decision whose UpdatedAt is older than before, oldest
	// first, at most limit.
	ReconcileCandidates(ctx context.Context, before time.Time, limit int) ([]Conversation, error)
	// StrandedConversations lists up to limit conversations waiting
	// (awaiting_approval or awaiting_input) on a run that no longer waits
	// for the same — decided, answered, cancelled or gone — least
	// recently updated first. A run queued or running is not listed: it
	// is still under way.
	StrandedConversations(ctx context.Context, limit int) ([]Conversation, error)
	// FailStaleConversations moves processing and locked rows older than
	// params.Before to failed with the given error, clearing their claim,
	// run and decision fields; it returns how many.
	FailStaleConversations(ctx context.Context, params FailStaleConversationsParams) (int, error)
	// ArchiveIdleConversations archives idle, unpinned conversations not
	// updated since before, refreshing their UpdatedAt; it returns how many.
	ArchiveIdleConversations(ctx context.Context, before time.Time) (int, error)
	// DeleteArchivedConversations deletes archived conversations (with
	// their messages) not updated since before; it returns how many.
	DeleteArchivedConversations(ctx context.Context, before time.Time) (int, error)
}

// Scope is one right a service token carries.
type Scope string

const (
	// A token acts on the runs its user may see (an admin's: every run,
	// anyone else's: their own); only ScopeAdmin widens that to every run.
	ScopeAgentRead    Scope = "agent:read"    // runs, events, inbox, tools
	ScopeAgentRun     Scope = "agent:run"     // start runs
	ScopeAgentApprove Scope = "agent:approve" // decide approvals and input of the runs it sees
	ScopeAgentCancel  Scope = "agent:cancel"  // cancel the runs it sees
	ScopeAdmin        Scope = "admin"         // everything an admin may do, on every run
)

// Valid reports whether s is one of Scopes.
func (s Scope) Valid() bool {
	for _, v := range Scopes() {
		if s == v {
			return true
		}
	}
	return false
}

// Scopes lists every scope.
func Scopes() []Scope {
	return []Scope{ScopeAgentRead, ScopeAgentRun, ScopeAgentApprove, ScopeAgentCancel, ScopeAdmin}
}

// ServiceToken is a service account's bearer token as stored: only the
// SHA-256 of the secret is kept.
type ServiceToken struct {
	ID   int64
	Name string // unique
	// Username is the TYPO3 backend user the token acts as.
	Username   string
	Scopes     []Scope
	SecretHash string // hex SHA-256 of the secret
	CreatedBy  string
	CreatedAt  time.Time
	ExpiresAt  time.Time // zero: never
	LastUsedAt time.Time // zero: never used
	Revoked    bool
}

// CreateServiceTokenParams are the parameters of CreateServiceToken.
type CreateServiceTokenParams struct {
	Name       string  // required, unique
	Username   string  // required
	Scopes     []Scope // at least one, each once
	SecretHash string  // required: 64 lowercase hex digits
	CreatedBy  string  // required
	ExpiresAt  time.Time
}

// WebSession is a browser login as stored: only the SHA-256 of the
// cookie's secret is kept.
type WebSession struct {
	IDHash    string // hex SHA-256 of the cookie value (64 lowercase hex digits)
	Username  string
	CSRFToken string
	CreatedAt time.Time // zero on create: the store's clock
	ExpiresAt time.Time // required, after CreatedAt
}

// Credentials persists service tokens and browser sessions.
type Credentials interface {
	// CreateServiceToken stores a token; a taken name is ErrConflict
	// (matching ErrExists too).
	CreateServiceToken(ctx context.Context, params CreateServiceTokenParams) (ServiceToken, error)
	// ServiceTokenByHash returns the token with that secret hash, revoked
	// or not; ErrNotFound.
	ServiceTokenByHash(ctx context.Context, secretHash string) (ServiceToken, error)
	// ServiceTokens lists every token by name; never nil.
	ServiceTokens(ctx context.Context) ([]ServiceToken, error)
	// RevokeServiceToken revokes the named token; ErrNotFound.
	RevokeServiceToken(ctx context.Context, name string) error
	// TouchServiceToken records a use at at (zero: the store's clock);
	// an earlier use never overwrites a later one. ErrNotFound.
	TouchServiceToken(ctx context.Context, id int64, at time.Time) error
	// CreateWebSession stores a session; a taken IDHash is ErrConflict.
	CreateWebSession(ctx context.Context, s WebSession) error
	// WebSession returns the session with that hash if it has not
	// expired (ExpiresAt after the store's clock); ErrNotFound otherwise.
	WebSession(ctx context.Context, idHash string) (WebSession, error)
	// DeleteWebSession removes a session (logout); no error when absent.
	DeleteWebSession(ctx context.Context, idHash string) error
	// DeleteExpiredWebSessions removes expired sessions; it returns how many.
	DeleteExpiredWebSessions(ctx context.Context) (int, error)
}
