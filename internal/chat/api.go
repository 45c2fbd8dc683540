package chat

import (
	"encoding/json"
	"time"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/store"
)

// Code is a label code: every error the chat answers and every notice it
// stores is one, so that clients render it in the reader's language
// (Labels). A stored sentence would be frozen in the language of the
// moment it was written.
type Code string

// Error codes of the chat's operations.
const (
	CodeAccessDenied           Code = "accessDenied"
	CodeConversationNotFound   Code = "conversationNotFound"
	CodeConversationProcessing Code = "conversationProcessing"
	CodeNotResumable           Code = "notResumable"
	CodeDecisionInFlight       Code = "decisionInFlight"
	CodeApprovalNotAllowed     Code = "approvalNotAllowed"
	// CodeSecondApproverRequired: the configuration requires a second
	// person to approve (four-eyes); the owner may deny, another person
	// approves the run (the inbox, or POST /api/v1/runs/{id}/approve).
	CodeSecondApproverRequired Code = "secondApproverRequired"
	CodeNotAwaitingApproval    Code = "notAwaitingApproval"
	CodeNotAwaitingInput       Code = "notAwaitingInput"
	CodeInputInvalid           Code = "inputInvalid"
	CodeEditStale              Code = "editStale"
	CodeNotEditable            Code = "notEditable"
	CodeEmptyMessage           Code = "emptyMessage"
	CodeMessageTooLong         Code = "messageTooLong"
	CodeEmptyTitle             Code = "emptyTitle"
	CodeTooManyActive          Code = "tooManyActive"
	CodeTooManyConversations   Code = "tooManyConversations"
	CodeChatNotConfigured      Code = "chatNotConfigured"
	CodeStateChanged           Code = "stateChanged" // a lost compare-and-set
	CodeTimedOut               Code = "timedOut"
	CodeRunFinishedOutside     Code = "runFinishedOutside"
	CodeRunFailed              Code = "runFailed"
)

// Hand-back codes: a recorded decision or answer the runtime refused; the
// conversation waits again and shows the code beside the card.
const (
	HandBackStaleTurn             Code = "handBack.staleTurn"
	HandBackAlreadyResuming       Code = "handBack.alreadyResuming"
	HandBackApproverNotPermitted  Code = "handBack.approverNotPermitted"
	HandBackConfigurationInactive Code = "handBack.configurationInactive"
	HandBackNotAwaitingApproval   Code = "handBack.notAwaitingApproval"
	HandBackInputStale            Code = "handBack.inputStale"
	HandBackInputInvalid          Code = "handBack.inputInvalid"
	HandBackInputNotPermitted     Code = "handBack.inputNotPermitted"
	HandBackInputAlreadyResuming  Code = "handBack.inputAlreadyResuming"
	HandBackInputConfigOff        Code = "handBack.inputConfigOff"
	HandBackNotAwaitingInput      Code = "handBack.notAwaitingInput"
	// HandBackToolUnavailable: a tool of the pending turn is gone,
	// disabled or changed since it waited; no one could release it.
	HandBackToolUnavailable Code = "handBack.toolUnavailable"
)

// Notice codes stored with messages.
const (
	NoticeInputAnswer Code = "inputAnswer"
	NoticeDenyReason  Code = "denyReason"
)

// Error is a refusal of a chat operation: a code for the client and the
// HTTP status it maps to. Other errors are internal (500, cause to the log).
type Error struct {
	Code   Code
	Status int // 400, 403, 404, 409, 422 or 429
	// Detail is for the log only.
	Detail string
}

func (e *Error) Error() string {
	if e.Detail != "" {
		return "chat: " + string(e.Code) + ": " + e.Detail
	}
	return "chat: " + string(e.Code)
}

func refusal(status int, code Code, detail string) *Error {
	return &Error{Code: code, Status: status, Detail: detail}
}

// Settings are the chat's operator settings (config section "chat").
type Settings struct {
	// Task is the default chat task; "" leaves the chat unconfigured
	// (every turn fails with chatNotConfigured).
	Task string
	// AllowedGroups are the be_groups uids whose members may chat
	// (directly assigned groups); empty allows every backend user. Admins
	// always may.
	AllowedGroups []int64
	// GroupTasks map a group (effective groups) to a task; the first
	// match wins, else Task.
	GroupTasks []GroupTask
	// MaxActivePerUser bounds an owner's busy conversations (429).
	MaxActivePerUser int
	// MaxConversationsPerUser bounds an owner's unarchived conversations (429).
	MaxConversationsPerUser int
	// MaxMessageLength bounds a message, in characters (400).
	MaxMessageLength int
	// StaleAfter, ArchiveAfter and DeleteAfter drive cleanup; ≤ 0
	// disables archive and delete.
	StaleAfter   time.Duration
	ArchiveAfter time.Duration
	DeleteAfter  time.Duration
	// ReconcileGrace is how long a recorded decision may wait for a
	// worker before reconcile repairs it.
	ReconcileGrace time.Duration
}

