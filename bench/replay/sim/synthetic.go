package sim

import (
	"fmt"
	"math/rand/v2"
)

// SyntheticSpec sizes the built-in synthetic cluster and workload.
type SyntheticSpec struct {
	Nodes int
	Seed  uint64
}

// Synthetic builds a small cluster and workload shaped like openb's, so
// that the replay runs anywhere and in tests: 8-GPU nodes with 96 cores
// (most), 2-GPU nodes with 104 cores, 4-GPU nodes with 32 cores and a few
// 1-GPU nodes; pods sharing a GPU (the 810-milli kind most often), whole
// 1/2/4/8-GPU pods and CPU-only pods, about 0.8 pods per GPU, with
// lifetimes for a replay with departures.
func Synthetic(spec SyntheticSpec) Input {
	rng := rand.New(rand.NewPCG(spec.Seed, 0x73796e74))
	nodeKinds := []struct {
		weight   int
		cpu, mib int64
		gpus     int
	}{
		{45, 96000, 393216, 8}, {30, 104000, 524288, 2}, {15, 32000, 131072, 4}, {10, 8000, 32768, 1},
	}
	podKinds := []struct {
		weight   int
		cpu, mib int64
		gpus     int
		milli    int64
	}{
		{14, 3152, 8192, 1, 810}, {10, 6000, 12288, 1, 460}, {8, 4000, 8192, 1, 500},
		{6, 2000, 4096, 1, 250}, {5, 1000, 2048, 1, 100}, {16, 8000, 16384, 1, 1000},
		{4, 16000, 65536, 2, 1000}, {2, 32000, 131072, 4, 1000}, {1, 64000, 262144, 8, 1000},
		{20, 4000, 8192, 0, 0}, {14, 12000, 16384, 0, 0},
	}
	pick := func(weights []int) int {
		total := 0
		for _, w := range weights {
			total += w
		}
		k := rng.IntN(total)
		for i, w := range weights {
			if k < w {
				return i
			}
			k -= w
		}
		return len(weights) - 1
	}
	var nw, pw []int
	for _, k := range nodeKinds {
		nw = append(nw, k.weight)
	}
	for _, k := range podKinds {
		pw = append(pw, k.weight)
	}
	in := Input{Name: fmt.Sprintf("synthetic (%d nodes, seed %d)", spec.Nodes, spec.Seed)}
	gpus := 0
	for i := range spec.Nodes {
		k := nodeKinds[pick(nw)]
		in.Nodes = append(in.Nodes, Node{Name: fmt.Sprintf("syn-node-%04d", i), MilliCPU: k.cpu, MemoryMiB: k.mib, GPUs: k.gpus, Model: "SYN"})
		gpus += k.gpus
	}
	var total int64
	// Lifetimes from a generator of their own, so that the shapes are
	// those drawn before pods had lifetimes: most pods live minutes (a
	// mean of 20), one in ten hours (a mean of 10).
	lives := rand.New(rand.NewPCG(spec.Seed, 0x6c696665))
	for i := 0; total < int64(gpus)*1000*95/100; i++ {
		k := podKinds[pick(pw)]
		mean := 1200.0
		if lives.IntN(10) == 0 {
			mean = 36000
		}
		p := Pod{Name: fmt.Sprintf("syn-pod-%05d", i), MilliCPU: k.cpu, MemoryMiB: k.mib, NumGPU: k.gpus, GPUMilli: k.milli,
			Lifetime: 1 + int64(lives.ExpFloat64()*mean)}
		in.Pods = append(in.Pods, p)
		total += p.TotalMilliGPU()
	}
	in.Classes = TypicalClasses(in.Pods, Coverage)
	return in
}
