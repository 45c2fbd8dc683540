package cli

import (
	"encoding/json"
	"io"
)

// writeJSON prints v indented. Every --json output uses the API's
// camelCase field names: the run shapes come from package web, so both
// print the same objects; the CLI's own structs carry json tags.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// views maps each element of list to its JSON view.
func views[T any](list []T, view func(T) any) []any {
	out := make([]any, len(list))
	for i, v := range list {
		out[i] = view(v)
	}
	return out
}
