// Package egress keeps t3agent's outgoing HTTP away from addresses it
// must never reach. One Guard checks every URL t3agent fetches on
// someone's behalf: the MCP client's server URLs and the probe_url tool's
// site URLs use the same rules (SPEC §3: link-local and cloud metadata
// addresses always refused, an optional host allow-list).
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// MaxURLLen bounds a URL, in bytes.
const MaxURLLen = 2048

// metadataAddrs are cloud instance-metadata endpoints outside the
// link-local ranges (which are refused as a whole).
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("fd00:ec2::254"),   // AWS, IPv6
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
	netip.MustParseAddr("168.63.129.16"),   // Azure wire server
}

// metadataHosts are names of metadata services; they are refused before
// any lookup, whatever they resolve to.
var metadataHosts = []string{
	"metadata", "metadata.google.internal", "metadata.goog", "metadata.azure.internal",
	"instance-data", "instance-data.ec2.internal",
}

// nat64 and sixToFour embed an IPv4 address in an IPv6 one; the embedded
// address is checked too, so metadata cannot hide behind a translator.
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	thisNet   = netip.MustParsePrefix("0.0.0.0/8")
)

// GuardError is why the guard refused a URL or an address. Its message
// is safe to show: it names the host, never a credential.
type GuardError struct{ Reason string }

func (e *GuardError) Error() string { return "the address is refused: " + e.Reason }

func refuse(format string, args ...any) error {
	return &GuardError{Reason: fmt.Sprintf(format, args...)}
}

// GuardParams configure NewGuard.
type GuardParams struct {
	// AllowedHosts, when not empty, are the only hosts t3agent may reach:
	// "host" allows every port, "host:port" one. Names compare without
	// case; IP addresses are written as in URLs ("[::1]:8080").
	AllowedHosts []string
	// Resolver looks host names up; nil means net.DefaultResolver.
	Resolver *net.Resolver
	// ListName names the allow-list in refusals ("MCP host allow-list");
	// empty means "host allow-list".
	ListName string
}

// Guard keeps outgoing traffic away from addresses it must never reach. It
// checks a URL's shape (http or https, no user info, a host, at most
// MaxURLLen bytes), refuses the names and addresses of cloud metadata
// services and every link-local, unspecified, multicast and broadcast
// address, and, when an allow-list is configured, every host not on it.
//
// Loopback and private addresses are allowed unless an allow-list says
// otherwise: the site's own MCP server often runs on the same machine or
// network, and SPEC §3 refuses only link-local and metadata addresses
// unconditionally. Operators who want less configure AllowedHosts.
//
// Check resolves a host and checks every address it has, so a name with
// one bad address is refused whole. DialContext does the same at connect
// time and connects only to an address it checked, so a name that
// resolves differently the second time (DNS rebinding) gains nothing.
//
// A Guard is immutable and safe for concurrent use.
type Guard struct {
	hosts    map[string]bool // lower-case host or host:port
	resolver *net.Resolver
	listName string
}

// NewGuard returns a guard; an allow-list entry that is not a host or
// host:port is an error.
func NewGuard(p GuardParams) (*Guard, error) {
	g := &Guard{resolver: p.Resolver, listName: p.ListName}
	if g.listName == "" {
		g.listName = "host allow-list"
	}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	for _, h := range p.AllowedHosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "" {
			continue
		}
		if strings.ContainsAny(h, "/@?# ") {
			return nil, fmt.Errorf("the %s entry %q is not a host or host:port", g.listName, h)
		}
		if g.hosts == nil {
			g.hosts = map[string]bool{}
		}
		g.hosts[h] = true
	}
	return g, nil
}

