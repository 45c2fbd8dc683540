package richtext

import "testing"

func TestPlain(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"<p>Hello <b>world</b></p>\n<p>again</p>": "Hello world again",
		"a &amp; b &lt;c&gt; &nbsp;d":             "a & b <c> d",
		"no markup,   just   spaces":              "no markup, just spaces",
		"":                                        "",
	} {
		if got := Plain(in); got != want {
			t.Errorf("Plain(%q) = %q, want %q", in, got, want)
		}
	}
}
