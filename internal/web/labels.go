package web

import (
	"embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/text/language"
)

// Labels are the texts a client shows, in English and German, by key:
//
//	status.<status>           a conversation status (idle … failed)
//	chat.approvalPending      the notice of a conversation waiting for approval,
//	chat.approvalPendingElsewhere  … for a reader who may not decide it,
//	chat.inputPending         … and of one waiting for an answer
//	error.<code>              every error code: the chat's (chat.Codes, its
//	                          hand-back codes included) and the API's own
//	notice.<code>             the chat's notice codes stored with messages
//	gate.<reason>             why the gate denied a tool
//
// Pause notices are rendered from a status or a code, never stored as a
// sentence: a stored sentence is frozen in the language of the moment it
// was written. The English text of error.<code> is also the message of an
// API error with that code.

//go:embed labels_en.json labels_de.json
var labelFS embed.FS

// labelLangs are the languages served, the first being the default.
var labelLangs = []string{"en", "de"}

var labelMatcher = language.NewMatcher([]language.Tag{language.English, language.German})

// labels holds the texts by language, then key. It is filled once at
// start-up and only read afterwards.
var labels = mustLoadLabels()

func mustLoadLabels() map[string]map[string]string {
	out := make(map[string]map[string]string, len(labelLangs))
	for _, lang := range labelLangs {
		b, err := labelFS.ReadFile("labels_" + lang + ".json")
		if err != nil {
			panic(err)
		}
		m := map[string]string{}
		if err := json.Unmarshal(b, &m); err != nil {
			panic(fmt.Sprintf("labels_%s.json: %v", lang, err))
		}
		out[lang] = m
	}
	return out
}

// noticeCodes are the chat codes stored with messages rather than
// answered as errors; they are labelled notice.<code>.
var noticeCodes = map[string]bool{"inputAnswer": true, "denyReason": true}

// codeLabelKey is the label key of a chat or API code.
func codeLabelKey(code string) string {
	if noticeCodes[code] {
		return "notice." + code
	}
	return "error." + code
}

// message is the English sentence of an error code.
func message(code string) string {
	if m, ok := labels["en"]["error."+code]; ok {
		return m
	}
	return labels["en"]["error.badRequest"]
}

// pickLang chooses the labels' language: ?lang= when it names one, else
// the best match of Accept-Language, else English. An unknown ?lang= is
// a client error, not a silent fallback.
func pickLang(r *http.Request) (string, error) {
	if q := strings.TrimSpace(r.URL.Query().Get("lang")); q != "" {
		q = strings.ToLower(q)
		for _, l := range labelLangs {
			if q == l {
				return l, nil
			}
		}
		return "", badRequest("The query parameter lang must be en or de.")
	}
	tags, _, err := language.ParseAcceptLanguage(r.Header.Get("Accept-Language"))
	if err != nil || len(tags) == 0 {
		return labelLangs[0], nil
	}
	_, idx, conf := labelMatcher.Match(tags...)
	if conf == language.No {
		return labelLangs[0], nil
	}
	return labelLangs[idx], nil
}

// labelsRoute answers GET /api/v1/labels.
func (s *Server) labelsRoute(w http.ResponseWriter, r *http.Request, _ *caller) {
	lang, err := pickLang(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Vary", "Accept-Language")
	writeJSON(w, http.StatusOK, map[string]any{"lang": lang, "labels": labels[lang]})
}
