// Package mcpauth authorizes t3agent to external MCP servers with OAuth
// 2.1, the way the MCP authorization specification asks of a client,
// using the official Go SDK's client (auth, oauthex) and
// golang.org/x/oauth2: protected resource metadata (RFC 9728, from the
// WWW-Authenticate challenge or the well-known URLs), authorization
// server metadata (RFC 8414 or OpenID discovery), the client known by
// its Client ID Metadata Document, pre-registered, or registered
// dynamically (RFC 7591), authorization code with PKCE S256, the
// resource indicator (RFC 8707) and the iss check (RFC 9207); refresh
// tokens are used and their rotation stored; a 403 insufficient_scope
// asks for the union of the scopes; machine-to-machine servers use the
// client credentials grant (client_secret_basic/post or private_key_jwt).
//
// # Logins and grants
//
// A Manager keeps one record per server in the store (Configure): the
// flow, the client (its secret sealed), the scopes and the redirect URL.
// Login runs the authorization code flow once, with a person (the URL is
// shown and the callback awaited, Callbacks) or without one (Follow, for
// authorization servers that approve at once, such as the conformance
// suite's); the grant — tokens, the client the registration produced,
// the token endpoint — is sealed with the master key, bound to the
// server and the issuer, and never logged. Handler (mcp.OAuthSource)
// gives the MCP client what it needs per server: the stored token,
// refreshed when due (rotated refresh tokens are stored at once). When
// the server refuses the grant (revoked, expired) or asks for more
// scope, the record turns "needs login" and every call fails at once
// with mcp.KindNeedsLogin until a person logs in again — unless the
// Manager was given Params.Authorize, in which case it logs in again
// itself.
//
// # Concurrency
//
// A Manager and its handlers are safe for concurrent use. Two processes
// sharing a store each refresh on their own; the newer grant in the
// store wins when a server refuses the older one.
package mcpauth
