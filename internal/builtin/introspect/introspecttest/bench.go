package introspecttest

import (
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/tool"
)

// Bench calls name as admin for a local provider b.N times through the
// gate and reports the median and 95th percentile latency as p50-ms and
// p95-ms besides Go's mean, and the process CPU time (user + system) per
// call as cpu-ms: on a shared, loaded machine the wall-clock figures
// include the time the process waited for a core, cpu-ms does not.
func (f *Fixture) Bench(b *testing.B, name string, args map[string]any) {
	b.Helper()
	if r := f.Call("admin", name, args, tool.ZoneLocal); r.IsError {
		b.Fatalf("%s: %s", name, r.Content)
	}
	times := make([]time.Duration, 0, b.N)
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		r := f.Call("admin", name, args, tool.ZoneLocal)
		times = append(times, time.Since(start))
		if r.IsError {
			b.Fatalf("%s: %s", name, r.Content)
		}
	}
	b.StopTimer()
	cpu := cpuTime() - cpu0
	slices.Sort(times)
	if len(times) > 0 {
		b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(times[len(times)*95/100].Microseconds())/1000, "p95-ms")
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(len(times)), "cpu-ms")
	}
}

// cpuTime is the process's user plus system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
