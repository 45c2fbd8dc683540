package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// ErrConflict is matched (errors.Is) by every error that reports a guarded
// update which found the row in another state: a run no longer running
// under the caller's lease, or already finished.
var ErrConflict = errors.New("store: conflict")

type conflictError struct{ msg string }

func (e conflictError) Error() string        { return "store: " + e.msg }
func (e conflictError) Is(target error) bool { return target == ErrConflict }

// Limits on runs and their events.
const (
	// MaxRunEventPayload bounds one event's JSON payload, in bytes. At
	// privacy level full an event may carry a whole transcript.
	MaxRunEventPayload = 8 << 20
	// MaxRunEventsPerStep bounds the events one write appends.
	MaxRunEventsPerStep = 256
	// MaxSuspendedState bounds the sealed state of a suspended run.
	MaxSuspendedState = 32 << 20
	// MaxRunAnswer bounds the answer a run keeps for its caller, in bytes.
	MaxRunAnswer = 8 << 20
	// MaxRunErrorLen bounds a run's public error text.
	MaxRunErrorLen = 4096
	// DefaultRunLimit and MaxRunLimit page Runs.
	DefaultRunLimit = 50
	MaxRunLimit     = 1000
	// DefaultRunEventLimit and MaxRunEventLimit page RunEvents.
	DefaultRunEventLimit = 1000
	MaxRunEventLimit     = 10000
)

// RunStatus is where a run stands. The last three are terminal: a
// terminal row never changes again.
type RunStatus string

const (
	RunQueued             RunStatus = "queued"
	RunRunning            RunStatus = "running"
	RunWaitingForApproval RunStatus = "waiting_for_approval"
	RunWaitingForInput    RunStatus = "waiting_for_input"
	RunCompleted          RunStatus = "completed"
	RunFailed             RunStatus = "failed"
	RunCancelled          RunStatus = "cancelled"
)

// Terminal reports whether s is completed, failed or cancelled.
func (s RunStatus) Terminal() bool {
	return s == RunCompleted || s == RunFailed || s == RunCancelled
}

// Waiting reports whether s waits for a person (approval or input).
func (s RunStatus) Waiting() bool {
	return s == RunWaitingForApproval || s == RunWaitingForInput
}

// Valid reports whether s is one of the statuses.
func (s RunStatus) Valid() bool {
	return s == RunQueued || s == RunRunning || s.Waiting() || s.Terminal()
}