// GroupTask maps a backend group to a chat task.
type GroupTask struct {
	Group int64
	Task  string
}

// Defaults.
const (
	DefaultMaxActivePerUser        = 3
	DefaultMaxConversationsPerUser = 50
	DefaultMaxMessageLength        = 10000
	DefaultStaleAfter              = 5 * time.Minute
	DefaultArchiveAfter            = 30 * 24 * time.Hour
	DefaultDeleteAfter             = 90 * 24 * time.Hour
	DefaultReconcileGrace          = 45 * time.Second
	DefaultPollInterval            = 200 * time.Millisecond
	MaxErrorLen                    = 500
)

// View is a conversation as a client sees it.
type View struct {
	Conversation store.Conversation
	// Resumable reports whether Retry may run the turn again.
	Resumable bool
	// MayDecide reports whether the reader may decide the pending card
	// at all: MayApprove or MayDeny.
	MayDecide bool
	// MayApprove and MayDeny say what the reader may decide on the card
	// of a conversation awaiting approval; DecideReason says why
	// MayApprove is false (secondApproverRequired: another person must
	// approve; notAwaitingApproval; approvalNotAllowed). All are zero on
	// a conversation not awaiting approval.
	MayApprove   bool
	MayDeny      bool
	DecideReason Code
}

// Page is what Messages answers.
type Page struct {
	View
	Messages []store.ChatMessage
	// TotalCount is the number of messages; a client whose count shrank
	// reloads.
	TotalCount int
	// Pending is the card or question a waiting conversation shows: the
	// pending calls, previews, digest, and for input the schema.
	Pending *agent.InboxItem
}

// SendParams are the parameters of Send.
type SendParams struct {
	ID      int64
	Content string
}

// EditParams replace the user message at Seq and everything after it.
type EditParams struct {
	ID              int64
	Seq             int
	Content         string
	ExpectedContent string // the text the client edited; else editStale
	MessageCount    int    // the count the client saw; else editStale
}

// DecideParams record an approval decision on a waiting conversation.
type DecideParams struct {
	ID      int64
	Approve bool
	Digest  string
	Reason  string
}

// InputParams record an answer on a conversation waiting for input.
type InputParams struct {
	ID     int64
	Digest string
	Data   json.RawMessage
}

// CleanupParams override Settings for one cleanup.
type CleanupParams struct {
	StaleAfter   time.Duration
	ArchiveAfter time.Duration
	DeleteAfter  time.Duration
}

// CleanupReport counts what cleanup did.
type CleanupReport struct {
	Failed   int `json:"failed"`
	Archived int `json:"archived"`
	Deleted  int `json:"deleted"`
}

// Availability is what the status route answers.
type Availability struct {
	Available    bool   `json:"available"`
	Reason       Code   `json:"reason,omitempty"`
	ActiveCount  int    `json:"activeConversationCount"`
	MaxLength    int    `json:"maxMessageLength"`
	Conversation string `json:"-"`
}

// Codes lists every code the chat answers or stores, for label checks.
func Codes() []Code {
	return []Code{
		CodeAccessDenied, CodeConversationNotFound, CodeConversationProcessing, CodeNotResumable,
		CodeDecisionInFlight, CodeApprovalNotAllowed, CodeSecondApproverRequired, CodeNotAwaitingApproval, CodeNotAwaitingInput,
		CodeInputInvalid, CodeEditStale, CodeNotEditable, CodeEmptyMessage, CodeMessageTooLong,
		CodeEmptyTitle, CodeTooManyActive, CodeTooManyConversations, CodeChatNotConfigured,
		CodeStateChanged, CodeTimedOut, CodeRunFinishedOutside, CodeRunFailed,
		HandBackStaleTurn, HandBackAlreadyResuming, HandBackApproverNotPermitted,
		HandBackConfigurationInactive, HandBackNotAwaitingApproval, HandBackInputStale,
		HandBackInputInvalid, HandBackInputNotPermitted, HandBackInputAlreadyResuming,
		HandBackInputConfigOff, HandBackNotAwaitingInput, HandBackToolUnavailable,
		NoticeInputAnswer, NoticeDenyReason,
	}
}
