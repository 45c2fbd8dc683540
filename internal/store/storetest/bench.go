package storetest

import (
	"fmt"
	"testing"

	"github.com/t3agent/t3agent/internal/store"
)

// Bench measures the hot paths on a driver: single writes, a write from
// many goroutines at once, and listing the overrides the tool gate reads
// on every run.
func Bench(b *testing.B, newDSN NewDSN) {
	openBench := func(b *testing.B) store.Store {
		st, err := store.Open(b.Context(), newDSN(b), store.OpenParams{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = st.Close() })
		return st
	}
	b.Run("SetSetting", func(b *testing.B) {
		st := openBench(b)
		i := 0
		for b.Loop() {
			if _, err := st.SetSetting(b.Context(), store.SetSettingParams{Key: fmt.Sprint("k", i%100), Value: "value"}); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("SetToolOverrideParallel", func(b *testing.B) {
		st := openBench(b)
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				p := store.SetToolOverrideParams{Name: fmt.Sprint("tool_", i%100), Enabled: i%2 == 0, UpdatedBy: "bench"}
				if _, err := st.SetToolOverride(b.Context(), p); err != nil {
					b.Error(err)
					return
				}
				i++
			}
		})
	})
	b.Run("ToolOverrides50", func(b *testing.B) {
		st := openBench(b)
		for i := range 50 {
			if _, err := st.SetToolOverride(b.Context(), store.SetToolOverrideParams{Name: fmt.Sprint("tool_", i), UpdatedBy: "bench"}); err != nil {
				b.Fatal(err)
			}
		}
		for b.Loop() {
			list, err := st.ToolOverrides(b.Context())
			if err != nil || len(list) != 50 {
				b.Fatalf("ToolOverrides = %d, %v", len(list), err)
			}
		}
	})
	b.Run("Setting", func(b *testing.B) {
		st := openBench(b)
		if _, err := st.SetSetting(b.Context(), store.SetSettingParams{Key: "k", Value: "v"}); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := st.Setting(b.Context(), "k"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