// Runs persists agent runs and their ordered event logs. The run's owner
// vocabulary (outcomes, termination reasons, event kinds) belongs to
// package agent; the store keeps it as given and enforces only the status
// transitions: running rows move under their lease, terminal rows never
// move (a run cancelled during a fenced write only takes that write's
// step, RecordCancelledWrite).
type Runs interface {
	// CreateRun stores a new run in status running, leased to
	// params.LeaseOwner, together with its first events.
	CreateRun(ctx context.Context, params CreateRunParams) (Run, error)
	// RecordRunStep appends events to a running run and, in the same
	// transaction, stores its progress, renews its lease and sets its
	// pending effect. It is guarded: unless the run is running under
	// params.LeaseOwner nothing is written and the error matches
	// ErrConflict (ErrNotFound for an unknown run).
	//
	// A step that stamps a pending effect (the write fence) or stores a
	// continuation is durable when RecordRunStep returns. Other steps are
	// heartbeats and trace:
	// on PostgreSQL they commit without waiting for the WAL flush, so a
	// crash of the database server may lose the last fraction of a second
	// of them, never a part of one. Creating, suspending and settling a
	// run always wait.
	RecordRunStep(ctx context.Context, params RecordRunStepParams) error
	// SuspendRun moves a running run under params.LeaseOwner to a waiting
	// status with its sealed state and turn digest, releasing the lease;
	// guarded as RecordRunStep.
	SuspendRun(ctx context.Context, params SuspendRunParams) (Run, error)
	// SettleRun moves a run that is not terminal to a terminal status and
	// clears its lease, pending effect and suspended state. With
	// params.LeaseOwner set it also requires that lease. A terminal run is
	// an ErrConflict: terminal is terminal.
	SettleRun(ctx context.Context, params SettleRunParams) (Run, error)
	// ClaimWaitingRun moves a run waiting in params.From with a sealed
	// state to running under params.LeaseOwner and returns it with that
	// state and its next event seq, read in the same transaction. A run
	// not waiting there is an ErrConflict (ErrNotFound for an unknown
	// run): of two claims exactly one wins.
	ClaimWaitingRun(ctx context.Context, params ClaimWaitingRunParams) (ClaimedRun, error)
	// ReleaseRun moves a running run under params.LeaseOwner back to a
	// waiting status, keeping its sealed state, with events; guarded as
	// RecordRunStep.
	ReleaseRun(ctx context.Context, params ReleaseRunParams) (Run, error)
	// CancelRun moves a run that is not terminal to cancelled, clearing
	// its parked state but keeping its counters. A terminal run is an
	// ErrConflict, so only one cancel wins. It clears the lease too,
	// unless a write is fenced (a pending effect stamped): then the lease
	// owner and the pending effect stay, so that the segment whose write
	// is in flight can still record it (RecordCancelledWrite); a write
	// that started is on record whatever happens next.
	CancelRun(ctx context.Context, id string) (Run, error)
	// RecordCancelledWrite stores the step of a fenced write whose run
	// was cancelled while the write ran: the events and the progress go
	// to the cancelled row, whose lease owner and pending effect are then
	// cleared. Unless the run is cancelled with a write fenced under
	// params.LeaseOwner, nothing is written and the error matches
	// ErrConflict (ErrNotFound for an unknown run). params.Lease and
	// params.Continuation are ignored. It is a durable commit.
	RecordCancelledWrite(ctx context.Context, params RecordRunStepParams) error
	// EnqueueRun stores a new run in status queued with its sealed
	// request, available at once.
	EnqueueRun(ctx context.Context, params EnqueueRunParams) (Run, error)
	// ClaimQueuedRun moves one available queued run (params.ID, or the
	// oldest) to running under params.LeaseOwner and returns it with its
	// sealed request and next event seq. Concurrent claims never get the
	// same run; ErrNotFound when none is claimable.
	ClaimQueuedRun(ctx context.Context, params ClaimQueuedRunParams) (ClaimedRun, error)
	// ExpiredRuns lists running runs whose lease expired before now,
	// oldest lease first, at most limit.
	ExpiredRuns(ctx context.Context, limit int) ([]Run, error)
	// RequeueRun puts a running run whose lease is still held by
	// params.LeaseOwner (a live segment giving up, or an expired lease the
	// reaper found) back in the queue, available after params.Delay, with
	// its requeue count increased and its pending effect cleared. It needs
	// a stored request. Guarded as RecordRunStep; with params.Expired set
	// the lease must also have expired.
	RequeueRun(ctx context.Context, params RequeueRunParams) (Run, error)
	// ResealRun replaces the sealed state or queued request of a run
	// (key rotation), guarded by the old value: a run that moved on
	// meanwhile is an ErrConflict and keeps what it has.
	ResealRun(ctx context.Context, params ResealRunParams) error
	// ParkedRuns lists the runs holding a sealed state or queued request
	// (waiting, queued or running), oldest first, paged by id.
	ParkedRuns(ctx context.Context, params ParkedRunsParams) ([]ParkedRun, error)
	// Run returns one run, without its suspended state; ErrNotFound.
	Run(ctx context.Context, id string) (Run, error)
	// RunSuspendedState returns the sealed state of a suspended run;
	// ErrNotFound when the run is unknown or holds none.
	RunSuspendedState(ctx context.Context, id string) (string, error)
	// RunAnswer returns the answer a settled run kept for its caller
	// (SettleRunParams.Answer); "" when it kept none. An unknown run is
	// ErrNotFound.
	RunAnswer(ctx context.Context, id string) (string, error)
	// Runs lists runs newest first, filtered and paged by params; never nil.
	Runs(ctx context.Context, params ListRunsParams) ([]Run, error)
	// RunEvents lists a run's events in seq order; never nil. An unknown
	// run has no events.
	RunEvents(ctx context.Context, params ListRunEventsParams) ([]RunEvent, error)
}

