package agentconfig

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/t3agent/t3agent/internal/guardrail"
	"github.com/t3agent/t3agent/internal/tool"
)

// ErrInvalid is matched (errors.Is) by every error that refuses a document.
var ErrInvalid = errors.New("agentconfig: invalid configuration")

// Kinds of record, as errors, reports and Delete name them.
const (
	KindProvider      = "provider"
	KindModel         = "model"
	KindConfiguration = "configuration"
	KindTask          = "task"
	KindBudget        = "budget"
)

// FieldError is one problem with one field of one item.
type FieldError struct {
	Kind       string `json:"kind,omitempty"`       // provider, model, configuration, task, budget; "" for the document's top level
	Identifier string `json:"identifier,omitempty"` // the item's identifier (a budget's user)
	Line       int    `json:"line,omitempty"`       // YAML line of the item; 0 when unknown
	Field      string `json:"field,omitempty"`      // the document key, e.g. "temperature", "fallback_chain[1]", "budgets.cost_per_day"
	Problem    string `json:"problem"`
}

func (e FieldError) Error() string {
	var b strings.Builder
	b.WriteString(e.Kind)
	if e.Identifier != "" {
		fmt.Fprintf(&b, " %q", e.Identifier)
	}
	switch {
	case e.Kind == "" && e.Line > 0:
		fmt.Fprintf(&b, "line %d", e.Line)
	case e.Kind == "":
		b.WriteString("document")
	case e.Line > 0:
		fmt.Fprintf(&b, " (line %d)", e.Line)
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	return b.String() + ": " + e.Problem
}

// ValidationError lists every problem found in a document. Nothing of the
// document is applied when there is one.
type ValidationError struct {
	Problems []FieldError
}

// maxShown bounds the problems one error message lists.
const maxShown = 10

func (e *ValidationError) Error() string {
	parts := make([]string, 0, min(len(e.Problems), maxShown))
	for i, p := range e.Problems {
		if i == maxShown {
			break
		}
		parts = append(parts, p.Error())
	}
	s := strings.Join(parts, "; ")
	if n := len(e.Problems) - maxShown; n > 0 {
		s += fmt.Sprintf("; and %d more problems", n)
	}
	return "the configuration is refused, nothing was applied: " + s
}

// Is makes a ValidationError match ErrInvalid.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// desired is a document turned into records, with literal secrets still
// in plain (sealed by Apply).
type desired struct {
	providers      []Provider
	models         []Model
	configurations []Configuration
	tasks          []Task
	budgets        []UserBudget
}

// validator collects problems while building the desired records.
type validator struct {
	doc      *Document
	existing *Snapshot
	prune    bool
	// problems start with the document's own (unknown keys, mistyped
	// values: the first parsed of them).
	problems []FieldError
	parsed   int
	// in-file identifiers, to resolve references
	providers, models, configurations map[string]bool
}

type itemRef struct {
	v    *validator
	kind string
	id   string
	line int
}

func (r itemRef) fail(field, format string, args ...any) {
	// A field (or a whole item) that could not be read is reported once,
	// as such, not again for the zero value it was left with.
	for _, p := range r.v.problems[:r.v.parsed] {
		if p.Kind == r.kind && p.Line == r.line && (p.Field == field || p.Field == "") {
			return
		}
	}
	r.v.problems = append(r.v.problems, FieldError{Kind: r.kind, Identifier: r.id, Line: r.line, Field: field, Problem: fmt.Sprintf(format, args...)})
}

// validate checks the document against itself and, unless prune is set,
// against the records it keeps from existing.
func validate(doc *Document, existing *Snapshot, prune bool) (*desired, error) {
	v := &validator{
		doc: doc, existing: existing, prune: prune, problems: slices.Clone(doc.problems), parsed: len(doc.problems),
		providers: map[string]bool{}, models: map[string]bool{}, configurations: map[string]bool{},
	}
	for _, p := range doc.Providers {
		v.providers[p.Identifier] = true
	}
	for _, m := range doc.Models {
		v.models[m.Identifier] = true
	}
	for _, c := range doc.Configurations {
		v.configurations[c.Identifier] = true
	}
	out := &desired{}
	seen := map[string]bool{}
	item := func(kind, id string, i int) itemRef {
		r := itemRef{v: v, kind: kind, id: id, line: doc.line(kind, i)}
		field := "identifier"
		if kind == KindBudget {
			field = "user"
		}
		switch {
		case kind == KindBudget:
			if problem := checkUsername(id); problem != "" {
				r.fail(field, "%s", problem)
			}
		case !identifierPattern.MatchString(id):
			r.fail(field, "%q must be 1 to 64 characters of a-z, 0-9, '_', '.', '-', starting with a letter or digit", id)
		}
		if seen[kind+"\x00"+id] {
			r.fail(field, "is declared twice")
		}
		seen[kind+"\x00"+id] = true
		return r
	}
	for i, s := range doc.Providers {
		out.providers = append(out.providers, v.provider(item(KindProvider, s.Identifier, i), s))
	}
	for i, s := range doc.Models {
		out.models = append(out.models, v.model(item(KindModel, s.Identifier, i), s))
	}
	for i, s := range doc.Configurations {
		out.configurations = append(out.configurations, v.configuration(item(KindConfiguration, s.Identifier, i), s))
	}
	for i, s := range doc.Tasks {
		out.tasks = append(out.tasks, v.task(item(KindTask, s.Identifier, i), s))
	}
	for i, s := range doc.Budgets {
		r := item(KindBudget, s.User, i)
		out.budgets = append(out.budgets, UserBudget{Username: s.User, Budget: v.budget(r, "", s.BudgetSpec), Active: active(s.Active)})
	}
	v.checkCycles(out)
	if len(v.problems) > 0 {
		// In document order: each item's problems together, wherever
		// they were found.
		slices.SortStableFunc(v.problems, func(a, b FieldError) int { return a.Line - b.Line })
		return nil, &ValidationError{Problems: v.problems}
	}
	return out, nil
}

func active(b *bool) bool { return b == nil || *b }

func checkUsername(u string) string {
	switch {
	case u == "":
		return "must name a TYPO3 backend user"
	case len(u) > 255 || !utf8.ValidString(u):
		return "is not a backend username"
	case strings.IndexFunc(u, unicode.IsControl) >= 0 || strings.TrimSpace(u) != u:
		return "must not contain control characters or surrounding spaces"
	}
	return ""
}

// exists reports whether a reference resolves: to an item of the file, or,
// without prune, to a record the apply keeps.
func (v *validator) exists(kind, id string) bool {
	inFile := map[string]map[string]bool{KindProvider: v.providers, KindModel: v.models, KindConfiguration: v.configurations}[kind]
	if inFile[id] {
		return true
	}
	if v.prune {
		return false
	}
	switch kind {
	case KindProvider:
		_, ok := v.existing.Provider(id)
		return ok
	case KindModel:
		_, ok := v.existing.Model(id)
		return ok
	}
	_, ok := v.existing.Configuration(id)
	return ok
}

// lookupModel finds a model in the file or among kept records.
func (v *validator) lookupModel(id string) (ModelSpec, bool) {
	for _, m := range v.doc.Models {
		if m.Identifier == id {
			return m, true
		}
	}
	if v.prune {
		return ModelSpec{}, false
	}
	if m, ok := v.existing.Model(id); ok {
		return ModelSpec{Identifier: m.Identifier, Provider: m.Provider, MaxOutputTokens: m.MaxOutputTokens}, true
	}
	return ModelSpec{}, false
}

func (v *validator) lookupAdapter(providerID string) Adapter {
	for _, p := range v.doc.Providers {
		if p.Identifier == providerID {
			return Adapter(p.Adapter)
		}
	}
	if p, ok := v.existing.Provider(providerID); ok && !v.prune {
		return p.Adapter
	}
	return ""
}

// secret reads an api_key or header value: env:NAME or a literal.
func secretOf(r itemRef, field, value string) SecretRef {
	if name, ok := strings.CutPrefix(value, "env:"); ok {
		if !envNamePattern.MatchString(name) {
			r.fail(field, "env:%s does not name an environment variable", name)
		}
		return EnvSecret(name)
	}
	// The problem never repeats the value: it may be a key.
	switch {
	case value == "":
		return SecretRef{}
	case strings.IndexFunc(value, func(c rune) bool { return unicode.IsSpace(c) || unicode.IsControl(c) }) >= 0:
		r.fail(field, "contains spaces or control characters; give the key alone, or env:NAME")
	case len(value) > 8192 || !utf8.ValidString(value):
		r.fail(field, "is not a key: too long or not UTF-8")
	}
	return SecretRef{plain: value}
}

var headerNamePattern = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)

