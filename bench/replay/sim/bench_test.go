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
