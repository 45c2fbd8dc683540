package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/t3agent/t3agent/internal/store"
)

// Client limits.
const (
	maxRegistrationBody = 64 << 10
	maxMetadataDocument = 16 << 10
	metadataTimeout     = 5 * time.Second
	// metadataFresh is how long a fetched Client ID Metadata Document is
	// used before it is fetched again.
	metadataFresh = time.Hour
)

func hashBytes(b []byte) []byte {
	sum := sha256.Sum256(b)
	return sum[:]
}

// clientMetadata is what a client says of itself: the body of a dynamic
// registration (RFC 7591) or a Client ID Metadata Document.
type clientMetadata struct {
	ClientID                string   `json:"client_id,omitempty"`
	ClientName              string   `json:"client_name,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types,omitempty"`
	ResponseTypes           []string `json:"response_types,omitempty"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method,omitempty"`
	Scope                   string   `json:"scope,omitempty"`
}

// schemePattern is a URI scheme (RFC 3986).
var schemePattern = regexp.MustCompile(`^[a-z][a-z0-9+.-]*$`)

// checkRedirect admits https, http on loopback only (RFC 8252 §7.3) and
// private-use schemes (cursor://, vscode://); never a fragment or a
// scheme a browser would run.
func checkRedirect(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Fragment != "" || len(raw) > 2048 {
		return fmt.Errorf("redirect URI %q is not an absolute URI without a fragment", raw)
	}
	switch s := strings.ToLower(u.Scheme); {
	case s == "https":
		if u.Host == "" {
			return fmt.Errorf("redirect URI %q has no host", raw)
		}
	case s == "http":
		h := u.Hostname()
		if ip := net.ParseIP(h); h != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return fmt.Errorf("redirect URI %q uses http off the loopback interface", raw)
		}
	case slices.Contains([]string{"javascript", "data", "file", "vbscript", "about", "blob", "filesystem", "ftp", "ws", "wss"}, s) || !schemePattern.MatchString(s):
		return fmt.Errorf("redirect URI %q uses a scheme that is not allowed", raw)
	}
	return nil
}

// checkMetadata validates what a client declares; t3agent's clients are
// public and use the code flow with refresh tokens only.
func checkMetadata(m clientMetadata) error {
	if len(m.RedirectURIs) == 0 || len(m.RedirectURIs) > store.MaxRedirectURIs {
		return fmt.Errorf("give 1 to %d redirect_uris", store.MaxRedirectURIs)
	}
	for _, u := range m.RedirectURIs {
		if err := checkRedirect(u); err != nil {
			return err
		}
	}
	if a := m.TokenEndpointAuthMethod; a != "" && a != "none" {
		return fmt.Errorf("token_endpoint_auth_method %q is not supported: clients are public (none) and use PKCE", a)
	}
	for _, g := range m.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return fmt.Errorf("grant type %q is not supported", g)
		}
	}
	for _, rt := range m.ResponseTypes {
		if rt != "code" {
			return fmt.Errorf("response type %q is not supported", rt)
		}
	}
	if len(m.ClientName) > store.MaxNameLen {
		return errors.New("client_name is too long")
	}
	return nil
}

func clientName(m clientMetadata, fallback string) string {
	if n := strings.TrimSpace(strings.ToValidUTF8(m.ClientName, "")); n != "" {
		return strings.ReplaceAll(n, "\x00", "")
	}
	return fallback
}

