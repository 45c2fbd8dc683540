package gate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/t3agent/t3agent/internal/tool"
)

// Limits on what a tool result may carry out of Invoke.
const (
	// MaxContentBytes caps Result.Content; longer content is cut on a
	// rune boundary and ends with the truncation marker.
	MaxContentBytes = 50000
	// MaxArtifactBytes caps the JSON encoding of all artifacts of one result.
	MaxArtifactBytes = 50000
	// MaxArtifacts, MaxArtifactRows and MaxArtifactColumns keep artifacts
	// to what a person can read in the UI.
	MaxArtifacts       = 16
	MaxArtifactRows    = 1000
	MaxArtifactColumns = 64
)

// truncationMarker ends content cut at MaxContentBytes (the number is
// spelt out so it can be a constant; a test keeps the two in step).
const truncationMarker = "…[tool result truncated at 50000 bytes]"

// bound rebuilds a result from the fields it knows, so nothing a tool
// smuggles in another field survives, and bounds it: UTF-8 coerced
// (invalid bytes become U+FFFD), content capped, artifacts checked and
// replaced by one text artifact when they are too much. Error results
// carry no artifacts.
//
// TestRebuildKnowsEveryField fails when tool.Result or tool.Artifact
// gains a field, so the rebuild is updated with it rather than silently
// dropping it.
func bound(r tool.Result) tool.Result {
	out := tool.Result{Content: boundContent(r.Content), IsError: r.IsError, Question: boundQuestion(r.Question)}
	if r.IsError || len(r.Artifacts) == 0 {
		return out
	}
	arts, problem := rebuildArtifacts(r.Artifacts)
	if problem != "" {
		arts = []tool.Artifact{{
			Kind:  tool.ArtifactText,
			Title: "Artifacts omitted",
			Text:  "Artifacts omitted: " + problem + ".",
		}}
	}
	out.Artifacts = arts
	return out
}

// Bounds of a question a tool asks a person.
const (
	maxQuestionMessage = 4000
	maxQuestionJSON    = 64 << 10
	maxQuestionURL     = 2048
)

// boundQuestion rebuilds a question, or drops it (the call is then an
// error result) when a part is out of bounds: a schema or state that is
// not a JSON object, or a URL that is not http(s).
func boundQuestion(q *tool.Question) *tool.Question {
	if q == nil {
		return nil
	}
	object := func(b json.RawMessage) bool {
		return len(b) <= maxQuestionJSON && json.Valid(b) && bytes.HasPrefix(bytes.TrimSpace(b), []byte("{"))
	}
	if !object(q.Schema) || (len(q.State) > 0 && !object(q.State)) || len(q.URL) > maxQuestionURL {
		return nil
	}
	if q.URL != "" {
		u, err := url.Parse(q.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil
		}
	}
	return &tool.Question{Message: cutRunes(strings.ToValidUTF8(q.Message, "\uFFFD"), maxQuestionMessage),
		Schema: bytes.Clone(q.Schema), URL: q.URL, State: bytes.Clone(q.State)}
}

func boundContent(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= MaxContentBytes {
		return s
	}
	return cutRunes(s, MaxContentBytes) + truncationMarker
}

// rebuildArtifacts copies the known fields of each artifact, coercing
// text to UTF-8, and says what is wrong when they break a limit.
func rebuildArtifacts(in []tool.Artifact) ([]tool.Artifact, string) {
	if len(in) > MaxArtifacts {
		return nil, fmt.Sprintf("the tool returned %d artifacts, more than the %d allowed", len(in), MaxArtifacts)
	}
	out := make([]tool.Artifact, len(in))
	for i, a := range in {
		b := tool.Artifact{Kind: a.Kind, Title: utf8Text(a.Title)}
		switch a.Kind {
		case tool.ArtifactText:
			b.Text = utf8Text(a.Text)
		case tool.ArtifactTable:
			if len(a.Columns) > MaxArtifactColumns {
				return nil, fmt.Sprintf("table %d has %d columns, more than the %d allowed", i+1, len(a.Columns), MaxArtifactColumns)
			}
			if len(a.Rows) > MaxArtifactRows {
				return nil, fmt.Sprintf("table %d has %d rows, more than the %d allowed", i+1, len(a.Rows), MaxArtifactRows)
			}
			b.Columns = utf8Texts(a.Columns)
			b.Rows = make([][]string, len(a.Rows))
			for j, row := range a.Rows {
				if len(row) != len(a.Columns) {
					return nil, fmt.Sprintf("row %d of table %d has %d cells for %d columns", j+1, i+1, len(row), len(a.Columns))
				}
				b.Rows[j] = utf8Texts(row)
			}
		default:
			return nil, fmt.Sprintf("artifact %d has the unknown kind %q", i+1, cutRunes(utf8Text(a.Kind), 64))
		}
		out[i] = b
	}
	enc, err := json.Marshal(out)
	if err != nil {
		return nil, "they cannot be encoded as JSON"
	}
	if len(enc) > MaxArtifactBytes {
		return nil, fmt.Sprintf("they are %d bytes as JSON, more than the %d allowed", len(enc), MaxArtifactBytes)
	}
	return out, ""
}

func utf8Text(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

func utf8Texts(in []string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = utf8Text(s)
	}
	return out
}
