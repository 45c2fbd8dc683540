package demo

import (
	"strconv"
	"strings"
)

// Page permission bits (TYPO3 Permission): show 1, edit 2, delete 4, new 8,
// content 16.
const (
	permAll      = 31
	permGroupDef = 27
)

// Doktypes used by the demo.
const (
	doktypeStandard = 1
	doktypeShortcut = 4
	doktypeFolder   = 254
)

// Fixed instants of docs/demo-site.md.
const (
	start2030 = 1893456000 // 2030-01-01 00:00:00 UTC
	end2020   = 1577836800 // 2020-01-01 00:00:00 UTC
)

// Number of fixed rows; filler uids start right after.
const (
	fixedPages   = 25
	fixedContent = 6
)

type page struct {
	uid, pid, sorting  int
	lang, l10nParent   int
	doktype            int
	title, navTitle    string
	subtitle, slug     string
	hidden, deleted    int
	navHide, siteroot  int
	starttime, endtime int64
	crdate, tstamp     int64
	permsUserID        int
	permsGroupID       int
	permsUser          int
	permsGroup         int
	permsEverybody     int
	shortcut           int
	shortcutMode       int
	tsconfig           string
	tsconfigIncludes   string
	backendLayout      string
	backendLayoutNext  string
	description        string
	keywords           string
	abstract           string
	author             string
	authorEmail        string
	categories         int
	feGroup            string
	l10nDiff           string
	noSearch           int
}

