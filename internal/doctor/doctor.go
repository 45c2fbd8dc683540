// Package doctor checks an installation of t3agent and says, per
// finding, what is wrong and how to fix it: the site database (reachable,
// and read-only for t3agent's user), the TCA source, the project root and
// its logs, the own store (reachable, schema current), the master key and
// whether it opens the sealed credentials, every provider and every MCP
// server (reachable, and logged in), the clocks of the databases against
// this machine's, and whether the HTTP listener is exposed without TLS.
//
// Run never changes the site or the configuration. It reads the store
// without migrating it; the one write it makes is the "last contact" an
// MCP ping records, as any ping does.
//
// A Report's ExitCode is 0 when every finding is ok, 1 when the worst is a
// warning and 2 when one is an error, so monitoring can run
// `t3agent doctor --json` and alert on the code.
package doctor

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/t3agent/t3agent/internal/config"
)

// Severity ranks a finding.
type Severity int

const (
	OK Severity = iota
	Warning
	Error
)

func (s Severity) String() string {
	switch s {
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return "ok"
}

// MarshalText writes the name, so JSON shows "warning".
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Finding is one result: what was checked, how it stands, and for
// anything but ok how to fix it. Messages are one sentence each and never
// hold a password or a key.
type Finding struct {
	// Check names what was checked: "site.database", "provider:openai",
	// "mcp:docs"; stable, for monitoring.
	Check    string   `json:"check"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	Fix      string   `json:"fix,omitempty"`
}

// Report is every finding, in the order the checks ran.
type Report struct {
	Findings []Finding `json:"findings"`
}

// Worst is the highest severity of the report.
func (r Report) Worst() Severity {
	w := OK
	for _, f := range r.Findings {
		w = max(w, f.Severity)
	}
	return w
}

// ExitCode is 0 (all ok), 1 (warnings) or 2 (errors).
func (r Report) ExitCode() int { return int(r.Worst()) }

// Params are the parameters of Run.
type Params struct {
	// Config is the loaded configuration.
	Config config.Config
	// TCAExport is the operator's JSON export of the TCA the CLI would
	// use (site.tca, or the one `t3agent tca import` stored), "" for none.
	TCAExport string
	// LookupEnv reads the env:NAME keys of providers; nil means none is set.
	LookupEnv func(name string) (string, bool)
	// Version is reported to MCP servers.
	Version string
	// Timeout bounds each check that goes over the network; 0 means 10 s.
	Timeout time.Duration
	// Now is this machine's clock, for the skew checks; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// DefaultTimeout bounds one networked check.
const DefaultTimeout = 10 * time.Second

// MaxSkew is the clock difference to a database that is still ok: leases
// and cleanup compare times written by different machines.
const MaxSkew = 2 * time.Second

// Run checks the installation. It never fails: every problem is a finding.
func Run(ctx context.Context, p Params) Report {
	if p.Timeout <= 0 {
		p.Timeout = DefaultTimeout
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
	if p.LookupEnv == nil {
		p.LookupEnv = func(string) (string, bool) { return "", false }
	}
	d := &doctor{p: p}
	d.site(ctx)
	d.files()
	d.store(ctx)
	d.listen()
	return Report{Findings: d.findings}
}

// doctor collects the findings of one Run.
type doctor struct {
	p        Params
	findings []Finding
}

func (d *doctor) ok(check, msg string) {
	d.findings = append(d.findings, Finding{Check: check, Severity: OK, Message: msg})
}

func (d *doctor) warn(check, msg, fix string) {
	d.findings = append(d.findings, Finding{Check: check, Severity: Warning, Message: msg, Fix: fix})
}

func (d *doctor) fail(check, msg, fix string) {
	d.findings = append(d.findings, Finding{Check: check, Severity: Error, Message: msg, Fix: fix})
}

// bounded is ctx with the timeout of one networked check.
func (d *doctor) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d.p.Timeout)
}

// sentence trims an error message into a sentence's middle part.
func sentence(err error) string {
	return strings.TrimSuffix(strings.TrimSpace(strings.ReplaceAll(err.Error(), "\n", " ")), ".")
}
