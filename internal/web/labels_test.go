package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/chat"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/store"
)

// apiCodes are the API's own error codes: every code classify or a
// handler answers. The test below fails when one lacks a label.
var apiCodes = []string{
	"unauthorized", "invalidCredentials", "passwordHashUnusable", "invalidToken", "csrfFailed",
	"insufficientScope", "sessionRequired", "rateLimited", "badRequest", "bodyTooLarge",
	"unsupportedMediaType", "notFound", "methodNotAllowed", "runNotFound", "runAccessDenied",
	"runFinished", "decisionRefused", "toolNotFound", "configurationNotFound", "chatUnavailable", "internal",
	"adminRequired", "unavailable", "tokenNotFound", "tokenNameTaken", "grantNotFound", "queueUnavailable",
	"toolGroupNotFound", "mcpServerNotFound", "mcpServerExists", "mcpFailed", "invalidConfiguration", "previewStale",
}

// germanMarks are words and letters only German text has; every German
// label must show one, so an English text copied over fails.
var germanMarks = regexp.MustCompile(`[äöüÄÖÜß]|(?i:\b(sie|ihre?|der|die|das|den|dem|des|nicht|ist|wird|keine?|zu|und|oder|lauf|werkzeug|anfrage|frage|antwort|unterhaltung|bereit|freigabe|assistent)\b)`)

func TestLabelsCoverEveryCode(t *testing.T) {
	t.Parallel()
	keys := []string{"chat.approvalPending", "chat.approvalPendingElsewhere", "chat.inputPending"}
	for _, st := range []store.ConversationStatus{store.ConversationIdle, store.ConversationProcessing, store.ConversationLocked,
		store.ConversationAwaitingApproval, store.ConversationAwaitingInput, store.ConversationFailed} {
		keys = append(keys, "status."+string(st))
	}
	for _, c := range chat.Codes() {
		keys = append(keys, codeLabelKey(string(c)))
	}
	for _, c := range apiCodes {
		keys = append(keys, "error."+c)
	}
	for _, m := range refusalCodes {
		keys = append(keys, "error."+m.code)
	}
	for _, r := range []gate.Reason{gate.ReasonNotRegistered, gate.ReasonToolDisabled, gate.ReasonRequiresAdmin,
		gate.ReasonConfigurationGroup, gate.ReasonTrustZone, gate.ReasonNotOffered} {
		keys = append(keys, "gate."+string(r))
	}
	for _, k := range keys {
		en, de := labels["en"][k], labels["de"][k]
		switch {
		case strings.TrimSpace(en) == "":
			t.Errorf("%s has no English label", k)
		case strings.TrimSpace(de) == "":
			t.Errorf("%s has no German label", k)
		case en == de:
			t.Errorf("%s: the German label is the English one: %q", k, de)
		case !germanMarks.MatchString(de):
			t.Errorf("%s: %q does not read as German", k, de)
		}
	}
	// Both languages hold the same keys, and nothing unused.
	for lang, m := range labels {
		for k := range m {
			if !slices.Contains(keys, k) {
				t.Errorf("labels_%s.json: %s is no known key", lang, k)
			}
		}
	}
	if len(labels["en"]) != len(labels["de"]) {
		t.Errorf("en has %d labels, de %d", len(labels["en"]), len(labels["de"]))
	}
}

// TestEveryRefusalIsMapped: each refusal of the runtime has its own code
// and status; an unknown one falls back to 409 decisionRefused.
func TestEveryRefusalIsMapped(t *testing.T) {
	t.Parallel()
	want := map[agent.RefusalCode]int{
		agent.RefusedNotWaiting: 409, agent.RefusedAccessDenied: 403, agent.RefusedConfigurationGone: 409,
		agent.RefusedOwnerCannotAct: 409, agent.RefusedSelfApproval: 403, agent.RefusedCorruptState: 409,
		agent.RefusedStateUnavailable: 409, agent.RefusedInvalidInput: 422, agent.RefusedAlreadyResuming: 409,
		agent.RefusedStaleTurn: 409, agent.RefusedApproverNotPermitted: 403, agent.RefusedNotAuditable: 409,
	}
	for code, status := range want {
		got, body := classify(&agent.RefusedError{Code: code, Detail: "secret detail"})
		if got != status || body.Code == "decisionRefused" || strings.Contains(body.Message, "secret") {
			t.Errorf("%s → %d %+v, want %d with its own code", code, got, body, status)
		}
	}
	if got, body := classify(&agent.RefusedError{Code: "brand_new"}); got != 409 || body.Code != "decisionRefused" {
		t.Errorf("unknown refusal → %d %+v", got, body)
	}
	if got, body := classify(&chat.Error{Code: chat.CodeEditStale, Status: 409, Detail: "client saw 3"}); got != 409 ||
		body.Code != "editStale" || body.Message != labels["en"]["error.editStale"] {
		t.Errorf("chat refusal → %d %+v", got, body)
	}
	if got, body := classify(errorString("dial tcp 10.1.2.3: password=hunter2")); got != 500 || body.Code != "internal" || strings.Contains(body.Message, "hunter2") {
		t.Errorf("internal error → %d %+v", got, body)
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }

func TestLabelsLanguage(t *testing.T) {
	t.Parallel()
	h := New(Params{API: &API{}}).Handler()
	cases := []struct {
		query, accept string
		code          int
		lang          string
	}{
		{"", "", 200, "en"},
		{"?lang=de", "", 200, "de"},
		{"?lang=DE", "en", 200, "de"},
		{"", "de-AT,de;q=0.9,en;q=0.5", 200, "de"},
		{"", "fr-FR,fr;q=0.9", 200, "en"},
		{"", "fr, de;q=0.4", 200, "de"},
		{"", "en-GB", 200, "en"},
		{"?lang=fr", "de", 400, ""},
	}
	for _, c := range cases {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/labels"+c.query, nil)
		if c.accept != "" {
			req.Header.Set("Accept-Language", c.accept)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.code {
			t.Errorf("%q/%q = %d, want %d: %s", c.query, c.accept, rec.Code, c.code, rec.Body)
			continue
		}
		if c.code != 200 {
			if !strings.Contains(rec.Body.String(), "lang must be en or de") {
				t.Errorf("%q: %s", c.query, rec.Body)
			}
			continue
		}
		var out struct {
			Lang   string            `json:"lang"`
			Labels map[string]string `json:"labels"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		if out.Lang != c.lang || out.Labels["status.awaiting_approval"] != labels[c.lang]["status.awaiting_approval"] {
			t.Errorf("%q/%q → %s %q", c.query, c.accept, out.Lang, out.Labels["status.awaiting_approval"])
		}
	}
}