func (v *validator) provider(r itemRef, s ProviderSpec) Provider {
	p := Provider{
		Identifier: s.Identifier, Description: s.Description, Adapter: Adapter(s.Adapter),
		Endpoint: s.Endpoint, TrustZone: tool.TrustZone(s.TrustZone), Timeout: DefaultTimeout,
		MaxRetries: DefaultMaxRetries, Active: active(s.Active),
	}
	if !slices.Contains(Adapters(), p.Adapter) {
		r.fail("adapter", "%q is not openai, openai_compatible, anthropic or gemini", s.Adapter)
	}
	if s.Endpoint != "" {
		if problem := checkEndpoint(s.Endpoint); problem != "" {
			r.fail("endpoint", "%s", problem)
		}
	} else if p.Adapter == AdapterOpenAICompatible {
		r.fail("endpoint", "is required for the openai_compatible adapter (for Ollama: http://127.0.0.1:11434/v1)")
	}
	p.APIKey = secretOf(r, "api_key", s.APIKey)
	if p.APIKey.IsZero() && p.Adapter != AdapterOpenAICompatible && slices.Contains(Adapters(), p.Adapter) {
		r.fail("api_key", "is required for the %s adapter; give env:NAME or the key", p.Adapter)
	}
	if p.TrustZone.Normalize() != p.TrustZone {
		r.fail("trust_zone", "%q is not local, privateHosted, externalEu or externalGlobal", s.TrustZone)
	}
	if s.Timeout != "" {
		d, err := time.ParseDuration(s.Timeout)
		if n, nerr := strconv.Atoi(s.Timeout); nerr == nil {
			d, err = time.Duration(n)*time.Second, nil
		}
		switch {
		case err != nil:
			r.fail("timeout", "%q is not a duration such as 120s or 2m", s.Timeout)
		case d <= 0 || d > MaxTimeout:
			r.fail("timeout", "must be more than 0 and at most %v, not %v", MaxTimeout, d)
		}
		p.Timeout = d
	}
	if s.MaxRetries != nil {
		p.MaxRetries = *s.MaxRetries
		if p.MaxRetries < 0 || p.MaxRetries > MaxRetries {
			r.fail("max_retries", "must be between 0 and %d, not %d", MaxRetries, p.MaxRetries)
		}
	}
	if len(s.Headers) > 0 {
		p.Headers = make(map[string]SecretRef, len(s.Headers))
		for _, name := range slices.Sorted(maps.Keys(s.Headers)) {
			value := s.Headers[name]
			field := "headers." + name
			if !headerNamePattern.MatchString(name) {
				r.fail(field, "is not a header name (letters, digits and '-')")
			}
			if value == "" {
				r.fail(field, "has no value")
			}
			p.Headers[name] = secretOf(r, field, value)
		}
	}
	return p
}

