package metrics

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/store"
)

// DefaultStoreTimeout bounds the store's queries of one scrape unless
// StoreParams.Timeout says otherwise; well inside Prometheus's default
// scrape timeout of 10 s.
const DefaultStoreTimeout = 3 * time.Second

// DefaultFinishedEvery is how often the finished runs are counted again
// unless StoreParams.FinishedEvery says otherwise. Counting them reads
// every finished run (see store.Stats), the rest of a scrape reads
// indexes only.
const DefaultFinishedEvery = time.Minute

// StoreReader is what Store reads: the aggregates and the MCP servers.
type StoreReader interface {
	store.Stats
	MCPServers(ctx context.Context) ([]store.MCPServer, error)
}

// StoreParams configure NewStore.
type StoreParams struct {
	// Store is read at every scrape; required.
	Store StoreReader
	// Timeout bounds one scrape's queries; 0 means DefaultStoreTimeout.
	Timeout time.Duration
	// FinishedEvery is the shortest interval between two counts of the
	// finished runs; scrapes in between report the last count. 0 means
	// DefaultFinishedEvery.
	FinishedEvery time.Duration
	// Now is the clock of ages (the oldest queued run) and of
	// FinishedEvery; nil means time.Now.
	Now func() time.Time
	// Logger receives the store's failures; nil discards them.
	Logger *slog.Logger
}

// Store reports, at scrape time, what the store says of every process
// sharing it: runs, the queue, conversations and MCP server health. It is
// a prometheus.Collector and safe for concurrent scrapes.
type Store struct {
	st            StoreReader
	timeout       time.Duration
	finishedEvery time.Duration
	now           func() time.Time
	log           *slog.Logger

	// mu guards the last count of the finished runs and when it was read.
	mu         sync.Mutex
	lastCount  []store.RunCount
	finishedAt time.Time

	up, runs, finished, queueDepth, queueReady, queueAge, conversations *prometheus.Desc
	mcpEnabled, mcpImport, mcpTools, mcpContact, mcpLatency             *prometheus.Desc
}

var _ prometheus.Collector = (*Store)(nil)

// NewStore returns the collector over p.Store.
func NewStore(p StoreParams) *Store {
	s := &Store{st: p.Store, timeout: p.Timeout, finishedEvery: p.FinishedEvery, now: p.Now, log: p.Logger}
	if s.timeout <= 0 {
		s.timeout = DefaultStoreTimeout
	}
	if s.finishedEvery <= 0 {
		s.finishedEvery = DefaultFinishedEvery
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	d := prometheus.NewDesc
	s.up = d("t3agent_store_up", "1 when the store answered this scrape's queries in time, else 0 (and the store's series are left out).", nil, nil)
	s.runs = d("t3agent_runs", "Runs in the store by status.", []string{"status"}, nil)
	s.finished = d("t3agent_runs_finished_total", "Finished runs (completed, failed or cancelled) in the store by outcome and termination reason.", []string{"outcome", "termination"}, nil)
	s.queueDepth = d("t3agent_run_queue_depth", "Queued runs, those waiting out a retry backoff included.", nil, nil)
	s.queueReady = d("t3agent_run_queue_ready", "Queued runs a worker may claim now.", nil, nil)
	s.queueAge = d("t3agent_run_queue_oldest_age_seconds", "How long the queued run that has been claimable longest has waited for a worker; 0 when none waits.", nil, nil)
	s.conversations = d("t3agent_chat_conversations", "Chat conversations by status.", []string{"status"}, nil)
	s.mcpEnabled = d("t3agent_mcp_server_enabled", "1 when the MCP server is enabled, else 0.", []string{"server"}, nil)
	s.mcpImport = d("t3agent_mcp_server_import_status", "The MCP server's last tool import: 1 for its status, 0 for the others.", []string{"server", "status"}, nil)
	s.mcpTools = d("t3agent_mcp_server_tools", "Tools in the catalogue of the MCP server.", []string{"server"}, nil)
	s.mcpContact = d("t3agent_mcp_server_last_contact_timestamp_seconds", "When an operation on the MCP server last succeeded (Unix time); absent when never.", []string{"server"}, nil)
	s.mcpLatency = d("t3agent_mcp_server_last_latency_seconds", "Latency of the last successful operation on the MCP server.", []string{"server"}, nil)
	return s
}

// Describe sends the descriptors of every metric.
func (s *Store) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{s.up, s.runs, s.finished, s.queueDepth, s.queueReady, s.queueAge, s.conversations,
		s.mcpEnabled, s.mcpImport, s.mcpTools, s.mcpContact, s.mcpLatency} {
		ch <- d
	}
}

// Collect reads the store, within the timeout, and sends what it read.
// A part that fails is logged and left out, and t3agent_store_up is 0.
func (s *Store) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	up := 1.0
	for _, part := range []struct {
		name    string
		collect func(context.Context, chan<- prometheus.Metric) error
	}{
		{"runs", s.collectRuns},
		{"finished runs", s.collectFinished},
		{"conversations", s.collectConversations},
		{"MCP servers", s.collectMCP},
	} {
		if err := part.collect(ctx, ch); err != nil {
			s.log.WarnContext(ctx, "metrics: cannot read the store", "part", part.name, "error", err.Error())
			up = 0
		}
	}
	ch <- prometheus.MustNewConstMetric(s.up, prometheus.GaugeValue, up)
}

