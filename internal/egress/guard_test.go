package egress_test

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/t3agent/t3agent/internal/egress"
	"github.com/t3agent/t3agent/internal/egress/egresstest"
)

func TestGuardURLs(t *testing.T) {
	t.Parallel()
	g, err := egress.NewGuard(egress.GuardParams{})
	if err != nil {
		t.Fatal(err)
	}
	for raw, want := range egresstest.URLCases() {
		_, err := g.CheckURL(raw)
		switch {
		case want == "" && err != nil:
			t.Errorf("CheckURL(%.60q) = %v, want allowed", raw, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("CheckURL(%.60q) = %v, want refused: %s", raw, err, want)
		}
	}

	allow, err := egress.NewGuard(egress.GuardParams{AllowedHosts: []string{"mcp.example.com", "127.0.0.1:8080", " "}})
	if err != nil {
		t.Fatal(err)
	}
	for raw, ok := range map[string]bool{
		"https://mcp.example.com/x":      true,
		"http://MCP.example.com:9000/x":  true,
		"http://127.0.0.1:8080/":         true,
		"http://127.0.0.1:8081/":         false,
		"http://other.example.com/":      false,
		"http://169.254.169.254:8080/":   false, // refused whatever the list says
		"http://[::1]:8080/":             false,
		"https://mcp.example.com.evil/x": false,
	} {
		if _, err := allow.CheckURL(raw); (err == nil) != ok {
			t.Errorf("allow-list CheckURL(%q) = %v, want allowed=%v", raw, err, ok)
		}
	}
	if _, err := egress.NewGuard(egress.GuardParams{AllowedHosts: []string{"http://x/"}}); err == nil {
		t.Error("a URL was accepted as an allow-list entry")
	}
}

// dnsServer answers A queries for every name: first with first, then
// with later, the way a rebinding attacker's name server would.
type dnsServer struct {
	conn    net.PacketConn
	first   net.IP
	later   net.IP
	queries atomic.Int64
	wg      sync.WaitGroup
}

func newDNSServer(t *testing.T, first, later string) *dnsServer {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &dnsServer{conn: pc, first: net.ParseIP(first).To4(), later: net.ParseIP(later).To4()}
	d.wg.Go(d.serve)
	t.Cleanup(func() {
		_ = pc.Close()
		d.wg.Wait()
	})
	return d
}

func (d *dnsServer) serve() {
	buf := make([]byte, 512)
	for {
		n, addr, err := d.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		q := buf[:n]
		if len(q) < 12 {
			continue
		}
		// The question ends after the name's zero label, type and class.
		end := 12
		for end < len(q) && q[end] != 0 {
			end += int(q[end]) + 1
		}
		end += 5
		if end > len(q) {
			continue
		}
		qtype := binary.BigEndian.Uint16(q[end-4:])
		resp := append([]byte{}, q[:end]...)
		binary.BigEndian.PutUint16(resp[2:], 0x8180) // response, recursion available, no error
		binary.BigEndian.PutUint16(resp[6:], 0)      // answers
		binary.BigEndian.PutUint16(resp[8:], 0)
		binary.BigEndian.PutUint16(resp[10:], 0)
		if qtype == 1 {
			ip := d.first
			if d.queries.Add(1) > 1 {
				ip = d.later
			}
			binary.BigEndian.PutUint16(resp[6:], 1)
			resp = append(resp, 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4)
			resp = append(resp, ip...)
		}
		_, _ = d.conn.WriteTo(resp, addr)
	}
}

func (d *dnsServer) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var dl net.Dialer
		return dl.DialContext(ctx, "udp", d.conn.LocalAddr().String())
	}}
}

// TestGuardRebinding: a name that resolves to loopback when checked and
// to the metadata address when dialled is refused at dial time.
func TestGuardRebinding(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	d := newDNSServer(t, "127.0.0.1", "169.254.169.254")
	g, err := egress.NewGuard(egress.GuardParams{Resolver: d.resolver()})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("http://rebind.test:80/mcp")
	if err := g.Check(ctx, u); err != nil {
		t.Fatalf("the first lookup (loopback) was refused: %v", err)
	}
	conn, err := g.DialContext(ctx, "tcp", "rebind.test:80")
	if err == nil {
		_ = conn.Close()
		t.Fatal("the dial reached the rebound address")
	}
	var ge *egress.GuardError
	if !strings.Contains(err.Error(), "169.254.169.254") || !errors.As(err, &ge) {
		t.Errorf("dial error = %v, want the guard's refusal of 169.254.169.254", err)
	}
	if d.queries.Load() < 2 {
		t.Errorf("%d A lookups; the dial did not resolve again", d.queries.Load())
	}
	// An IP literal is checked at dial time too.
	if _, err := g.DialContext(ctx, "tcp", "169.254.169.254:80"); err == nil || !strings.Contains(err.Error(), "link-local") {
		t.Errorf("dialing the metadata address: %v", err)
	}
}
