package demo

import (
	"strconv"
	"strings"
)

type content struct {
	uid, pid, sorting  int
	lang, l18nParent   int
	wsid, oid          int
	colPos             int
	ctype              string
	header, subheader  string
	headerLayout       int
	bodytext           string
	hidden, deleted    int
	starttime, endtime int64
	crdate, tstamp     int64
	feGroup            string
	image, assets      int
	imageorient        int
	imagecols          int
	bulletsType        int
	flexform           string
	pages              string
	categories         int
	frameClass         string
	spaceBefore        string
	l18nDiff           string
	date               int64
}

func contentColumns() []string {
	return []string{
		"uid", "pid", "tstamp", "crdate", "deleted", "hidden", "starttime", "endtime", "fe_group", "sorting",
		"sys_language_uid", "l18n_parent", "l10n_source", "l18n_diffsource",
		"t3ver_oid", "t3ver_wsid", "t3ver_state", "t3ver_stage",
		"frame_class", "colPos", "CType", "categories", "space_before_class", "space_after_class", "date",
		"header", "header_layout", "header_position", "header_link", "subheader", "bodytext",
		"image", "assets", "imagewidth", "imageorient", "imagecols", "image_zoom",
		"pages", "recursive", "list_type", "pi_flexform", "bullets_type", "sectionIndex", "linkToTop",
	}
}

func (c *content) values() []any {
	return []any{
		c.uid, c.pid, c.tstamp, c.crdate, c.deleted, c.hidden, c.starttime, c.endtime, c.feGroup, c.sorting,
		c.lang, c.l18nParent, c.l18nParent, nullIfEmpty(c.l18nDiff),
		c.oid, c.wsid, 0, 0,
		c.frameClass, c.colPos, c.ctype, c.categories, c.spaceBefore, "", c.date,
		c.header, c.headerLayout, "", "", c.subheader, nullIfEmpty(c.bodytext),
		c.image, c.assets, 0, c.imageorient, c.imagecols, 0,
		nullIfEmpty(c.pages), 0, "", nullIfEmpty(c.flexform), c.bulletsType, 1, 0,
	}
}

// feloginFlexForm is a pi_flexform value as TYPO3's FlexFormTools writes it
// for the felogin_login plugin (sheets of EXT:felogin Login.xml).
func feloginFlexForm() string {
	field := func(name, value string) string {
		return "                <field index=\"" + name + "\">\n                    <value index=\"vDEF\">" + value + "</value>\n                </field>\n"
	}
	sheet := func(name string, fields ...string) string {
		return "        <sheet index=\"" + name + "\">\n            <language index=\"lDEF\">\n" + strings.Join(fields, "") + "            </language>\n        </sheet>\n"
	}
	return `<?xml version="1.0" encoding="utf-8" standalone="yes" ?>
<T3FlexForms>
    <data>
` + sheet("sDEF",
		field("settings.showForgotPassword", "1"),
		field("settings.showPermaLogin", "0"),
		field("settings.showLogoutFormAfterLogin", "1"),
		field("settings.pages", "16"),
		field("settings.recursive", "0"),
	) + sheet("s_redirect",
		field("settings.redirectMode", "login,logout"),
		field("settings.redirectFirstMethod", "0"),
		field("settings.redirectPageLogin", "17"),
		field("settings.redirectPageLoginError", ""),
		field("settings.redirectPageLogout", "1"),
		field("settings.redirectDisable", "0"),
	) + sheet("s_messages",
		field("settings.welcome_header", "Customer area"),
		field("settings.welcome_message", "Log in to see prices, orders and service reports."),
		field("settings.success_header", ""),
		field("settings.success_message", ""),
		field("settings.error_header", "Login failed"),
		field("settings.error_message", "Please check your username and password."),
		field("settings.status_header", ""),
		field("settings.status_message", ""),
		field("settings.logout_header", ""),
		field("settings.logout_message", ""),
		field("settings.forgot_header", ""),
		field("settings.forgot_reset_message", ""),
	) + `    </data>
</T3FlexForms>`
}