// RunProgress are a run's counters, stored whole at every step so that a
// repeated write stores the same row.
type RunProgress struct {
	Rounds       int
	ToolCalls    int
	InputTokens  int64
	OutputTokens int64
	// Cost is the estimated cost of every provider call so far, in
	// picodollars (1e-12 USD), so that sums are exact.
	Cost int64
	// CostUnknown is set when a model without prices answered; the
	// column is then NULL.
	CostUnknown bool
	// Truncated is set when the round cap ended the run.
	Truncated bool
}

// Run is one agent run as stored.
type Run struct {
	ID                string // a UUID chosen by the caller
	Status            RunStatus
	Outcome           string // "" until the run stops
	TerminationReason string // "" until the run ends
	OwnerUsername     string // the TYPO3 backend user the run acts as
	OwnerUID          int64
	Configuration     string
	CallerSource      string // e.g. "cli", "chat"
	CallerOperation   string // e.g. "run", "chatTurn"
	Privacy           string // "metadata" or "full"
	RunProgress
	Error      string // public-safe, "" when none
	ErrorClass string // e.g. a provider failure class
	// LeaseOwner and LeaseExpires name who executes the run and until
	// when; both empty outside running, except that a run cancelled while
	// a fenced write was in flight keeps the writer's LeaseOwner until
	// that write is recorded.
	LeaseOwner   string
	LeaseExpires time.Time
	// PendingEffect is the effect of a write fenced but not yet recorded.
	// On a cancelled run it names a write that was in flight at the
	// cancel and whose step never came: its outcome is unknown.
	PendingEffect string
	// TurnDigest identifies the pending turn of a waiting run.
	TurnDigest string
	// HasSuspendedState reports whether the row holds a sealed state.
	HasSuspendedState bool
	// HasQueuedRequest reports whether the row holds a sealed request, so
	// that a worker can run it again.
	HasQueuedRequest bool
	// RequeueCount counts the times the run was put back in the queue.
	RequeueCount int
	// AvailableAt is when a queued run may be claimed; zero for other runs.
	AvailableAt time.Time
	CreatedAt   time.Time // UTC, microsecond precision
	UpdatedAt   time.Time
	FinishedAt  time.Time // zero until terminal
}

// RunEventParams is one event to append. Seq is given by the caller: a
// run's events are numbered 0, 1, 2, … and a seq stored twice is refused.
type RunEventParams struct {
	Seq      int64
	Kind     string
	Round    int
	Duration time.Duration // stored in whole milliseconds
	// Payload is a JSON value; empty means {}.
	Payload json.RawMessage
	// At is when the step happened; zero means when it is stored. Steps
	// are often written in batches, so the time is the caller's.
	At time.Time
}

// RunEvent is one stored event.
type RunEvent struct {
	RunID     string
	Seq       int64
	Kind      string
	Round     int
	Duration  time.Duration // millisecond precision
	Payload   json.RawMessage
	CreatedAt time.Time
}

// CreateRunParams are the parameters of CreateRun.
type CreateRunParams struct {
	ID              string // required
	OwnerUsername   string
	OwnerUID        int64 // ≥ 0
	Configuration   string
	CallerSource    string
	CallerOperation string
	Privacy         string
	LeaseOwner      string        // required
	Lease           time.Duration // > 0
	Events          []RunEventParams
}

// RecordRunStepParams are the parameters of RecordRunStep.
type RecordRunStepParams struct {
	ID         string
	LeaseOwner string
	Lease      time.Duration // the lease is renewed to now + Lease
	Progress   RunProgress
	// PendingEffect is stamped as given; "" clears it.
	PendingEffect string
	// Continuation, when set, replaces the stored request of a run that
	// has one (a queued run), so that a worker taking the run over after
	// this step goes on from it instead of starting again: the step of a
	// write stores where the run stands after the write. A run without a
	// stored request keeps none.
	Continuation string
	Events       []RunEventParams
}

