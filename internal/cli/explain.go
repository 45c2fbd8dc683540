package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/web"
)

// check is one step of the gate's decision for one tool.
type check struct {
	Check  string `json:"check"`
	Passed bool   `json:"passed"`
	Detail string `json:"detail"`
	// ObservedOnly: failed, yet the tool is offered because enforcement
	// is observe.
	ObservedOnly bool `json:"observedOnly,omitempty"`
}

// toolExplanation is `tools explain NAME`: the tool as the API shows it
// (with the gate's decision), every check of the gate in order, and a
// call to try it.
type toolExplanation struct {
	Tool        any             `json:"tool"`
	Actor       string          `json:"actor"`
	Checks      []check         `json:"checks"`
	ExampleArgs json.RawMessage `json:"exampleArgs"`
	ExampleCall string          `json:"exampleCall"`
}

// explainTool explains one tool for the --as user under the configuration
// of the gate flags.
func (a *app) explainTool(ctx context.Context, cmd *cobra.Command, r *runtime, gf *gateFlags, name string) error {
	e, ok := r.registry.Get(ctx, name)
	if !ok {
		return fmt.Errorf("there is no registered tool %q; `t3agent tools list` lists them", name)
	}
	cfg, err := gf.config(ctx, cmd, r, a.lookupEnv)
	if err != nil {
		return err
	}
	actor, err := a.actor(ctx, r.site)
	if err != nil {
		return err
	}
	ds, err := r.gate.Explain(ctx, gate.ExplainParams{Actor: actor, Config: cfg})
	if err != nil {
		return err
	}
	i := slices.IndexFunc(ds, func(d gate.Decision) bool { return d.Tool == name })
	if i < 0 {
		return fmt.Errorf("the tool %s was unregistered while it was explained; run the command again", name)
	}
	ov, err := r.gate.Availability().Load(ctx)
	if err != nil {
		return err
	}
	args, err := exampleArgs(e.Spec.InputSchema)
	if err != nil {
		return fmt.Errorf("the input schema of %s cannot be read: %w", name, err)
	}
	x := toolExplanation{
		Tool: web.ToolView(ds[i], &e.Spec), Actor: actor.Username,
		Checks:      checks(e.Spec, ds[i], ov, actor, cfg.GateConfig()),
		ExampleArgs: args, ExampleCall: exampleCall(cmd, gf, name, actor.Username, args),
	}
	if a.jsonOut {
		return writeJSON(a.env.Stdout, x)
	}
	return printExplanation(a.env.Stdout, e, ds[i], x)
}

// checks are the gate's checks for one tool (gate.Checks), each with the
// sentence the CLI prints for its cause.
func checks(spec tool.Spec, d gate.Decision, ov gate.Overrides, actor *typo3.BackendUser, cfg gate.Config) []check {
	gcs := gate.Checks(spec, d, ov, actor, cfg)
	out := make([]check, len(gcs))
	for i, c := range gcs {
		out[i] = check{Check: strings.ReplaceAll(c.Check, "_", " "), Passed: c.Passed, ObservedOnly: c.ObservedOnly,
			Detail: checkDetail(spec, d, actor, cfg, c)}
	}
	return out
}

// checkDetail is the sentence of one check's cause.
func checkDetail(spec tool.Spec, d gate.Decision, actor *typo3.BackendUser, cfg gate.Config, c gate.Check) string {
	name := ""
	if actor != nil {
		name = actor.Username
	}
	switch c.Cause {
	case "registered":
		return "the registry holds it"
	case "group_disabled":
		return fmt.Sprintf("the group %s is disabled (`t3agent tools enable --group %s` enables it)", spec.Group, spec.Group)
	case "override_on":
		return "enabled by an admin's override"
	case "override_off":
		return fmt.Sprintf("disabled by an admin's override (`t3agent tools enable %s` enables it)", spec.Name)
	case "default_on":
		return "enabled by default"
	case "default_off":
		return fmt.Sprintf("disabled by default (`t3agent tools enable %s` enables it)", spec.Name)
	case "any_user":
		return "any backend user may use it"
	case "admin":
		return fmt.Sprintf("only TYPO3 admins may use it, and %s is one", name)
	case "not_admin":
		return fmt.Sprintf("only TYPO3 admins may use it, and %s is not one", name)
	case "all_groups":
		return fmt.Sprintf("the configuration %s allows every group", cfg.Name)
	case "allowed", "not_allowed":
		verb := "does not allow"
		if c.Passed {
			verb = "allows"
		}
		return fmt.Sprintf("the configuration %s %s the group %s (it allows %s)", cfg.Name, verb, spec.Group, strings.Join(cfg.AllowedGroups, ", "))
	case "within_ceiling":
		return fmt.Sprintf("its output (%s) may go to providers of zone %s, which receive up to %s", d.DataClass, d.Zone, d.Ceiling)
	}
	detail := fmt.Sprintf("its output (%s) is more sensitive than providers of zone %s may receive (up to %s)", d.DataClass, d.Zone, d.Ceiling)
	if c.ObservedOnly {
		detail += "; offered anyway and recorded, because enforcement is observe"
	}
	return detail
}

