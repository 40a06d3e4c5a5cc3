package sim

import "testing"

// benchInput is the openb trace when present, else a synthetic cluster of
// the same size.
func benchInput(b *testing.B) Input {
	if in, err := ReadTrace(FindTrace()); err == nil {
		return in
	}
	return Synthetic(SyntheticSpec{Nodes: 1213, Seed: 1})
}

// One FGD replay (seed 42, 130% load), scoring with incremental
// fragmentation or recomputing every node for every pod:
//
//	go test -run X -bench FGD -benchtime 3x ./sim
func BenchmarkFGDReplay(b *testing.B) {
	in := benchInput(b)
	c, _ := NewCluster(Schema(), in.Nodes, nil)
	w := Workload(in.Pods, c.CapacityMilliGPU, 1.3, 42)
	fgd, _ := Select(Policies(), "FGD")
	for _, mode := range []struct {
		name    string
		scratch bool
	}{{"incremental", false}, {"scratch", true}} {
		b.Run(mode.name, func(b *testing.B) {
			var evals int64
			for b.Loop() {
				r, err := Run(fgd[0], in.Nodes, w, in.Classes, 42, Options{FromScratch: mode.scratch}, in.CoresPerGPU())
				if err != nil {
					b.Fatal(err)
				}
				evals = r.Evaluations
			}
			b.ReportMetric(float64(evals), "evals/op")
			b.ReportMetric(float64(len(w)), "pods/op")
		})
	}
}

// One replay of each cheap policy, for the cost of the pipeline itself.
func BenchmarkPolicyReplay(b *testing.B) {
	in := benchInput(b)
	c, _ := NewCluster(Schema(), in.Nodes, nil)
	w := Workload(in.Pods, c.CapacityMilliGPU, 1.3, 42)
	for _, p := range Policies() {
		b.Run(p.Name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Run(p, in.Nodes, w, in.Classes, 42, Options{}, in.CoresPerGPU()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(w)*len(in.Nodes)), "ns/pod-node")
		})
	}
}

// A replay with departures against the arrival-only replay, in the same
// run: FGD and ResfitFrag, seed 42; with departures a 7-day window after a
// day's warm-up at offered load 1.3 (about 190,000 arrivals on openb),
// arrival-only to 130% of the capacity requested (about 10,700 pods). Per
// op and per pod placed or arrived:
//
//	go test -run X -bench ChurnReplay -benchtime 3x ./sim
func BenchmarkChurnReplay(b *testing.B) {
	in := benchInput(b)
	c, _ := NewCluster(Schema(), in.Nodes, nil)
	w := Workload(in.Pods, c.CapacityMilliGPU, 1.3, 42)
	l, err := NewLifetimes(in.Pods)
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"FGD", ResfitFrag} {
		p, _ := Select(Policies(), name)
		b.Run(name+"/arrivals-only", func(b *testing.B) {
			for b.Loop() {
				if _, err := Run(p[0], in.Nodes, w, in.Classes, 42, Options{}, in.CoresPerGPU()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(w)), "ns/pod")
		})
		b.Run(name+"/churn-7d", func(b *testing.B) {
			var arrivals int
			for b.Loop() {
				r, err := RunChurn(p[0], in, l, ChurnSpec{Load: 1.3, WarmUp: 86400, Window: 7 * 86400}, 42, Options{}, nil)
				if err != nil {
					b.Fatal(err)
				}
				arrivals = r.Arrivals + r.Alive
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(arrivals), "ns/pod")
		})
	}
}