// SuspendRunParams are the parameters of SuspendRun.
type SuspendRunParams struct {
	ID         string
	LeaseOwner string
	Status     RunStatus // RunWaitingForApproval or RunWaitingForInput
	Outcome    string
	Progress   RunProgress
	TurnDigest string
	// SuspendedState is the sealed pending turn; required.
	SuspendedState string
	Events         []RunEventParams
}

// SettleRunParams are the parameters of SettleRun.
type SettleRunParams struct {
	ID string
	// LeaseOwner, when set, must hold the run's lease.
	LeaseOwner string
	// Expired, with LeaseOwner, also requires the lease to have expired
	// (the reaper, which must not settle a run that came back to life).
	Expired           bool
	Status            RunStatus // terminal
	Outcome           string
	TerminationReason string
	Progress          RunProgress
	Error             string
	ErrorClass        string
	// Answer is what the run keeps for its caller (a JSON document the
	// caller reads back with RunAnswer); "" keeps nothing. At most
	// MaxRunAnswer bytes.
	Answer string
	Events []RunEventParams
}

// ListRunsParams filter and page Runs. The zero value lists the newest
// DefaultRunLimit runs.
type ListRunsParams struct {
	// OwnerUsername and Status, when set, keep only matching runs.
	OwnerUsername string
	Status        RunStatus
	// Before, when set, keeps only runs older than the run with this id:
	// pass the last id of a page to get the next one.
	Before string
	// Limit is the page size: 0 means DefaultRunLimit; more than
	// MaxRunLimit, or negative, is refused.
	Limit int
}

// ListRunEventsParams page RunEvents.
type ListRunEventsParams struct {
	RunID string // required
	// FromSeq keeps events with seq ≥ FromSeq; 0 lists from the start.
	FromSeq int64
	// Limit is the page size: 0 means DefaultRunEventLimit.
	Limit int
}

// ClaimedRun is a run a claim moved to running, with the sealed state or
// request it was parked with and the seq its next event takes.
type ClaimedRun struct {
	Run
	// Sealed is the suspended state (ClaimWaitingRun) or the queued
	// request (ClaimQueuedRun).
	Sealed  string
	NextSeq int64
}

// ClaimWaitingRunParams are the parameters of ClaimWaitingRun.
type ClaimWaitingRunParams struct {
	ID         string
	From       RunStatus // RunWaitingForApproval or RunWaitingForInput
	LeaseOwner string
	Lease      time.Duration
}

// ReleaseRunParams are the parameters of ReleaseRun.
type ReleaseRunParams struct {
	ID         string
	LeaseOwner string
	Status     RunStatus // waiting
	Events     []RunEventParams
}

// EnqueueRunParams are the parameters of EnqueueRun. The lease fields of
// the embedded CreateRunParams are ignored: a queued run has none.
type EnqueueRunParams struct {
	CreateRunParams
	// QueuedRequest is the sealed request; required.
	QueuedRequest string
}

// ClaimQueuedRunParams are the parameters of ClaimQueuedRun.
type ClaimQueuedRunParams struct {
	// ID, when set, claims only that run.
	ID         string
	LeaseOwner string
	Lease      time.Duration
}

// RequeueRunParams are the parameters of RequeueRun.
type RequeueRunParams struct {
	ID         string
	LeaseOwner string
	// Expired requires the lease to have expired (the reaper).
	Expired bool
	Delay   time.Duration
	Events  []RunEventParams
}

// ResealRunParams are the parameters of ResealRun.
type ResealRunParams struct {
	ID string
	// Queued selects the queued request; otherwise the suspended state.
	Queued   bool
	Old, New string
}

// ParkedRunsParams page ParkedRuns.
type ParkedRunsParams struct {
	// After keeps runs with an id greater than this one.
	After string
	Limit int // 1 to MaxRunLimit
}

// ParkedRun is a run's sealed values, for key rotation.
type ParkedRun struct {
	ID             string
	SuspendedState string // "" when none
	QueuedRequest  string // "" when none
}
