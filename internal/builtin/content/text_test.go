package content

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/t3agent/t3agent/internal/readpolicy"
)

func TestClipMatchesCutOfCollapse(t *testing.T) {
	t.Parallel()
	inputs := []string{"", " ", "a", "  a  b  ", "äöü \n\t ß", strings.Repeat("word \n ", 100), strings.Repeat("x", 299),
		strings.Repeat("x", 300), strings.Repeat("x", 301), strings.Repeat("x", 299) + " y", strings.Repeat("é", 400)}
	for _, s := range inputs {
		for _, n := range []int{1, 2, 5, 120, 300} {
			if got, want := clip(s, n), cut(readpolicy.Collapse(s), n); got != want {
				t.Errorf("clip(%.20q, %d) = %q, want %q", s, n, got, want)
			}
		}
	}
}

func FuzzClip(f *testing.F) {
	f.Add("a  b\tc", 3)
	f.Add(strings.Repeat("ab ", 50), 120)
	f.Fuzz(func(t *testing.T, s string, n int) {
		// Invalid UTF-8 is the gate's to coerce; clip yields U+FFFD for it
		// where collapse keeps the bytes.
		if n < 1 || n > 1000 || !utf8.ValidString(s) {
			return
		}
		if got, want := clip(s, n), cut(readpolicy.Collapse(s), n); got != want {
			t.Errorf("clip(%q, %d) = %q, want %q", s, n, got, want)
		}
	})
}

func TestExcerpt(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 200) + "NEEDLE" + strings.Repeat("b", 200)
	for _, c := range []struct {
		text, q string
		n       int
		want    string
	}{
		{"short text", "text", 120, "short text"},
		{long, "needle", 20, "…aaaaaNEEDLEbbbbbbb…"},
		{long, "absent", 10, "aaaaaaaaa…"},
		{"NEEDLE" + strings.Repeat("b", 50), "needle", 10, "NEEDLEbbb…"},
		{strings.Repeat("a", 50) + "NEEDLE", "needle", 10, "…aaaNEEDLE"},
	} {
		got := excerpt(c.text, c.q, c.n)
		if got != c.want || len([]rune(got)) > c.n {
			t.Errorf("excerpt(…, %q, %d) = %q, want %q", c.q, c.n, got, c.want)
		}
	}
}

func TestStripTags(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"<p>Hello <b>world</b></p>\n<p>again</p>": "Hello world again",
		"a &amp; b &lt;c&gt; &nbsp;d":             "a & b <c> d",
		"no markup,   just   spaces":              "no markup, just spaces",
	} {
		if got := readpolicy.StripTags(in); got != want {
			t.Errorf("readpolicy.StripTags(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFlexText(t *testing.T) {
	t.Parallel()
	xml := `<?xml version="1.0" encoding="utf-8" standalone="yes" ?>
<T3FlexForms><data><sheet index="sDEF"><language index="lDEF">
<field index="settings.title"><value index="vDEF">Hello &amp; <b>welcome</b></value></field>
<field index="settings.apiKey"><value index="vDEF">k1</value></field>
<field index="settings.token"><value index="vDEF">k2</value></field>
<field index="settings.client_secret"><value index="vDEF">k3</value></field>
<field index="settings.items"><el index="el"><field index="1"><el><field index="password"><value index="vDEF">k4</value></field>
<field index="label"><value index="vDEF">Item</value></field></el></field></el></field>
<field index="settings.empty"><value index="vDEF"></value></field>
</language></sheet></data></T3FlexForms>`
	got := readpolicy.FlexText(xml)
	if got != "settings.title: Hello & welcome; label: Item" {
		t.Errorf("flexText = %q", got)
	}
	for _, secret := range []string{"k1", "k2", "k3", "k4"} {
		if strings.Contains(got, secret) {
			t.Errorf("flexText shows %s", secret)
		}
	}
	if got := readpolicy.FlexText("<T3FlexForms><data><sheet>"); got != "[FlexForm value not readable]" {
		t.Errorf("broken XML: %q", got)
	}
	if readpolicy.FlexText("  ") != "" {
		t.Error("an empty value should render empty")
	}
}
