package chat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tracing"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Store is what the chat needs from the store.
type Store interface {
	store.Conversations
}

// Runtime is what the chat needs from the agent runtime;
// *agent.Runtime implements it. It must be safe for concurrent use.
type Runtime interface {
	Run(ctx context.Context, req agent.Request) agent.Result
	Approve(ctx context.Context, p agent.ApproveParams) (agent.Result, error)
	SubmitInput(ctx context.Context, p agent.SubmitInputParams) (agent.Result, error)
	Status(ctx context.Context, actor *typo3.BackendUser, access agent.Access, id string) (store.Run, error)
	Pending(ctx context.Context, actor *typo3.BackendUser, access agent.Access, id string) (agent.InboxItem, error)
	Cancel(ctx context.Context, actor *typo3.BackendUser, access agent.Access, id string) (bool, error)
	Rights(ctx context.Context, actor *typo3.BackendUser, access agent.Access, id string) (agent.Rights, error)
	Answer(ctx context.Context, actor *typo3.BackendUser, access agent.Access, id string) (agent.Answer, bool, error)
}

// Tasks resolves a chat task to its configuration, live;
// *agentconfig.Service implements it. Safe for concurrent use.
type Tasks interface {
	ResolveTask(ctx context.Context, identifier string) (agentconfig.Task, *agentconfig.Resolved, error)
}

// Users finds a backend user who can act; *typo3.Site implements it. Safe
// for concurrent use. Turns and decisions look their users up afresh, so a
// user disabled meanwhile no longer acts.
type Users interface {
	BackendUserByName(ctx context.Context, username string) (*typo3.BackendUser, error)
}

// Params configure New.
type Params struct {
	Store   Store   // required
	Runtime Runtime // required
	Tasks   Tasks   // required
	Users   Users   // required
	// Settings are the operator's; zero limits and durations take the
	// defaults (ArchiveAfter and DeleteAfter excepted: ≤ 0 disables them).
	Settings Settings
	// SiteName names the site in the assistant's identity prompt.
	SiteName string
	// Now is the clock of reconcile and cleanup; nil means time.Now. It
	// should be the store's clock, which stamps UpdatedAt.
	Now    func() time.Time
	Logger *slog.Logger
	// ClaimPrefix starts every claim id this Service writes; "" means
	// "chat:<host>:<pid>".
	ClaimPrefix string
	// TracerProvider makes a span of every turn a consumer runs; nil
	// makes none.
	TracerProvider trace.TracerProvider
}

// Service is the chat: conversations, their turns and the decisions made
// on them. It is safe for concurrent use, and several processes may share
// one store: every status change is a compare-and-set.
type Service struct {
	st       Store
	rt       Runtime
	tasks    Tasks
	users    Users
	set      Settings
	siteName string
	now      func() time.Time
	log      *slog.Logger
	prefix   string

	// mu guards subs: the change subscribers, by conversation.
	mu   sync.Mutex
	subs map[int64]map[chan struct{}]struct{}
	// queued is signalled when this process queues a turn, so that an
	// idle worker slot claims it at once instead of at its next poll.
	queued chan struct{}
	tracer trace.Tracer
}

// New returns a Service.
func New(p Params) (*Service, error) {
	if p.Store == nil || p.Runtime == nil || p.Tasks == nil || p.Users == nil {
		return nil, errors.New("chat: a store, a runtime, tasks and users are required")
	}
	s := &Service{st: p.Store, rt: p.Runtime, tasks: p.Tasks, users: p.Users, set: withDefaults(p.Settings),
		siteName: p.SiteName, now: p.Now, log: p.Logger, prefix: p.ClaimPrefix, subs: map[int64]map[chan struct{}]struct{}{},
		queued: make(chan struct{}, 1), tracer: tracing.Tracer(p.TracerProvider)}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.prefix == "" {
		host, _ := os.Hostname()
		s.prefix = fmt.Sprintf("chat:%s:%d", host, os.Getpid())
	}
	return s, nil
}

func withDefaults(s Settings) Settings {
	s.AllowedGroups = slices.Clone(s.AllowedGroups)
	s.GroupTasks = slices.Clone(s.GroupTasks)
	if s.MaxActivePerUser <= 0 {
		s.MaxActivePerUser = DefaultMaxActivePerUser
	}
	if s.MaxConversationsPerUser <= 0 {
		s.MaxConversationsPerUser = DefaultMaxConversationsPerUser
	}
	if s.MaxMessageLength <= 0 {
		s.MaxMessageLength = DefaultMaxMessageLength
	}
	if s.StaleAfter <= 0 {
		s.StaleAfter = DefaultStaleAfter
	}
	if s.ReconcileGrace <= 0 {
		s.ReconcileGrace = DefaultReconcileGrace
	}
	return s
}

// Settings returns the settings in force (defaults filled in).
func (s *Service) Settings() Settings { return s.set }

// claimID is a fresh claim id: the prefix and 8 random bytes.
func (s *Service) claimID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return s.prefix + ":" + hex.EncodeToString(b[:])
}

// Changes subscribes to the changes this Service makes to conversation
// id: the channel receives a value (buffer 1, never blocking the writer,
// so several changes may arrive as one) after every successful change.
// Changes made by other processes, and by cleanup, are not signalled:
// readers poll as well. cancel unsubscribes; it may be called more than
// once. The channel is never closed.
func (s *Service) Changes(id int64) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	s.mu.Lock()
	m := s.subs[id]
	if m == nil {
		m = map[chan struct{}]struct{}{}
		s.subs[id] = m
	}
	m[ch] = struct{}{}
	s.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if m := s.subs[id]; m != nil {
				delete(m, ch)
				if len(m) == 0 {
					delete(s.subs, id)
				}
			}
		})
	}
}

// subscribers counts the live subscriptions (for tests of leaks).
func (s *Service) subscribers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.subs {
		n += len(m)
	}
	return n
}

// notify signals the subscribers of conversation id without blocking.
func (s *Service) notify(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch := range s.subs[id] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// change applies one compare-and-set change and signals it.
func (s *Service) change(ctx context.Context, p store.ChangeConversationParams) (store.Conversation, error) {
	c, err := s.st.ChangeConversation(ctx, p)
	if err == nil {
		s.notify(p.ID)
		if p.To == store.ConversationProcessing {
			select {
			case s.queued <- struct{}{}:
			default:
			}
		}
	}
	return c, err
}