// fixedContentRows builds tt_content 1–6 as docs/demo-site.md lists them.
func (g *generator) fixedContentRows() []*content {
	def := func(uid, pid, sorting int, ctype, header string) *content {
		cr := g.now - int64(300-uid)*86400
		return &content{uid: uid, pid: pid, sorting: sorting, ctype: ctype, header: header,
			crdate: cr, tstamp: cr + 7200, feGroup: "", frameClass: "default"}
	}
	c1 := def(1, 6, 256, "text", "Product A at a glance")
	c1.bodytext = "<p>The <strong>Aqua 200</strong> moves up to 4 m³ of water per hour and fits under any sink.</p>\n" +
		"<p>Its control unit adapts the speed to the demand, so it runs quietly and saves energy.</p>"
	c2 := def(2, 6, 512, "text", "Launch offer")
	c2.hidden = 1
	c2.bodytext = "<p>Order before the end of the month and get the mounting kit for free.</p>"
	c3 := def(3, 6, 768, "text", "Old price list")
	c3.deleted = 1
	c3.bodytext = "<p>Prices valid until 2024. Please ask our sales team for current prices.</p>"
	c4 := def(4, 6, 256, "text", "Product A at a glance (draft)")
	c4.wsid, c4.oid = 1, 1
	c4.bodytext = "<p>The <strong>Aqua 200</strong> moves up to 4.5 m³ of water per hour and fits under any sink.</p>\n" +
		"<p>New: the control unit now reports its energy use to the Nordlicht app.</p>"
	c5 := def(5, 6, 1024, "textmedia", "Coming soon: Product A2")
	c5.starttime = start2030
	c5.bodytext = "<p>The successor of the Aqua 200 with a brushless motor.</p>"
	c6 := def(6, 19, 256, "felogin_login", "Customer login")
	c6.flexform = feloginFlexForm()
	c6.pages = "16"
	return []*content{c1, c2, c3, c4, c5, c6}
}

// fillerContent makes a default-language content element on page pid.
func (g *generator) fillerContent(uid, pid, sorting int) *content {
	r, w := g.r, g.w
	c := &content{uid: uid, pid: pid, sorting: sorting, feGroup: "", frameClass: "default"}
	c.crdate = g.now - int64(r.IntN(365*86400))
	c.tstamp = c.crdate + int64(r.IntN(20*86400))
	if c.tstamp > g.now {
		c.tstamp = g.now
	}
	c.header = pick(r, w.contentHeaders)
	switch x := r.IntN(100); {
	case x < 35:
		c.ctype = "text"
		c.bodytext = paragraphs(r, 1+r.IntN(3), w.sentences)
	case x < 60:
		c.ctype = "textmedia"
		c.bodytext = paragraphs(r, 1+r.IntN(2), w.sentences)
		c.assets = 1
		c.imageorient = pick(r, []int{0, 17, 18, 25, 26})
		c.imagecols = 1
	case x < 70:
		c.ctype = "header"
		c.subheader = pick(r, w.sentences)
		c.headerLayout = 1 + r.IntN(3)
	case x < 82:
		c.ctype = "bullets"
		n := 3 + r.IntN(4)
		items := make([]string, n)
		for i := range items {
			items[i] = pick(r, w.bulletItems)
		}
		// Bullet lists store one item per line, not HTML.
		c.bodytext = strings.Join(items, "\n")
		c.bulletsType = r.IntN(2)
	case x < 88:
		c.ctype = "html"
		c.header = "Embedded widget"
		c.headerLayout = 100 // hidden header
		c.bodytext = `<div class="nl-widget" data-widget="dealer-map" data-zoom="` + strconv.Itoa(6+r.IntN(6)) + `">` +
			"\n  <noscript>Please enable JavaScript to see the dealer map.</noscript>\n</div>"
	default:
		c.ctype = "image"
		c.image = 1 + r.IntN(3)
		c.imagecols = c.image
	}
	if r.IntN(5) == 0 {
		c.colPos = 1
	}
	if r.IntN(8) == 0 {
		c.spaceBefore = "medium"
	}
	switch x := r.IntN(100); {
	case x < 4:
		c.hidden = 1
	case x < 6:
		c.deleted = 1
	case x < 8:
		c.feGroup = "1"
	case x < 9:
		c.feGroup = "-2"
	}
	return c
}

// translate makes the German translation of c with uid uid.
func (g *generator) translate(c *content, uid int) *content {
	r, w := g.r, g.w
	t := *c
	t.uid = uid
	t.lang = 1
	t.l18nParent = c.uid
	t.crdate = c.crdate + 86400
	if t.crdate > g.now {
		t.crdate = g.now
	}
	t.tstamp = t.crdate
	t.categories = 0
	t.image, t.assets = 0, 0
	t.l18nDiff = `{"header":"` + c.header + `"}`
	if c.ctype != "html" {
		t.header = pick(r, w.germanHeaders)
	}
	switch c.ctype {
	case "text", "textmedia":
		t.bodytext = paragraphs(r, 1+r.IntN(2), w.germanSentences)
	case "header":
		t.subheader = pick(r, w.germanSentences)
	}
	return &t
}