func pageColumns() []string {
	return []string{
		"uid", "pid", "tstamp", "crdate", "deleted", "hidden", "starttime", "endtime", "fe_group", "sorting",
		"editlock", "sys_language_uid", "l10n_parent", "l10n_source", "l10n_state", "l10n_diffsource",
		"t3ver_oid", "t3ver_wsid", "t3ver_state", "t3ver_stage",
		"perms_userid", "perms_groupid", "perms_user", "perms_group", "perms_everybody",
		"SYS_LASTCHANGED", "shortcut", "shortcut_mode", "doktype", "title", "slug", "TSconfig", "tsconfig_includes",
		"categories", "nav_title", "nav_hide", "subtitle", "lastUpdated", "no_search", "keywords", "description",
		"abstract", "author", "author_email", "is_siteroot", "backend_layout", "backend_layout_next_level",
		"rowDescription",
	}
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (p *page) values() []any {
	var l10nState any
	if p.lang != 0 {
		l10nState = `{"title":"custom","nav_title":"parent","slug":"custom"}`
	}
	return []any{
		p.uid, p.pid, p.tstamp, p.crdate, p.deleted, p.hidden, p.starttime, p.endtime, p.feGroup, p.sorting,
		0, p.lang, p.l10nParent, p.l10nParent, l10nState, nullIfEmpty(p.l10nDiff),
		0, 0, 0, 0,
		p.permsUserID, p.permsGroupID, p.permsUser, p.permsGroup, p.permsEverybody,
		p.tstamp, p.shortcut, p.shortcutMode, p.doktype, p.title, p.slug, nullIfEmpty(p.tsconfig), p.tsconfigIncludes,
		p.categories, p.navTitle, p.navHide, p.subtitle, 0, p.noSearch, nullIfEmpty(p.keywords), nullIfEmpty(p.description),
		nullIfEmpty(p.abstract), p.author, p.authorEmail, p.siteroot, p.backendLayout, p.backendLayoutNext,
		nil,
	}
}

// fixedPageRows builds pages 1–25 exactly as docs/demo-site.md lists them.
func (g *generator) fixedPageRows() []*page {
	rec := g.recordText
	def := func(uid, pid, sorting int, title, slug string) *page {
		cr := g.now - int64(420-uid)*86400
		return &page{
			uid: uid, pid: pid, sorting: sorting, doktype: doktypeStandard, title: title, slug: slug,
			crdate: cr, tstamp: cr + int64(uid)*3600,
			permsUserID: 1, permsGroupID: 1, permsUser: permAll, permsGroup: permGroupDef,
			feGroup: "", author: "Nordlicht Pumps", authorEmail: "web@nordlicht-pumps.example",
		}
	}
	home := def(1, 0, 256, "Home", "/")
	home.siteroot = 1
	home.navTitle = "Start"
	home.description = "Nordlicht Pumps builds pumps for homes, farms and factories."
	home.tsconfig = rec("page_1.tsconfig")
	home.backendLayout = "pagets__default"
	home.backendLayoutNext = "pagets__default"
	home.keywords = "pumps, water, irrigation, Kiel"

	about := def(2, 1, 256, "About us", "/about-us")
	team := def(3, 2, 256, "Team", "/about-us/team")
	history := def(4, 2, 512, "History", "/about-us/history")
	history.abstract = "From a workshop in Kiel to a supplier in 24 countries."

	products := def(5, 1, 512, "Products", "/products")
	products.tsconfig = rec("page_5.tsconfig")
	products.tsconfigIncludes = "EXT:site_demo/Configuration/TsConfig/Page/Products.tsconfig"
	products.backendLayoutNext = "pagets__product"
	productA := def(6, 5, 256, "Product A", "/products/product-a")
	productA.subtitle = "The Aqua 200 domestic pump"
	productB := def(7, 5, 512, "Product B", "/products/product-b")
	productB.hidden = 1
	productC := def(8, 5, 768, "Product C", "/products/product-c")
	productC.starttime = start2030
	pricing := def(9, 5, 1024, "Internal pricing", "/products/internal-pricing")
	pricing.permsGroupID = 4
	pricing.noSearch = 1
	pricingDetails := def(10, 9, 256, "Pricing details", "/products/internal-pricing/pricing-details")
	pricingDetails.noSearch = 1
	discontinued := def(11, 5, 1280, "Discontinued", "/products/discontinued")
	discontinued.deleted = 1
	seasonal := def(12, 5, 1536, "Seasonal offer", "/products/seasonal-offer")
	seasonal.endtime = end2020

	news := def(13, 1, 768, "News", "/news")
	news.permsGroupID, news.permsGroup = 3, 1
	news2026 := def(14, 13, 256, "News 2026", "/news/news-2026")
	news2026.permsGroupID, news2026.permsGroup = 3, 1
	press := def(15, 13, 512, "Press", "/news/press")
	press.permsGroupID, press.permsGroup, press.permsEverybody = 4, 0, 1

	storage := def(16, 1, 1024, "Storage", "/storage")
	storage.doktype = doktypeFolder
	contact := def(17, 1, 1280, "Contact", "/contact")
	legal := def(18, 1, 1536, "Legal", "/legal")
	legal.navHide = 1
	login := def(19, 1, 1792, "Login", "/login")
	shortcut := def(20, 1, 2048, "Old shortcut", "/old-shortcut")
	shortcut.doktype = doktypeShortcut
	shortcut.shortcut = 2

	rows := []*page{home, about, team, history, products, productA, productB, productC, pricing,
		pricingDetails, discontinued, seasonal, news, news2026, press, storage, contact, legal, login, shortcut}

	// German translations (21–25) copy the fields TYPO3 keeps in sync
	// (l10n_mode exclude: doktype, permissions, TSconfig, layout, …).
	de := []struct {
		orig        *page
		title, slug string
	}{
		{home, "Startseite", "/"},
		{about, "Über uns", "/ueber-uns"},
		{products, "Produkte", "/produkte"},
		{productA, "Produkt A", "/produkte/produkt-a"},
		{news, "Neuigkeiten", "/neuigkeiten"},
	}
	for i, t := range de {
		tr := *t.orig
		tr.uid = 21 + i
		tr.lang = 1
		tr.l10nParent = t.orig.uid
		tr.title = t.title
		tr.navTitle = ""
		tr.slug = t.slug
		tr.subtitle = ""
		tr.description = ""
		tr.keywords = ""
		tr.abstract = ""
		tr.crdate = t.orig.crdate + 7*86400
		tr.tstamp = tr.crdate + 3600
		tr.l10nDiff = `{"title":"` + t.orig.title + `"}`
		rows = append(rows, &tr)
	}
	return rows
}

// fillerParents are the pages filler pages hang below, in turn.
const fillerParents = 3

func fillerParent(n int) int { return [fillerParents]int{3, 6, 14}[n%fillerParents] }

// fillerPage makes the n-th (0-based) filler page with uid uid.
func (g *generator) fillerPage(n, uid int, parent *page) *page {
	r, w := g.r, g.w
	p := &page{
		uid: uid, pid: parent.uid, doktype: doktypeStandard,
		sorting:     256 * (n/fillerParents + 1),
		permsUserID: parent.permsUserID, permsGroupID: parent.permsGroupID,
		permsUser: parent.permsUser, permsGroup: parent.permsGroup, permsEverybody: parent.permsEverybody,
		feGroup: "",
	}
	switch parent.uid {
	case 3:
		first, last := pick(r, w.firstNames), pick(r, w.lastNames)
		p.title = first + " " + last
		p.subtitle = pick(r, w.roles)
		p.author = p.title
		p.authorEmail = strings.ToLower(first) + "." + slugify(last) + "@nordlicht-pumps.example"
	case 6:
		p.title = pick(r, w.productLines) + " " + strconv.Itoa(100+r.IntN(90)*10) + ": " + pick(r, w.productTopics)
		p.keywords = "pump, " + strings.ToLower(pick(r, w.productTopics))
	default:
		p.title = pick(r, w.newsSubjects) + " " + pick(r, w.newsVerbs) + " " + pick(r, w.newsObjects)
		p.abstract = pick(r, w.sentences)
		p.author = "Press office"
		p.authorEmail = "press@nordlicht-pumps.example"
	}
	p.description = pick(r, w.sentences)
	if n%10 == 9 {
		p.hidden = 1
	}
	p.crdate = g.now - int64(r.IntN(365*86400))
	p.tstamp = p.crdate + int64(r.IntN(30*86400))
	if p.tstamp > g.now {
		p.tstamp = g.now
	}
	p.slug = g.slugs.unique(0, parent.slug+"/"+slugify(p.title))
	return p
}
