// Package builtin assembles t3agent's builtin tools. Each group lives in its
// own package (content, structure, …); this package only lists them, so
// adding a group is one line here.
package builtin

import (
	"github.com/t3agent/t3agent/internal/builtin/accounts"
	"github.com/t3agent/t3agent/internal/builtin/code"
	"github.com/t3agent/t3agent/internal/builtin/configuration"
	"github.com/t3agent/t3agent/internal/builtin/content"
	"github.com/t3agent/t3agent/internal/builtin/files"
	"github.com/t3agent/t3agent/internal/builtin/sitesearch"
	"github.com/t3agent/t3agent/internal/builtin/structure"
	"github.com/t3agent/t3agent/internal/builtin/system"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/siteindex"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Params configure ToolsWith beyond the site; the zero value is Tools.
type Params struct {
	// SiteSearch configures site_rag_query and site_fetch_source (Solr).
	SiteSearch sitesearch.Params
	// Index, when set, is search_records' candidate source (nil: scan).
	Index *siteindex.Index
}

// Tools returns every builtin tool for one site. All of them are read-only
// and go through the read policy.
func Tools(site *typo3.Site, policy *readpolicy.Policy) []tool.Tool {
	return ToolsWith(site, policy, Params{})
}

// ToolsWith is Tools with explicit parameters.
func ToolsWith(site *typo3.Site, policy *readpolicy.Policy, p Params) []tool.Tool {
	var out []tool.Tool
	out = append(out, content.ToolsWith(content.ToolsParams{Site: site, Policy: policy, Index: p.Index})...)
	out = append(out, structure.Tools(site, policy)...)
	out = append(out, configuration.Tools(site, policy)...)
	// Introspection: site configuration, code and system (issue 15).
	out = append(out, configuration.SiteConfigTools(site)...)
	out = append(out, code.Tools(site, policy)...)
	out = append(out, system.Tools(site, policy)...)
	// files and accounts: the FAL tools (storage allow-list: storage 1)
	// and the admin-only backend user and group lists.
	out = append(out, files.Tools(site, policy, nil)...)
	out = append(out, accounts.Tools(site)...)
	// rag: site search over the site's public content (issue 16).
	out = append(out, sitesearch.ToolsWith(site, p.SiteSearch)...)
	return out
}
