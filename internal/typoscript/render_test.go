package typoscript_test

import (
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/typoscript"
)

func TestRender(t *testing.T) {
	t.Parallel()
	ast := build(t, "page = PAGE\npage.10 = TEXT\npage.10.value (\nline1\nline2\n)\nplugin.tx_x.settings {\n"+
		" apiKey = abc\n smtp_password = p\n url = https://user:s3cret@example.org/x\n}\nlib.ref =< lib.other\nconfig.x = 1",
		typoscript.ASTParams{})
	top := typoscript.Render(ast.Root, typoscript.RenderParams{})
	if top.Text != "page = PAGE (+1 children)\nplugin (+1 children)\nlib (+1 children)\nconfig (+1 children)\n" {
		t.Errorf("top level:\n%s", top.Text)
	}
	sub := typoscript.Render(ast.Root, typoscript.RenderParams{Path: "page", Redact: true})
	if sub.Text != "page = PAGE\n  10 = TEXT\n    value = line1\\nline2\n" || !sub.Found {
		t.Errorf("subtree:\n%s", sub.Text)
	}
	red := typoscript.Render(ast.Root, typoscript.RenderParams{Path: "plugin.tx_x", Redact: true})
	for _, leak := range []string{"abc", "= p\n", "s3cret"} {
		if strings.Contains(red.Text, leak) {
			t.Errorf("redacted output leaks %q:\n%s", leak, red.Text)
		}
	}
	if !strings.Contains(red.Text, "url = https://user:***@example.org/x") || !strings.Contains(red.Text, "apiKey = [redacted]") {
		t.Errorf("redaction:\n%s", red.Text)
	}
	if r := typoscript.Render(ast.Root, typoscript.RenderParams{Path: "lib"}); !strings.Contains(r.Text, "ref =< lib.other") {
		t.Errorf("reference:\n%s", r.Text)
	}
	if r := typoscript.Render(ast.Root, typoscript.RenderParams{Path: "nope"}); r.Found {
		t.Error("missing path found")
	}
	capped := typoscript.Render(ast.Root, typoscript.RenderParams{Path: "plugin", MaxLines: 2})
	if capped.Omitted != 4 || !strings.HasSuffix(capped.Text, "… 4 more lines\n") || strings.Count(capped.Text, "\n") != 3 {
		t.Errorf("cap:\n%s", capped.Text)
	}
	flatOut := typoscript.RenderFlat(ast.Root.Flatten(), typoscript.RenderParams{Path: "plugin.tx_x.settings", Redact: true})
	if strings.Count(flatOut.Text, "\n") != 3 || strings.Contains(flatOut.Text, "abc") {
		t.Errorf("flat:\n%s", flatOut.Text)
	}
}

// TestRedactValue: a credential is a credential name with a credential
// value (package credential); flags and split tokens whose names hold a
// credential word stay readable, in Render, RenderFlat and RedactValue.
func TestRedactValue(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ key, value, want string }{
		{"apiKey", "nlp-demo-7f3c1e9a04b2d86e", "[redacted]"},
		{"smtp_password", "swordfish", "[redacted]"},
		{"token", "a9F3kLm2Qx7", "[redacted]"},
		{"showForgotPassword", "0", "0"},
		{"exposeNonexistentUserInForgotPasswordDialog", "0", "0"},
		{"token", "pagets__", "pagets__"},
		{"passwordMinLength", "8", "8"},
		{"stagingUrl", "https://preview:Xq7-demo-preview@staging.example/", "https://preview:***@staging.example/"},
	} {
		if got := typoscript.RedactValue(c.key, c.value); got != c.want {
			t.Errorf("RedactValue(%q, %q) = %q, want %q", c.key, c.value, got, c.want)
		}
	}
	ast := build(t, "lib.x {\n showForgotPassword = 0\n split.token = pagets__\n credentials {\n user = admin\n enabled = 1\n }\n}",
		typoscript.ASTParams{})
	want := "lib.x\n  showForgotPassword = 0\n  split\n    token = pagets__\n  credentials\n    user = [redacted]\n    enabled = 1\n"
	if got := typoscript.Render(ast.Root, typoscript.RenderParams{Path: "lib.x", Redact: true}).Text; got != want {
		t.Errorf("Render:\n%s\nwant:\n%s", got, want)
	}
	flat := typoscript.RenderFlat(ast.Root.Flatten(), typoscript.RenderParams{Path: "lib.x", Redact: true}).Text
	if want := "lib.x.showForgotPassword = 0\nlib.x.split.token = pagets__\nlib.x.credentials.user = [redacted]\nlib.x.credentials.enabled = 1\n"; flat != want {
		t.Errorf("RenderFlat:\n%s\nwant:\n%s", flat, want)
	}
}
