package system

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/t3agent/t3agent/internal/builtin/introspect"
	"github.com/t3agent/t3agent/internal/egress"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3/extpath"
	"github.com/t3agent/t3agent/internal/typo3/logfile"
	"github.com/t3agent/t3agent/internal/typo3/siteconfig"
)

// Limits of probe_url.
const (
	probeBodyBytes = 2048
	probeErrors    = 3
	probeWindow    = 30 * time.Second
)

type probeURL struct{ env }

func (t *probeURL) Spec() tool.Spec {
	return introspect.Spec("probe_url", tool.GroupSystem, tool.SystemDiagnostics, true,
		"Fetches one page of the TYPO3 site with a single GET (no redirects followed, 15 s timeout) and answers "+
			"the HTTP status, the headers content-type, location, cache-control and x-typo3-cache, and the first "+
			"2 kB of the body (credentials masked). On a 5xx answer, up to 3 errors TYPO3 logged within 30 s are "+
			"added. Only URLs on a host and port of a configured site base (config/sites) are fetched, through "+
			"t3agent's egress guard (never link-local or cloud metadata addresses); a bare /path is resolved "+
			"against the first site base with a host. Use it to check whether a page answers, redirects or is "+
			"cached.",
		`{"type":"object","properties":{`+
			`"url":{"type":"string","minLength":1,"maxLength":4096,"description":"http(s) URL on a site base, or a path such as /products/."}`+
			`},"required":["url"],"additionalProperties":false}`)
}

func (t *probeURL) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if res, ok := introspect.Authorize(call); !ok {
		return res, nil
	}
	raw, err := introspect.String(args, "url")
	if err != nil || raw == "" {
		return tool.Errorf("url must be an http(s) URL or a path."), nil
	}
	root, ok := t.root()
	if !ok {
		return tool.Errorf("%s", noRoot), nil
	}
	lookup := siteconfig.EnvLookup(root)
	m, _ := extpath.Resolve(root)
	sites, err := siteconfig.Load(siteconfig.Params{Root: root, Extensions: m, Env: lookup})
	if err != nil {
		return tool.Result{}, err
	}
	allowed := map[string]bool{}
	var first *url.URL
	for _, s := range sites {
		for _, b := range s.Bases {
			u, err := url.Parse(b)
			if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
				continue
			}
			allowed[hostPort(u)] = true
			if first == nil {
				first = u
			}
		}
	}
	if strings.HasPrefix(raw, "/") && !strings.HasPrefix(raw, "//") {
		if first == nil {
			return tool.Errorf("No site base with a host is configured, so the path %s cannot be resolved; give a full URL.", introspect.Cut(raw, 100)), nil
		}
		raw = first.Scheme + "://" + first.Host + raw
	}
	u, err := t.p.Guard.CheckURL(raw)
	if err != nil {
		return tool.Errorf("The URL is refused: %s.", guardReason(err)), nil
	}
	if !allowed[hostPort(u)] {
		return tool.Errorf("The URL is refused: %s is not the host and port of a configured site base.", hostPort(u)), nil
	}
	ctx, cancel := context.WithTimeout(ctx, t.p.ProbeTimeout)
	defer cancel()
	if err := t.p.Guard.Check(ctx, u); err != nil {
		var ge *egress.GuardError
		if errors.As(err, &ge) {
			return tool.Errorf("The URL is refused: %s.", guardReason(err)), nil
		}
		return tool.Errorf("%s cannot be reached: %s.", u.Host, introspect.Cut(err.Error(), 200)), nil
	}
	client := &http.Client{
		Transport: &http.Transport{Proxy: nil, DialContext: t.p.Guard.DialContext, TLSHandshakeTimeout: 10 * time.Second,
			ResponseHeaderTimeout: t.p.ProbeTimeout, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return tool.Errorf("The URL cannot be requested."), nil
	}
	req.Header.Set("User-Agent", "t3agent probe_url")
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		var ge *egress.GuardError
		switch {
		case errors.As(err, &ge):
			return tool.Errorf("The URL is refused: %s.", guardReason(err)), nil
		case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
			return tool.Errorf("%s did not answer within %s.", u.Redacted(), t.p.ProbeTimeout), nil
		}
		var ne net.Error
		if errors.As(err, &ne) {
			return tool.Errorf("%s cannot be reached.", u.Host), nil
		}
		return tool.Errorf("%s cannot be reached.", u.Host), nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, probeBodyBytes))
	took := time.Since(start)
	out := introspect.NewOutput(80)
	out.Line("GET %s → HTTP %d %s (%d ms)", u.String(), resp.StatusCode, http.StatusText(resp.StatusCode), took.Milliseconds())
	for _, h := range []string{"Content-Type", "Location", "Cache-Control", "X-TYPO3-Cache"} {
		if v := resp.Header.Get(h); v != "" {
			out.Line("%s: %s", strings.ToLower(h), introspect.Cut(introspect.Text(v), 300))
		}
	}
	excerpt := strings.ToValidUTF8(string(body), "?")
	out.Line("Body (first %d bytes):", len(body))
	for _, l := range strings.Split(introspect.Text(excerpt), "\n") {
		if strings.TrimSpace(l) != "" {
			out.Line("  %s", introspect.Cut(l, 300))
		}
	}
	if resp.StatusCode >= 500 {
		for _, r := range nearbyErrors(root, start) {
			out.Line("Logged %s [%s] %s: %s", introspect.Date(r.Time), r.Level, r.Component, introspect.Cut(introspect.Text(r.Message), 300))
		}
	}
	return tool.Text(out.String()), nil
}

// nearbyErrors returns up to probeErrors log errors within probeWindow
// of at, newest first.
func nearbyErrors(root string, at time.Time) []logfile.Record {
	files, _ := logfile.Files(root, false)
	var out []logfile.Record
	for _, f := range files {
		b, err := logfile.Tail(f.Path, 2<<20)
		if err != nil {
			continue
		}
		recs := logfile.Parse(b)
		for i := len(recs) - 1; i >= 0 && len(out) < probeErrors; i-- {
			r := recs[i]
			if r.Error() && r.Time.After(at.Add(-probeWindow)) && r.Time.Before(at.Add(probeWindow)) {
				out = append(out, r)
			}
		}
	}
	return out
}

// hostPort is host:port with the scheme's default port filled in.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	return net.JoinHostPort(strings.ToLower(strings.TrimSuffix(u.Hostname(), ".")), port)
}

func guardReason(err error) string {
	return strings.TrimPrefix(err.Error(), "the address is refused: ")
}