func checkEndpoint(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case len(raw) > 2048:
		return "is longer than 2048 characters"
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return "must be an http:// or https:// URL"
	case u.User != nil:
		// Credentials in the URL would be stored and shown in clear.
		return "must not carry credentials (user:password@); give them as api_key or headers"
	case u.Fragment != "":
		return "must not have a #fragment"
	}
	return ""
}

const maxContext = 100_000_000

func (v *validator) model(r itemRef, s ModelSpec) Model {
	m := Model{
		Identifier: s.Identifier, Description: s.Description, Provider: s.Provider, ModelID: s.ModelID,
		ContextLength: s.ContextLength, MaxOutputTokens: s.MaxOutputTokens, Capabilities: []Capability{},
		Active: active(s.Active),
	}
	switch {
	case s.Provider == "":
		r.fail("provider", "is required")
	case !v.exists(KindProvider, s.Provider):
		r.fail("provider", "%s", v.missing(KindProvider, s.Provider))
	}
	if s.ModelID == "" || len(s.ModelID) > 255 || strings.IndexFunc(s.ModelID, unicode.IsControl) >= 0 {
		r.fail("model_id", "must be the provider's name of the model, such as gpt-4o-mini")
	}
	if s.ContextLength < 0 || s.ContextLength > maxContext {
		r.fail("context_length", "must be between 0 (unknown) and %d, not %d", maxContext, s.ContextLength)
	}
	switch {
	case s.MaxOutputTokens < 0:
		r.fail("max_output_tokens", "must not be negative")
	case s.ContextLength > 0 && s.MaxOutputTokens > s.ContextLength:
		r.fail("max_output_tokens", "%d is more than the context length %d", s.MaxOutputTokens, s.ContextLength)
	}
	for i, c := range s.Capabilities {
		field := fmt.Sprintf("capabilities[%d]", i)
		switch {
		case !slices.Contains(Capabilities(), Capability(c)):
			r.fail(field, "%q is not one of %s", c, joinOf(Capabilities()))
		case slices.Contains(m.Capabilities, Capability(c)):
			r.fail(field, "%q is listed twice", c)
		}
		m.Capabilities = append(m.Capabilities, Capability(c))
	}
	switch {
	case (s.InputPrice == nil) != (s.OutputPrice == nil):
		r.fail("input_price", "give input_price and output_price together, or neither for a model without prices")
	case s.InputPrice != nil:
		m.Prices = &Prices{Input: *s.InputPrice, Output: *s.OutputPrice}
	}
	return m
}

