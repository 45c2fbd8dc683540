package gate

import (
	"strings"
	"sync"
	"testing"
)

// TestSchemaCompiledOnce: a schema is compiled on first use and reused
// while its bytes stay the same; a changed schema under the same name
// replaces the entry.
func TestSchemaCompiledOnce(t *testing.T) {
	t.Parallel()
	var c schemaCache
	v1 := []byte(`{"type":"object","properties":{"a":{"type":"string"}}}`)
	first, err := c.get("t", v1)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if again, _ := c.get("t", []byte(string(v1))); again != first {
				t.Error("an unchanged schema was compiled again")
			}
		})
	}
	wg.Wait()
	v2 := []byte(`{"type":"object","properties":{"a":{"type":"integer"}}}`)
	second, err := c.get("t", v2)
	if err != nil || second == first {
		t.Fatalf("a changed schema was not recompiled: %v", err)
	}
	if err := second.Validate(map[string]any{"a": "x"}); err == nil {
		t.Error("the recompiled schema still accepts the old type")
	}
	entries := 0
	c.m.Range(func(any, any) bool { entries++; return true })
	if entries != 1 {
		t.Errorf("the cache holds %d entries for one name", entries)
	}
	// Errors are cached too, and read as one line.
	_, err = c.get("bad", []byte(`{"type":"object","properties":{"a":{"minimum":"x"}}}`))
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("bad schema: %v", err)
	}
}
