package console

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/language"

	"github.com/t3agent/t3agent/internal/telemetry"
)

// The console's own texts, by language then key: the page texts. Codes
// (status.…, error.…, notice.…, gate.…) come from Auth.Label, the texts
// the API serves, so a code reads the same everywhere.
//
//go:embed labels_en.json labels_de.json
var labelFS embed.FS

// langs are the languages served, the first being the default.
var langs = []string{"en", "de"}

var langMatcher = language.NewMatcher([]language.Tag{language.English, language.German})

// texts are the console's labels; filled once, then only read.
var texts = mustLoadTexts()

func mustLoadTexts() map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, l := range langs {
		b, err := labelFS.ReadFile("labels_" + l + ".json")
		if err != nil {
			panic(err)
		}
		m := map[string]string{}
		if err := json.Unmarshal(b, &m); err != nil {
			panic(fmt.Sprintf("console labels_%s.json: %v", l, err))
		}
		out[l] = m
	}
	return out
}

// LangCookie keeps the language a person switched to.
const LangCookie = "t3agent_lang"

// pickLang: ?lang= switches (and is kept in a cookie), else the cookie,
// else the backend user's TYPO3 language (be_users.lang, when it is one
// the console speaks; "default" is TYPO3's and leaves the choice to the
// browser), else Accept-Language, else English.
func (c *Console) pickLang(w http.ResponseWriter, r *http.Request, sess *Session) string {
	if l := strings.ToLower(r.URL.Query().Get("lang")); known(l) {
		http.SetCookie(w, &http.Cookie{Name: LangCookie, Value: l, Path: "/", MaxAge: 365 * 24 * 3600,
			HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
		return l
	}
	if ck, err := r.Cookie(LangCookie); err == nil && known(ck.Value) {
		return ck.Value
	}
	if sess != nil {
		if l := strings.ToLower(sess.User.Lang); l != "default" && known(l) {
			return l
		}
	}
	tags, _, err := language.ParseAcceptLanguage(r.Header.Get("Accept-Language"))
	if err != nil || len(tags) == 0 {
		return langs[0]
	}
	_, idx, conf := langMatcher.Match(tags...)
	if conf == language.No {
		return langs[0]
	}
	return langs[idx]
}

func known(l string) bool {
	for _, k := range langs {
		if l == k {
			return true
		}
	}
	return false
}

// t is the label key in the request's language: the console's own, else
// the code labels, else English, else the key itself (a test fails on
// that).
func (q *req) t(key string) string {
	if s, ok := texts[q.lang][key]; ok {
		return s
	}
	if q.auth != nil {
		if s, ok := q.auth.Label(q.lang, key); ok {
			return s
		}
	}
	if s, ok := texts["en"][key]; ok {
		return s
	}
	return key
}

// pageData is what every template gets; Data is the page's own.
type pageData struct {
	Title   string
	Message string
	Data    any

	q *req
	c *Console
}

// L is a label in the page's language.
func (d *pageData) L(key string) string { return d.q.t(key) }

// Lf is a label with fmt arguments.
func (d *pageData) Lf(key string, args ...any) string { return fmt.Sprintf(d.q.t(key), args...) }

// Lang is the page's language.
func (d *pageData) Lang() string { return d.q.lang }

// OtherLang is the language the switch offers.
func (d *pageData) OtherLang() string {
	if d.q.lang == "de" {
		return "en"
	}
	return "de"
}

// User is the logged-in person, nil on the login page.
func (d *pageData) User() any {
	if d.q.sess == nil {
		return nil
	}
	return d.q.sess.User
}

// Admin reports whether the person sees the admin pages.
func (d *pageData) Admin() bool { return d.q.isAdmin() }

// CSRF is the session's token for forms.
func (d *pageData) CSRF() string {
	if d.q.sess == nil {
		return ""
	}
	return d.q.sess.CSRF
}

// Path is the request's path, for the navigation's current page.
func (d *pageData) Path() string { return d.q.r.URL.Path }

// Site is the site's name; Version the product's.
func (d *pageData) Site() string    { return d.c.p.SiteName }
func (d *pageData) Version() string { return d.c.p.Version }

var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05")
	},
	"ms":     took,
	"amount": func(m any, v int64) string { return budgetAmount(telemetry.Metric(fmt.Sprint(m)), v) },
	"add":    func(a, b int) int { return a + b },
	"add64":  func(a, b int64) int64 { return a + b },
	"short":  shortID,
	"active": func(path, prefix string) bool {
		return path == prefix || strings.HasPrefix(path, prefix+"/")
	},
}

// took is a duration as the pages show it; "" for none.
func took(d time.Duration) string {
	switch {
	case d <= 0:
		return ""
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
	default:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
}

// mustParse parses each page with the layout and the partials.
func mustParse() map[string]*template.Template {
	base := template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/_*.html"))
	entries, err := templateFS.ReadDir("templates")
	if err != nil {
		panic(err)
	}
	out := map[string]*template.Template{}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, "_") {
			continue
		}
		t := template.Must(template.Must(base.Clone()).ParseFS(templateFS, "templates/"+name))
		out[name] = t
	}
	return out
}

// render writes a page, or its "part" template when htmx asked for a
// fragment and the page has one.
func (c *Console) render(q *req, status int, name string, d *pageData) {
	d.q, d.c = q, c
	t, ok := c.pages[name]
	if !ok {
		c.p.Logger.Error("console: no such template", "name", name)
		http.Error(q.w, "internal error", http.StatusInternalServerError)
		return
	}
	entry := "page"
	if q.htmx && q.r.Header.Get("HX-Target") != "" && t.Lookup("part") != nil {
		entry = "part"
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, entry, d); err != nil {
		c.p.Logger.Error("console: rendering", "template", name, "err", err)
		http.Error(q.w, "internal error", http.StatusInternalServerError)
		return
	}
	q.w.Header().Set("Content-Type", "text/html; charset=utf-8")
	q.w.Header().Set("Vary", "Accept-Language, Cookie, HX-Request")
	q.w.WriteHeader(status)
	_, _ = q.w.Write(buf.Bytes())
}