func joinOf[T ~string](list []T) string {
	s := make([]string, len(list))
	for i, v := range list {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

// missing says why a reference does not resolve.
func (v *validator) missing(kind, id string) string {
	if v.prune {
		return fmt.Sprintf("no %s %q in this file (with --prune, references must be declared in the file)", kind, id)
	}
	return fmt.Sprintf("no %s %q in this file or the store", kind, id)
}

func (v *validator) configuration(r itemRef, s ConfigurationSpec) Configuration {
	c := Configuration{
		Identifier: s.Identifier, Description: s.Description, Model: s.Model, SystemPrompt: s.SystemPrompt,
		Temperature: s.Temperature, MaxTokens: s.MaxTokens, AllowedToolGroups: []string{}, Guardrails: []string{},
		RequireSecondApprover: s.RequireSecondApprover, MaxRounds: s.MaxRounds, Privacy: PrivacyLevel(s.PrivacyLevel),
		FallbackChain: []string{}, Active: active(s.Active),
	}
	model, modelOK := v.lookupModel(s.Model)
	switch {
	case s.Model == "":
		r.fail("model", "is required")
	case !modelOK:
		r.fail("model", "%s", v.missing(KindModel, s.Model))
	}
	if len(s.SystemPrompt) > maxPromptLen || !utf8.ValidString(s.SystemPrompt) || strings.IndexByte(s.SystemPrompt, 0) >= 0 {
		r.fail("system_prompt", "must be UTF-8 text of at most %d bytes", maxPromptLen)
	}
	if t := s.Temperature; t != nil {
		limit := MaxTemperature
		if modelOK && v.lookupAdapter(model.Provider) == AdapterAnthropic {
			limit = 1
		}
		if *t < 0 || *t > limit {
			r.fail("temperature", "must be between 0 and %g for this provider, not %g", limit, *t)
		}
	}
	switch {
	case s.MaxTokens < 0:
		r.fail("max_tokens", "must not be negative")
	case modelOK && model.MaxOutputTokens > 0 && s.MaxTokens > model.MaxOutputTokens:
		r.fail("max_tokens", "%d is more than the model's max_output_tokens %d", s.MaxTokens, model.MaxOutputTokens)
	}
	for i, g := range s.AllowedToolGroups {
		field := fmt.Sprintf("allowed_tool_groups[%d]", i)
		switch {
		case !toolGroupPattern.MatchString(g):
			r.fail(field, "%q is not a tool group (content, structure, configuration, mcp_<server>)", g)
		case slices.Contains(c.AllowedToolGroups, g):
			r.fail(field, "%q is listed twice", g)
		}
		c.AllowedToolGroups = append(c.AllowedToolGroups, g)
	}
	for i, g := range s.Guardrails {
		field := fmt.Sprintf("guardrails[%d]", i)
		switch {
		case !guardrail.Known(g):
			r.fail(field, "%q is not a guardrail (%s)", g, strings.Join(guardrail.Identifiers(), ", "))
		case slices.Contains(c.Guardrails, g):
			r.fail(field, "%q is listed twice", g)
		}
		c.Guardrails = append(c.Guardrails, g)
	}
	switch {
	case s.MaxRounds == 0:
		c.MaxRounds = DefaultMaxRounds
	case s.MaxRounds < 0 || s.MaxRounds > RoundsCeiling:
		r.fail("max_rounds", "must be between 1 and %d, not %d", RoundsCeiling, s.MaxRounds)
	}
	switch c.Privacy {
	case "":
		c.Privacy = PrivacyMetadata
	case PrivacyMetadata, PrivacyFull:
	default:
		r.fail("privacy_level", "%q is not metadata or full", s.PrivacyLevel)
	}
	c.Budget = v.budget(r, "budgets.", s.Budgets)
	if len(s.FallbackChain) > MaxFallbacks {
		r.fail("fallback_chain", "lists %d configurations; at most %d", len(s.FallbackChain), MaxFallbacks)
	}
	for i, f := range s.FallbackChain {
		field := fmt.Sprintf("fallback_chain[%d]", i)
		switch {
		case f == s.Identifier:
			r.fail(field, "a configuration cannot fall back to itself")
		case slices.Contains(c.FallbackChain, f):
			r.fail(field, "%q is listed twice", f)
		case !v.exists(KindConfiguration, f):
			r.fail(field, "%s", v.missing(KindConfiguration, f))
		}
		c.FallbackChain = append(c.FallbackChain, f)
	}
	return c
}

// maxPromptLen mirrors the store's bound, so the document is refused
// with a field name rather than by the store.
const maxPromptLen = 256 << 10

func (v *validator) budget(r itemRef, prefix string, s BudgetSpec) Budget {
	b := Budget(s)
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"requests_per_day", s.RequestsPerDay}, {"tokens_per_day", s.TokensPerDay},
		{"requests_per_month", s.RequestsPerMonth}, {"tokens_per_month", s.TokensPerMonth},
	} {
		if f.v < 0 || f.v > 1<<53 {
			r.fail(prefix+f.name, "must be 0 (unlimited) or a positive count, not %d", f.v)
		}
	}
	return b
}

