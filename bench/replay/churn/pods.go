package churn

import "github.com/resfit/resfit/bench/replay/sim"

// arrival is a pod arriving at a time with a lifetime.
type arrival struct {
	pod  sim.Pod
	at   float64
	life float64
}

// pod is a pod of a replay with departures.
type podState struct {
	pod     sim.Pod
	arrived float64
	life    float64
	started float64 // NaN while it waits to start
	row     int
	holds   []int // the GPUs it holds on row
	shape   int   // its shape's number (replay.shapeIDs)
	// ends is when it leaves, while it runs; gen counts its departures
	// scheduled (one whose gen is older is no longer its); left is what
	// an evicted pod that waits to run again has left of its lifetime
	// (NaN otherwise).
	ends float64
	gen  int
	left float64
	// evicted is when it was last evicted, waited how long evicted pods
	// of it waited for room in all: it leaves at started + life + waited.
	evicted, waited float64
	// declared is the lifetime it declares (Spec.Declare), NaN when
	// it declares none: it says it ends at started + declared + waited.
	declared float64
}

// declaredEnd is when running pod cp says it ends (NaN: it does not say).
func (cp *podState) declaredEnd() float64 {
	return cp.started + cp.declared + cp.waited
}

// departure is a running pod's end.
type departure struct {
	at       float64
	pod, gen int
}

type departures []departure

func (h departures) Len() int { return len(h) }

func (h departures) Less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].pod < h[j].pod
}

func (h departures) Swap(i, j int) { h[i], h[j] = h[j], h[i] }

func (h *departures) Push(x any) { *h = append(*h, x.(departure)) }

func (h *departures) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// queueKey is what a pod asks for, by which the queue groups waiting pods.
type queueKey struct {
	milliCPU, memoryMiB, gpuMilli int64
	numGPU                        int
	models                        string
}

func shapeOf(p sim.Pod) queueKey {
	return queueKey{milliCPU: p.MilliCPU, memoryMiB: p.MemoryMiB, gpuMilli: p.GPUMilli, numGPU: p.NumGPU, models: string(p.GPUSpec)}
}