func (s *Store) collectRuns(ctx context.Context, ch chan<- prometheus.Metric) error {
	rs, err := s.st.RunStats(ctx)
	if err != nil {
		return err
	}
	byStatus := map[store.RunStatus]int64{}
	for _, c := range rs.Counts {
		byStatus[c.Status] += c.Runs
	}
	// Every status is reported, 0 included, so that an alert on one finds
	// its series before the first such run.
	for _, st := range []store.RunStatus{store.RunQueued, store.RunRunning, store.RunWaitingForApproval,
		store.RunWaitingForInput, store.RunCompleted, store.RunFailed, store.RunCancelled} {
		ch <- prometheus.MustNewConstMetric(s.runs, prometheus.GaugeValue, float64(byStatus[st]), string(st))
		delete(byStatus, st)
	}
	var unknown int64
	for _, n := range byStatus {
		unknown += n
	}
	if unknown > 0 {
		ch <- prometheus.MustNewConstMetric(s.runs, prometheus.GaugeValue, float64(unknown), Other)
	}
	ch <- prometheus.MustNewConstMetric(s.queueDepth, prometheus.GaugeValue, float64(rs.Queued()))
	ch <- prometheus.MustNewConstMetric(s.queueReady, prometheus.GaugeValue, float64(rs.Ready))
	age := 0.0
	if !rs.OldestReady.IsZero() {
		age = max(s.now().Sub(rs.OldestReady).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(s.queueAge, prometheus.GaugeValue, age)
	return nil
}

// collectFinished reports the finished runs by outcome and termination,
// counted again once FinishedEvery has passed since the last count.
func (s *Store) collectFinished(ctx context.Context, ch chan<- prometheus.Metric) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.finishedAt.IsZero() || now.Sub(s.finishedAt) >= s.finishedEvery || now.Before(s.finishedAt) {
		counts, err := s.st.FinishedRuns(ctx)
		if err != nil {
			return err
		}
		s.lastCount, s.finishedAt = counts, now
	}
	type key struct{ outcome, termination string }
	finished := map[key]int64{}
	for _, c := range s.lastCount {
		finished[key{runOutcome(c.Outcome), termination(c.Termination)}] += c.Runs
	}
	for k, n := range finished {
		ch <- prometheus.MustNewConstMetric(s.finished, prometheus.CounterValue, float64(n), k.outcome, k.termination)
	}
	return nil
}

func (s *Store) collectConversations(ctx context.Context, ch chan<- prometheus.Metric) error {
	counts, err := s.st.ConversationStats(ctx)
	if err != nil {
		return err
	}
	byStatus := map[string]int64{}
	for _, c := range counts {
		st := string(c.Status)
		if !c.Status.Valid() {
			st = Other
		}
		byStatus[st] += c.Conversations
	}
	for _, st := range []store.ConversationStatus{store.ConversationIdle, store.ConversationProcessing, store.ConversationLocked,
		store.ConversationAwaitingApproval, store.ConversationAwaitingInput, store.ConversationFailed} {
		ch <- prometheus.MustNewConstMetric(s.conversations, prometheus.GaugeValue, float64(byStatus[string(st)]), string(st))
	}
	if n := byStatus[Other]; n > 0 {
		ch <- prometheus.MustNewConstMetric(s.conversations, prometheus.GaugeValue, float64(n), Other)
	}
	return nil
}

func (s *Store) collectMCP(ctx context.Context, ch chan<- prometheus.Metric) error {
	servers, err := s.st.MCPServers(ctx)
	if err != nil {
		return err
	}
	for _, m := range servers {
		enabled := 0.0
		if m.Enabled {
			enabled = 1
		}
		ch <- prometheus.MustNewConstMetric(s.mcpEnabled, prometheus.GaugeValue, enabled, m.Identifier)
		status := m.ImportStatus
		switch status {
		case store.MCPImportNever, store.MCPImportOK, store.MCPImportPartial, store.MCPImportError:
		default:
			status = Other
		}
		for _, st := range []string{store.MCPImportNever, store.MCPImportOK, store.MCPImportPartial, store.MCPImportError} {
			v := 0.0
			if st == status {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(s.mcpImport, prometheus.GaugeValue, v, m.Identifier, st)
		}
		ch <- prometheus.MustNewConstMetric(s.mcpTools, prometheus.GaugeValue, float64(m.ToolCount), m.Identifier)
		if !m.LastContact.IsZero() {
			ch <- prometheus.MustNewConstMetric(s.mcpContact, prometheus.GaugeValue, float64(m.LastContact.UnixMicro())/1e6, m.Identifier)
			ch <- prometheus.MustNewConstMetric(s.mcpLatency, prometheus.GaugeValue, m.LastLatency.Seconds(), m.Identifier)
		}
	}
	return nil
}

// runOutcome is the outcome label of a finished run.
func runOutcome(o string) string {
	switch agent.Outcome(o) {
	case agent.OutcomeCompleted, agent.OutcomeAwaitingApproval, agent.OutcomeAwaitingInput, agent.OutcomeSuspendFailed,
		agent.OutcomeGuardrailBlocked, agent.OutcomeGuardrailApprovalRequired, agent.OutcomeFailed, agent.OutcomeCancelled:
		return o
	}
	return Other
}

// termination is the termination label of a finished run.
func termination(t string) string {
	switch agent.Termination(t) {
	case agent.TerminationCompleted, agent.TerminationMaxIterations, agent.TerminationBudgetExhausted,
		agent.TerminationPolicyDenied, agent.TerminationApprovalDenied, agent.TerminationProviderFailed,
		agent.TerminationCancelled, agent.TerminationContextTruncated:
		return t
	}
	return Other
}
