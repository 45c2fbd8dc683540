package mcpauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/t3agent/t3agent/internal/store"
)

// clientCredentials gets a token with the client credentials grant: with
// the client secret through the SDK's handler, or with a private_key_jwt
// assertion (RFC 7523) signed by the configured key.
func (m *Manager) clientCredentials(ctx context.Context, rec store.MCPOAuthRecord, req *http.Request, resp *http.Response) (oauth2.TokenSource, error) {
	sec, err := m.openSecret(rec)
	if err != nil {
		discard(resp)
		return nil, err
	}
	if sec.Secret != "" {
		h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
			Credentials: &oauthex.ClientCredentials{ClientID: rec.ClientID, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: sec.Secret}},
			HTTPClient:  m.p.HTTPClient,
		})
		if err != nil {
			discard(resp)
			return nil, err
		}
		if err := h.Authorize(ctx, req, resp); err != nil {
			return nil, err
		}
		return h.TokenSource(ctx)
	}
	defer discard(resp)
	key, err := parsePrivateKey(sec.PrivateKey)
	if err != nil {
		return nil, err
	}
	asm, resource, err := m.discover(ctx, resp, req.URL.String())
	if err != nil {
		return nil, err
	}
	scopes := unionScopes(challengeScopes(resp), strings.Fields(rec.Scopes))
	src := &assertionSource{client: m.p.HTTPClient, key: key, clientID: rec.ClientID, audience: asm.Issuer, now: m.p.Now,
		cfg: clientcredentials.Config{ClientID: rec.ClientID, TokenURL: asm.TokenEndpoint, Scopes: scopes,
			AuthStyle: oauth2.AuthStyleInParams, EndpointParams: url.Values{"resource": {resource}}}}
	ts := oauth2.ReuseTokenSource(nil, src)
	if _, err := ts.Token(); err != nil {
		return nil, err
	}
	return ts, nil
}

// discover finds the authorization server of a challenged resource: its
// protected resource metadata (from the challenge, else the well-known
// URLs), then the server's metadata.
func (m *Manager) discover(ctx context.Context, resp *http.Response, resourceURL string) (*oauthex.AuthServerMeta, string, error) {
	var urls [][2]string // metadata URL, resource it must name
	for _, c := range challenges(resp) {
		if u := c.Params["resource_metadata"]; u != "" {
			urls = append(urls, [2]string{u, resourceURL})
		}
	}
	ru, err := url.Parse(resourceURL)
	if err != nil {
		return nil, "", err
	}
	mu := *ru
	mu.RawQuery = ""
	mu.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(ru.Path, "/")
	urls = append(urls, [2]string{mu.String(), resourceURL})
	for _, u := range urls {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, u[0], u[1], m.p.HTTPClient)
		if err != nil || prm == nil || len(prm.AuthorizationServers) == 0 {
			continue
		}
		asm, err := auth.GetAuthServerMetadata(ctx, prm.AuthorizationServers[0], m.p.HTTPClient)
		if err != nil {
			return nil, "", err
		}
		if asm == nil {
			return nil, "", fmt.Errorf("the authorization server %q publishes no metadata", prm.AuthorizationServers[0])
		}
		return asm, prm.Resource, nil
	}
	return nil, "", errors.New("the server publishes no protected resource metadata")
}

// assertionSource asks for a token with a fresh signed client assertion
// each time (an assertion is short-lived and used once).
type assertionSource struct {
	client   *http.Client
	key      crypto.Signer
	clientID string
	audience string
	now      func() time.Time
	cfg      clientcredentials.Config
}

func (s *assertionSource) Token() (*oauth2.Token, error) {
	alg, err := algOf(s.key)
	if err != nil {
		return nil, err
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: s.key}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return nil, err
	}
	now := s.now()
	claims := jwt.Claims{
		Issuer: s.clientID, Subject: s.clientID, Audience: jwt.Audience{s.audience},
		IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now.Add(-time.Minute)),
		Expiry: jwt.NewNumericDate(now.Add(2 * time.Minute)), ID: rand.Text(),
	}
	assertion, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		return nil, err
	}
	cfg := s.cfg
	cfg.EndpointParams = url.Values{}
	for k, v := range s.cfg.EndpointParams {
		cfg.EndpointParams[k] = v
	}
	cfg.EndpointParams.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
	cfg.EndpointParams.Set("client_assertion", assertion)
	return cfg.Token(context.WithValue(context.Background(), oauth2.HTTPClient, s.client))
}

func algOf(k crypto.Signer) (jose.SignatureAlgorithm, error) {
	switch k := k.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve.Params().BitSize {
		case 256:
			return jose.ES256, nil
		case 384:
			return jose.ES384, nil
		case 521:
			return jose.ES512, nil
		}
	case *rsa.PrivateKey:
		return jose.RS256, nil
	case ed25519.PrivateKey:
		return jose.EdDSA, nil
	}
	return "", errors.New("the private key is not an EC, RSA or Ed25519 key")
}

// parsePrivateKey reads a PEM private key (PKCS #8, SEC 1 or PKCS #1).
func parsePrivateKey(pemText string) (crypto.Signer, error) {
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		return nil, errors.New("the private key is not PEM")
	}
	var (
		k   any
		err error
	)
	switch block.Type {
	case "PRIVATE KEY":
		k, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("the private key's PEM type %q is not a private key", block.Type)
	}
	if err != nil {
		return nil, errors.New("the private key cannot be parsed")
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, errors.New("the private key cannot sign")
	}
	if _, err := algOf(s); err != nil {
		return nil, err
	}
	return s, nil
}
