package guardrail_test

import (
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/guardrail"
)

// benchText is a tool result of about 50 KB (the cap of one result): JSON
// rows of page content with one credential in it.
func benchText() string {
	row := `{"uid":4711,"pid":12,"header":"Pumpen für den Norden","bodytext":"<p>Unsere Kreiselpumpen fördern bis zu 120 m³/h. Kontakt über das Formular.</p>"},`
	return "[" + strings.Repeat(row, 50_000/len(row)) + `{"note":"` + openAIKey + `"}]`
}

func BenchmarkRedactSecrets50KB(b *testing.B) {
	text := benchText()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		guardrail.RedactSecrets(text)
	}
}

func BenchmarkRedactPII50KB(b *testing.B) {
	text := benchText()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		guardrail.RedactPII(text)
	}
}

func BenchmarkPipelineShortInput(b *testing.B) {
	p, err := guardrail.NewPipeline(guardrail.PipelineParams{Enabled: []string{guardrail.PIIRedaction}})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		p.ScreenInput(b.Context(), "Which pages mention the new pump series, and who edited them last week?")
	}
}

// BenchmarkRedactSecretsWorstCase50KB: every prefilter passes, so every
// pattern runs over the whole text.
func BenchmarkRedactSecretsWorstCase50KB(b *testing.B) {
	row := `<a href="/page?id=12&amp;L=0" title="token: 4 password reset">Authorization bearer of news, secret pass</a> `
	text := strings.Repeat(row, 50_000/len(row))
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		guardrail.RedactSecrets(text)
	}
}

// BenchmarkRedactSecretsAssignments50KB: TypoScript constants as a search
// or read tool shows them, line breaks collapsed, full of names the
// assignment scan must look at.
func BenchmarkRedactSecretsAssignments50KB(b *testing.B) {
	row := `plugin.tx_felogin_login.settings { showForgotPassword = 0 passwordMinLength = 8 } page.10.templateName.cObject ` +
		`{ split { token = pagets__ cObjNum = 1 } } site.analytics { siteId = 42 apiKey = nlp-demo-7f3c1e9a04b2d86e } `
	text := strings.Repeat(row, 50_000/len(row))
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		guardrail.RedactSecrets(text)
	}
}
