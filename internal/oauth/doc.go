// Package oauth is t3agent's OAuth 2.1 authorization server for MCP
// hosts, built on zitadel/oidc's op provider.
package oauth

// ScopeMCP is the one scope t3agent grants: using the MCP facade as the
// person who consented.
const ScopeMCP = "mcp"
