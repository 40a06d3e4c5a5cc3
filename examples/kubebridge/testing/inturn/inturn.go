// Package inturn measures a host's scheduling step against its floor's
// (the same step with a plugin that does nothing) with a call of each in
// turn in one benchmark loop, so that both see the machine, and its
// caches, alike. The hosts' benchmarks use it: a kube-scheduler cycle, a
// Volcano task through the allocate action.
package inturn

import (
	"testing"
	"time"
)

// Measure times floor and step in b's loop, a call of each in turn,
// whichever goes first alternating, after an untimed call of each. It
// reports step's time per node of n (ns/node), the floor's
// (floor-ns/node) and their ratio (×floor).
func Measure(b *testing.B, n int, floor, step func()) {
	calls := [2]func(){floor, step}
	floor()
	step()
	var spent [2]time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		for j := range 2 {
			k := j ^ i&1 // the floor first in even rounds
			start := time.Now()
			calls[k]()
			spent[k] += time.Since(start)
		}
	}
	b.StopTimer()
	perNode := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) / float64(n) }
	b.ReportMetric(perNode(spent[1]), "ns/node")
	b.ReportMetric(perNode(spent[0]), "floor-ns/node")
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "×floor")
}
