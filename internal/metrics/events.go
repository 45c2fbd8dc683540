package metrics

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/store"
)

// Other is the label value of anything outside a label's vocabulary: a
// tool the registry does not hold, an outcome or a reason this t3agent
// does not know.
const Other = "other"

// Events counts what happens in this process: provider calls, tool calls
// and gate denials. It is a prometheus.Collector; its hook methods are
// safe for concurrent use and do nothing on a nil *Events, so a caller
// without metrics passes nil.
type Events struct {
	providerCalls    *prometheus.CounterVec
	providerTokens   *prometheus.CounterVec
	providerCost     *prometheus.CounterVec
	providerUnpriced *prometheus.CounterVec
	providerDuration *prometheus.HistogramVec
	toolCalls        *prometheus.CounterVec
	toolDuration     *prometheus.HistogramVec
	denials          *prometheus.CounterVec
}

var _ prometheus.Collector = (*Events)(nil)

// NewEvents returns the counters, all at zero. The denials of every
// reason and stage start as series at 0, so that an alert on an increase
// sees the first denial.
func NewEvents() *Events {
	e := &Events{
		providerCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "t3agent_provider_calls_total",
			Help: "LLM provider calls by provider, model and outcome (ok or the failure class), retries included in one call.",
		}, []string{"provider", "model", "outcome"}),
		providerTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "t3agent_provider_tokens_total",
			Help: "Tokens the providers reported, by provider, model and direction (input or output).",
		}, []string{"provider", "model", "direction"}),
		providerCost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "t3agent_provider_cost_dollars_total",
			Help: "Estimated cost of provider calls in US dollars, from the model's prices, by provider and model.",
		}, []string{"provider", "model"}),
		providerUnpriced: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "t3agent_provider_unpriced_calls_total",
			Help: "Provider calls with usage on a model without prices, whose cost is unknown, by provider and model.",
		}, []string{"provider", "model"}),
		providerDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "t3agent_provider_call_duration_seconds",
			Help: "Wall time of provider calls, retries included, by provider and model.",
			// From a fraction of a second to minutes.
			Buckets: []float64{0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160},
		}, []string{"provider", "model"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "t3agent_tool_calls_total",
			Help: "Tool calls through the gate by tool and outcome; names the registry does not hold count as other.",
		}, []string{"tool", "outcome"}),
		toolDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "t3agent_tool_call_duration_seconds",
			Help: "Wall time of tool calls through the gate, by tool and outcome.",
			// From a millisecond to the gate's default deadline.
			Buckets: []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		}, []string{"tool", "outcome"}),
		denials: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "t3agent_gate_denials_total",
			Help: "Tools the gate denied, by reason and stage (offer, call or decide).",
		}, []string{"reason", "stage"}),
	}
	for _, r := range []gate.Reason{gate.ReasonNotRegistered, gate.ReasonToolDisabled, gate.ReasonRequiresAdmin,
		gate.ReasonConfigurationGroup, gate.ReasonTrustZone, gate.ReasonNotOffered, gate.ReasonWriteUnapproved} {
		for _, st := range []gate.Stage{gate.StageOffer, gate.StageCall, gate.StageDecide} {
			e.denials.WithLabelValues(string(r), string(st))
		}
	}
	return e
}

func (e *Events) collectors() []prometheus.Collector {
	return []prometheus.Collector{e.providerCalls, e.providerTokens, e.providerCost, e.providerUnpriced,
		e.providerDuration, e.toolCalls, e.toolDuration, e.denials}
}

// Describe sends the descriptors of every metric.
func (e *Events) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range e.collectors() {
		c.Describe(ch)
	}
}

// Collect sends the current values.
func (e *Events) Collect(ch chan<- prometheus.Metric) {
	for _, c := range e.collectors() {
		c.Collect(ch)
	}
}

// ProviderCall counts one provider call; it is telemetry's OnCall.
func (e *Events) ProviderCall(_ context.Context, c store.RecordLLMCallParams) {
	if e == nil {
		return
	}
	outcome := "ok"
	if !c.Success {
		outcome = providerOutcome(c.ErrorClass)
	}
	e.providerCalls.WithLabelValues(c.Provider, c.Model, outcome).Inc()
	e.providerDuration.WithLabelValues(c.Provider, c.Model).Observe(c.Latency.Seconds())
	if c.InputTokens != nil {
		e.providerTokens.WithLabelValues(c.Provider, c.Model, "input").Add(float64(max(*c.InputTokens, 0)))
	}
	if c.OutputTokens != nil {
		e.providerTokens.WithLabelValues(c.Provider, c.Model, "output").Add(float64(max(*c.OutputTokens, 0)))
	}
	switch {
	case c.Cost != nil:
		// Picodollars; a float64 holds any realistic sum exactly enough.
		e.providerCost.WithLabelValues(c.Provider, c.Model).Add(float64(max(*c.Cost, 0)) / 1e12)
	case c.InputTokens != nil || c.OutputTokens != nil:
		e.providerUnpriced.WithLabelValues(c.Provider, c.Model).Inc()
	}
}

// ToolCall counts one finished tool call; it is the gate's
// OnCallFinished.
func (e *Events) ToolCall(_ context.Context, r gate.CallReport) {
	if e == nil {
		return
	}
	name := Other
	if r.Registered {
		name = r.Tool
	}
	outcome := toolOutcome(r.Outcome)
	e.toolCalls.WithLabelValues(name, outcome).Inc()
	e.toolDuration.WithLabelValues(name, outcome).Observe(r.Duration.Seconds())
}

// Denied counts one gate denial; it is the gate's OnDenied.
func (e *Events) Denied(_ context.Context, d gate.Denial) {
	if e == nil {
		return
	}
	e.denials.WithLabelValues(denialReason(d.Reason), denialStage(d.Stage)).Inc()
}

// providerOutcome is the outcome label of a failed provider call: llm's
// failure classes and what telemetry.ErrorClass adds for a context that
// ended.
func providerOutcome(class string) string {
	switch llm.FailureClass(class) {
	case llm.FailConnection, llm.FailRateLimit, llm.FailServerError, llm.FailCircuitOpen, llm.FailAuth,
		llm.FailConfiguration, llm.FailClientError, llm.FailUnknown, llm.FailCanceled, "cancelled", "timeout":
		return class
	}
	return Other
}

func toolOutcome(o gate.Outcome) string {
	switch o {
	case gate.OutcomeOK, gate.OutcomeToolError, gate.OutcomeDenied, gate.OutcomeInvalidArguments,
		gate.OutcomeFailed, gate.OutcomePanic, gate.OutcomeTimeout, gate.OutcomeCanceled:
		return string(o)
	}
	return Other
}

func denialReason(r gate.Reason) string {
	switch r {
	case gate.ReasonNotRegistered, gate.ReasonToolDisabled, gate.ReasonRequiresAdmin, gate.ReasonConfigurationGroup,
		gate.ReasonTrustZone, gate.ReasonNotOffered, gate.ReasonWriteUnapproved:
		return string(r)
	}
	return Other
}

func denialStage(s gate.Stage) string {
	switch s {
	case gate.StageOffer, gate.StageCall, gate.StageDecide:
		return string(s)
	}
	return Other
}