func printExplanation(w io.Writer, e tool.Entry, d gate.Decision, x toolExplanation) error {
	s := e.Spec
	origin := "builtin"
	if s.Remote {
		origin = "remote (MCP)"
	}
	fmt.Fprintf(w, "Tool %s (%s)\n  %s\n\n", s.Name, origin, s.Description)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  group\t%s\n", s.Group)
	fmt.Fprintf(tw, "  data class\t%s\n", d.DataClass)
	fmt.Fprintf(tw, "  effect\t%s\n", s.Effect)
	fmt.Fprintf(tw, "  admin only\t%s\n", yesOrNo(s.AdminOnly))
	switch {
	case s.RequiresApproval:
		fmt.Fprintln(tw, "  approval\tevery call waits for a person's approval (declared)")
	case s.Effect.IsWrite():
		fmt.Fprintf(tw, "  approval\tevery call waits for a person's approval (%s)\n", s.Effect)
	default:
		fmt.Fprintln(tw, "  approval\tnone: calls run at once")
	}
	if len(s.InputRequest) > 0 {
		fmt.Fprintf(tw, "  input\ta call waits for a person's input matching %s\n", compact(s.InputRequest))
	} else {
		fmt.Fprintln(tw, "  input\tnone")
	}
	_ = tw.Flush()

	fmt.Fprintf(w, "\nThe gate's decision for %s (zone %s):\n", x.Actor, d.Zone)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for i, c := range x.Checks {
		outcome := "pass"
		switch {
		case c.ObservedOnly:
			outcome = "observed"
		case !c.Passed:
			outcome = "FAIL"
		}
		fmt.Fprintf(tw, "  %d. %s\t%s\t%s\n", i+1, c.Check, outcome, c.Detail)
	}
	_ = tw.Flush()
	switch {
	case !d.Allowed:
		fmt.Fprintf(w, "  → denied (%s)\n", d.Reason)
	case d.ObservedOnly:
		fmt.Fprintln(w, "  → offered, observe only: enforcement would deny it (trust_zone)")
	default:
		fmt.Fprintln(w, "  → offered")
	}

	var schema bytes.Buffer
	if err := json.Indent(&schema, s.InputSchema, "  ", "  "); err != nil {
		schema.Reset()
		schema.Write(s.InputSchema)
	}
	fmt.Fprintf(w, "\nInput schema:\n  %s\n\nExample call:\n  %s\n", schema.String(), x.ExampleCall)
	return nil
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// exampleCall is the `tools call` line that calls the tool as the user
// under the same configuration flags.
func exampleCall(cmd *cobra.Command, gf *gateFlags, name, user string, args json.RawMessage) string {
	parts := []string{"t3agent", "tools", "call", name, "--as", shellQuote(user)}
	switch f := cmd.Flags(); {
	case gf.configuration != "":
		parts = append(parts, "-C", shellQuote(gf.configuration))
	default:
		if f.Changed("zone") {
			parts = append(parts, "--zone", shellQuote(gf.zone))
		}
		if f.Changed("groups") {
			parts = append(parts, "--groups", shellQuote(strings.Join(gf.groups, ",")))
		}
	}
	return strings.Join(append(parts, "--args", shellQuote(string(args))), " ")
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote quotes s for a POSIX shell, unless it needs none.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// exampleArgs builds an argument object from a tool's input schema: its
// required properties, each with an example value.
func exampleArgs(schema json.RawMessage) (json.RawMessage, error) {
	var s map[string]any
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, err
	}
	return json.Marshal(exampleOf(s, 0))
}

// exampleOf is an example value for a JSON Schema: its const, default,
// first example or first enum value, else a value of its type within its
// bounds; for strings the "e.g. …" of the description when it has one.
func exampleOf(s map[string]any, depth int) any {
	for _, k := range []string{"const", "default"} {
		if v, ok := s[k]; ok {
			return v
		}
	}
	for _, k := range []string{"examples", "enum"} {
		if list, ok := s[k].([]any); ok && len(list) > 0 {
			return list[0]
		}
	}
	if depth > 8 {
		return nil
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		if list, ok := s[k].([]any); ok && len(list) > 0 {
			if sub, ok := list[0].(map[string]any); ok {
				return exampleOf(sub, depth+1)
			}
		}
	}
	switch typeOf(s) {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		required, _ := s["required"].([]any)
		for _, r := range required {
			name, _ := r.(string)
			sub, _ := props[name].(map[string]any)
			out[name] = exampleOf(sub, depth+1)
		}
		return out
	case "array":
		item, _ := s["items"].(map[string]any)
		return []any{exampleOf(item, depth+1)}
	case "integer":
		return int64(bounded(s, 1))
	case "number":
		return bounded(s, 1)
	case "boolean":
		return true
	case "null":
		return nil
	}
	return exampleString(s)
}

// typeOf is the schema's type; of a list of types the first that is not
// null.
func typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, v := range t {
			if name, ok := v.(string); ok && name != "null" {
				return name
			}
		}
	}
	if _, ok := s["properties"]; ok {
		return "object"
	}
	return "string"
}

// bounded is want moved into the schema's minimum and maximum.
func bounded(s map[string]any, want float64) float64 {
	if lo, ok := s["minimum"].(float64); ok && want < lo {
		want = lo
	}
	if hi, ok := s["maximum"].(float64); ok && want > hi {
		want = hi
	}
	return want
}

var forExample = regexp.MustCompile(`\be\.g\.,? *"?([^\s",;)]+?)"?[.,;)]?(?:\s|$)`)

func exampleString(s map[string]any) string {
	v := "text"
	if desc, ok := s["description"].(string); ok {
		if m := forExample.FindStringSubmatch(desc); m != nil {
			v = m[1]
		}
	}
	switch s["format"] {
	case "date-time":
		v = "2025-01-31T12:00:00Z"
	case "date":
		v = "2025-01-31"
	case "uri", "url":
		v = "https://example.org/"
	case "email":
		v = "editor@example.org"
	}
	if n, ok := s["minLength"].(float64); ok && len(v) < int(n) {
		v += strings.Repeat("x", int(n)-len(v))
	}
	if n, ok := s["maxLength"].(float64); ok && n >= 0 && len(v) > int(n) {
		v = v[:int(n)]
	}
	return v
}