func (v *validator) task(r itemRef, s TaskSpec) Task {
	switch {
	case s.Configuration == "":
		r.fail("configuration", "is required")
	case !v.exists(KindConfiguration, s.Configuration):
		r.fail("configuration", "%s", v.missing(KindConfiguration, s.Configuration))
	}
	if len(s.PromptTemplate) > maxPromptLen || !utf8.ValidString(s.PromptTemplate) || strings.IndexByte(s.PromptTemplate, 0) >= 0 {
		r.fail("prompt_template", "must be UTF-8 text of at most %d bytes", maxPromptLen)
	}
	return Task{Identifier: s.Identifier, Description: s.Description, Configuration: s.Configuration, PromptTemplate: s.PromptTemplate}
}

// checkCycles refuses fallback chains that loop, over the configurations
// of the file and, without prune, the ones the apply keeps.
func (v *validator) checkCycles(d *desired) {
	chains := map[string][]string{}
	if !v.prune {
		for _, c := range v.existing.Configurations {
			chains[c.Identifier] = c.FallbackChain
		}
	}
	for _, c := range d.configurations {
		chains[c.Identifier] = c.FallbackChain
	}
	reported := map[string]bool{}
	for i, c := range d.configurations {
		if cycle := findCycle(c.Identifier, chains); cycle != nil && !reported[c.Identifier] {
			for _, id := range cycle {
				reported[id] = true
			}
			itemRef{v: v, kind: KindConfiguration, id: c.Identifier, line: v.doc.line(KindConfiguration, i)}.
				fail("fallback_chain", "loops: %s", strings.Join(cycle, " → "))
		}
	}
}

// findCycle returns the first loop reachable from start, as the path that
// closes it, or nil.
func findCycle(start string, chains map[string][]string) []string {
	var path []string
	done := map[string]bool{}
	var walk func(id string) []string
	walk = func(id string) []string {
		if i := slices.Index(path, id); i >= 0 {
			return append(slices.Clone(path[i:]), id)
		}
		if done[id] {
			return nil
		}
		path = append(path, id)
		for _, next := range chains[id] {
			if c := walk(next); c != nil {
				return c
			}
		}
		path = path[:len(path)-1]
		done[id] = true
		return nil
	}
	return walk(start)
}