// CheckURL parses raw and checks it without resolving anything: scheme,
// user info, length, metadata names, IP literals and the allow-list.
func (g *Guard) CheckURL(raw string) (*url.URL, error) {
	if len(raw) > MaxURLLen {
		return nil, refuse("the URL is %d bytes long, more than the %d allowed", len(raw), MaxURLLen)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, refuse("the URL cannot be parsed")
	}
	switch u.Scheme {
	case "http", "https":
	default:
		return nil, refuse("only http and https URLs are allowed")
	}
	if u.User != nil {
		return nil, refuse("the URL must not carry user info; configure the credential instead")
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return nil, refuse("the URL has no host")
	}
	if err := g.checkHost(u.Hostname(), u.Port(), u.Scheme); err != nil {
		return nil, err
	}
	return u, nil
}

// checkHost applies the name rules and the allow-list to one host.
func (g *Guard) checkHost(host, port, scheme string) error {
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	for _, m := range metadataHosts {
		if name == m {
			return refuse("%s is a cloud metadata service", host)
		}
	}
	if ip, err := netip.ParseAddr(name); err == nil {
		if why := refusedAddr(ip); why != "" {
			return refuse("%s is %s", host, why)
		}
	}
	if g.hosts != nil {
		if port == "" {
			port = "443"
			if scheme == "http" {
				port = "80"
			}
		}
		if !g.hosts[name] && !g.hosts[net.JoinHostPort(name, port)] {
			return refuse("%s is not on the %s", net.JoinHostPort(host, port), g.listName)
		}
	}
	return nil
}

// refusedAddr says why ip is never reached, or "" when it may be.
func refusedAddr(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid():
		return "not an IP address"
	case ip.IsUnspecified() || thisNet.Contains(ip):
		return "an unspecified address"
	case ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast():
		return "a link-local address (where cloud metadata services live)"
	case ip.IsMulticast() || ip.IsInterfaceLocalMulticast():
		return "a multicast address"
	case ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "the broadcast address"
	}
	for _, m := range metadataAddrs {
		if ip == m {
			return "a cloud metadata address"
		}
	}
	if ip.Is6() {
		b := ip.As16()
		var inner netip.Addr
		switch {
		case nat64.Contains(ip):
			inner = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		case sixToFour.Contains(ip):
			inner = netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
		}
		if inner.IsValid() {
			if why := refusedAddr(inner); why != "" {
				return why + " inside an IPv6 translation address"
			}
		}
	}
	return ""
}

// Check checks u like CheckURL and resolves its host, refusing it unless
// every address is allowed. Call it before a credential is attached.
func (g *Guard) Check(ctx context.Context, u *url.URL) error {
	if _, err := g.CheckURL(u.String()); err != nil {
		return err
	}
	_, err := g.resolve(ctx, u.Hostname())
	return err
}

// resolve looks host up and returns its addresses if all are allowed.
func (g *Guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		if why := refusedAddr(ip); why != "" {
			return nil, refuse("%s is %s", host, why)
		}
		return []netip.Addr{ip.Unmap()}, nil
	}
	ips, err := g.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &UnreachableError{err: fmt.Errorf("the host %s cannot be resolved", host)}
	}
	if len(ips) == 0 {
		return nil, &UnreachableError{err: fmt.Errorf("the host %s has no address", host)}
	}
	for i, ip := range ips {
		if why := refusedAddr(ip); why != "" {
			return nil, refuse("%s resolves to %s, %s", host, ip.Unmap(), why)
		}
		ips[i] = ip.Unmap()
	}
	return ips, nil
}

// DialContext connects to addr ("host:port") after resolving and
// checking the host again, and only to an address it checked. It is the
// dialer of every guarded connection.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, refuse("the address %q has no port", addr)
	}
	if err := g.checkHost(host, portText, ""); err != nil {
		return nil, err
	}
	ips, err := g.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	var errs []error
	for _, ip := range ips {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), portText))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, &UnreachableError{err: errors.Join(errs...)}
}

// UnreachableError marks a failure to reach a host at all: it cannot be
// resolved, has no address, or no connection succeeded.
type UnreachableError struct{ err error }

func (e *UnreachableError) Error() string { return e.err.Error() }
func (e *UnreachableError) Unwrap() error { return e.err }
