package sitesearch

import (
	"fmt"
	"regexp"
	"strings"
)

// sourceIDPattern is the shape of every source id: a backend name and one
// to four parts.
var sourceIDPattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,30}(?::[A-Za-z0-9_.\-]{1,64}){1,4}$`)

// SourceID names one passage's source: the backend and the backend's own
// key, stable across calls as long as the source exists.
//
//	solr:<site>:<type>:<uid>:<language>
//	ke_search:<uid>
//	indexed_search:<phash>
//	index:<table>:<uid>
type SourceID struct {
	Backend string
	Parts   []string
}

func (id SourceID) String() string { return id.Backend + ":" + strings.Join(id.Parts, ":") }

// ParseSourceID reads a source id; the error is a sentence for the model.
func ParseSourceID(s string) (SourceID, error) {
	if !sourceIDPattern.MatchString(s) {
		return SourceID{}, fmt.Errorf("source_id %q is not a source id such as ke_search:12 (take it from a site_rag_query answer)", clipArg(s))
	}
	parts := strings.Split(s, ":")
	return SourceID{Backend: parts[0], Parts: parts[1:]}, nil
}

// clipArg keeps an echoed argument short.
func clipArg(s string) string {
	if r := []rune(s); len(r) > 80 {
		return string(r[:80]) + "…"
	}
	return s
}