// register is dynamic client registration (RFC 7591) of a public client.
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	var m clientMetadata
	dec := json.NewDecoder(io.LimitReader(r.Body, maxRegistrationBody))
	if err := dec.Decode(&m); err != nil {
		registrationError(w, "invalid_client_metadata", "The body is not a JSON client metadata document.")
		return
	}
	if err := checkMetadata(m); err != nil {
		code := "invalid_client_metadata"
		if strings.HasPrefix(err.Error(), "redirect URI") || strings.Contains(err.Error(), "redirect_uris") {
			code = "invalid_redirect_uri"
		}
		registrationError(w, code, capitalize(err.Error())+".")
		return
	}
	c, err := s.p.Store.PutOAuthClient(r.Context(), store.OAuthClient{
		ClientID: "t3c_" + randomID(), Name: clientName(m, "MCP host"), RedirectURIs: m.RedirectURIs, Kind: store.OAuthClientRegistered,
	})
	if err != nil {
		s.log.ErrorContext(r.Context(), "cannot register an OAuth client", "error", err.Error())
		http.Error(w, `{"error":"server_error"}`, http.StatusInternalServerError)
		return
	}
	s.log.InfoContext(r.Context(), "OAuth client registered", "client_id", c.ClientID, "name", c.Name)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"client_id": c.ClientID, "client_id_issued_at": c.CreatedAt.Unix(), "client_name": c.Name, "redirect_uris": c.RedirectURIs,
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
		"token_endpoint_auth_method": "none",
	})
}

func registrationError(w http.ResponseWriter, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// client finds a client: a registered one, or one whose id is the https
// URL of its Client ID Metadata Document, fetched (and kept for an hour).
func (s *Server) client(ctx context.Context, id string) (store.OAuthClient, error) {
	c, err := s.p.Store.OAuthClient(ctx, id)
	isDoc := strings.HasPrefix(id, "https://")
	switch {
	case err == nil && (c.Kind != store.OAuthClientDocument || s.now().Sub(c.UpdatedAt) < metadataFresh):
		return c, nil
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return c, err
	case !isDoc:
		return c, err
	}
	m, err := s.fetchMetadata(ctx, id)
	if err != nil {
		s.log.InfoContext(ctx, "client metadata document refused", "client_id", id, "error", err.Error())
		return store.OAuthClient{}, err
	}
	return s.p.Store.PutOAuthClient(ctx, store.OAuthClient{ClientID: id, Name: clientName(m, hostOf(id)), RedirectURIs: m.RedirectURIs, Kind: store.OAuthClientDocument})
}

func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Host
	}
	return raw
}

// fetchMetadata reads a Client ID Metadata Document: https with a path,
// JSON, at most 16 KiB, naming itself as client_id.
func (s *Server) fetchMetadata(ctx context.Context, id string) (clientMetadata, error) {
	u, err := url.Parse(id)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" || u.Fragment != "" || u.User != nil {
		return clientMetadata{}, errors.New("a client id URL must be https with a path")
	}
	ctx, cancel := context.WithTimeout(ctx, metadataTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return clientMetadata{}, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.fetch.Do(req)
	if err != nil {
		return clientMetadata{}, fmt.Errorf("fetch the client metadata document: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return clientMetadata{}, fmt.Errorf("the client metadata document answered HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataDocument+1))
	if err != nil || len(body) > maxMetadataDocument {
		return clientMetadata{}, errors.New("the client metadata document is unreadable or too large")
	}
	var m clientMetadata
	if err := json.Unmarshal(body, &m); err != nil {
		return clientMetadata{}, errors.New("the client metadata document is not JSON")
	}
	if m.ClientID != id {
		return clientMetadata{}, errors.New("the client metadata document names another client_id")
	}
	return m, checkMetadata(m)
}

// publicClient reaches only public addresses: a client id URL is the
// client's to choose, so it must not turn t3agent against its own
// network (SSRF).
func publicClient() *http.Client {
	d := &net.Dialer{Timeout: metadataTimeout, Control: func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		ip := net.ParseIP(host)
		if ip == nil || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified() || ip.IsMulticast() {
			return fmt.Errorf("address %s is not public", host)
		}
		return nil
	}}
	return &http.Client{
		Timeout:   metadataTimeout,
		Transport: &http.Transport{DialContext: d.DialContext, TLSHandshakeTimeout: metadataTimeout, Proxy: nil},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return errors.New("the client metadata document must not redirect")
		},
	}
}
