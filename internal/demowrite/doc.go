// Package demowrite is the demo site's write server: an MCP server (the
// official Go SDK over Streamable HTTP) that changes the demo TYPO3 site
// the way TYPO3's own MCP servers do, so a newcomer can watch a write wait
// for approval, approve it and find the change in the site. Only
// `t3agent demo` starts it; it takes a *demo.Result, which only the demo
// generator hands out, and writes to that demo's database alone.
//
// Its tools:
//
//   - update_page_metadata: title, nav_title, subtitle and the metadata
//     fields of a page (description, keywords, abstract, author,
//     author_email — the SEO fields of a site without EXT:seo);
//   - create_content_element_draft: a text, header or bullets element,
//     created hidden;
//   - set_file_alternative_text: sys_file_metadata.alternative of a file.
//
// Each write is one transaction that, like TYPO3's DataHandler, sets the
// record's tstamp and adds a sys_history row (insert: actiontype 1 and the
// new record as JSON; update: actiontype 2 with {"oldRecord","newRecord"}
// of the changed fields only) and a sys_log row; an update that changes
// nothing writes nothing. The acting backend user is the one who granted
// the token, loaded afresh per call, with TYPO3's table, page (web mount
// and perms bits), CType and language permissions.
//
// The server is an OAuth 2.1 protected resource: /mcp answers 401 with a
// WWW-Authenticate challenge naming its RFC 9728 metadata, and the
// authorization server on the same loopback port is t3agent's own
// (package oauth) with a key of its own, so a token of t3agent's MCP
// facade is refused here and the other way round; a token must be bound
// (RFC 8707) to this server's /mcp. Login completes that flow for the demo
// itself, as the demo's admin, whose password the demo knows.
//
// A Server is safe for concurrent use.
package demowrite
