// Package oauth is t3agent's OAuth 2.1 authorization server for MCP
// hosts, built on zitadel/oidc's op provider (authorization, token,
// revocation and keys endpoints) over t3agent's store, so several
// processes sharing a store serve one authorization server.
//
// What t3agent adds around op: the resource indicator (RFC 8707), which
// must name an MCP endpoint of this server and binds the grant; PKCE with
// S256 required; public clients only, known by Client ID Metadata
// Document (fetched from public https addresses only) or registered
// dynamically (RFC 7591); iss in every authorization response (RFC
// 9207); metadata (RFC 8414); rotating refresh tokens whose replay
// revokes the grant; and the consent page, where a person logs in with
// TYPO3 backend credentials (Params.Login, under the API's login limit)
// and sees the tools the host will get (Params.Tools).
//
// Codes and access tokens are op's AES-256-GCM encryption of a random id
// under a key derived from the master key, prefixed "t3o_"; refresh
// tokens are random ("t3r_…") and stored as their SHA-256. Verify checks
// an access token for the MCP facade: live, of a live grant, bound to the
// endpoint; the caller then loads the grant's user afresh.
//
// A Server is safe for concurrent use.
package oauth

// ScopeMCP is the one scope t3agent grants: using the MCP facade as the
// person who consented.
const ScopeMCP = "mcp"
