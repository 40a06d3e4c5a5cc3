package churn

import (
	"testing"

	"github.com/resfit/resfit/bench/replay/sim"
)

// A replay with departures against the arrival-only replay, in the same
// run: FGD and ResfitFrag, seed 42; with departures a 7-day window after a
// day's warm-up at offered load 1.3 (about 190,000 arrivals on openb),
// arrival-only to 130% of the capacity requested (about 10,700 pods). Per
// op and per pod placed or arrived:
//
//	go test -run X -bench ChurnReplay -benchtime 3x ./churn
func BenchmarkChurnReplay(b *testing.B) {
	in := churnInput(b)
	c, _ := sim.NewCluster(sim.Schema(), in.Nodes, nil)
	w := sim.Workload(in.Pods, c.CapacityMilliGPU, 1.3, 42)
	l, err := NewLifetimes(in.Pods)
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"FGD", sim.ResfitFrag} {
		p, _ := sim.Select(sim.Policies(), name)
		b.Run(name+"/arrivals-only", func(b *testing.B) {
			for b.Loop() {
				if _, err := sim.Run(p[0], in.Nodes, w, in.Classes, 42, sim.Options{}, in.CoresPerGPU()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(w)), "ns/pod")
		})
		b.Run(name+"/churn-7d", func(b *testing.B) {
			var arrivals int
			for b.Loop() {
				r, err := Run(p[0], in, l, Spec{Load: 1.3, WarmUp: 86400, Window: 7 * 86400}, AddOns{}, 42, sim.Options{}, nil)
				if err != nil {
					b.Fatal(err)
				}
				arrivals = r.Arrivals + r.Alive
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(arrivals), "ns/pod")
		})
	}
}
