package store

import (
	"testing"
	"time"
)

// FuzzParseUTCTime holds the fast path of timeScanner to time.Parse: what
// it accepts, time.Parse accepts as the same instant in UTC.
func FuzzParseUTCTime(f *testing.F) {
	for _, s := range []string{
		"2026-12-03 16:37:00+00:00", "2026-12-03 16:37:00.5+00:00", "2026-12-03 16:37:00.123456789+00:00",
		"2024-02-29 00:00:00+00:00", "2023-02-29 00:00:00+00:00", "2026-04-31 23:59:59.9+00:00",
		"2026-12-03 24:00:00+00:00", "2026-13-03 16:37:00+00:00", "2026-12-03 16:37:00.+00:00",
		"2026-12-03 16:37:00.1234567890+00:00", "2026-12-03 16:37:00+01:00", "2026-12-03T16:37:00+00:00",
		"0000-01-01 00:00:00+00:00", "2026-12-03 16:37:00,5+00:00", "2026-12-03 1a:37:00+00:00", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseUTCTime(s)
		want, err := time.Parse(sqliteTimeFormat, s)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("parseUTCTime(%q) = %v, time.Parse fails: %v", s, got, err)
		}
		if want = want.UTC(); got != want {
			t.Fatalf("parseUTCTime(%q) = %v, time.Parse %v", s, got, want)
		}
	})
}

func BenchmarkTimeScanner(b *testing.B) {
	var t time.Time
	for b.Loop() {
		if err := (timeScanner{&t}).Scan("2026-12-03 16:37:00.123456789+00:00"); err != nil {
			b.Fatal(err)
		}
	}
}
