package churn

import (
	"fmt"
	"math"

	"github.com/resfit/resfit/scoring/lifetime"
)

// endsView follows when the running pods are expected to end, for the
// policy's lifetime term (lifetime.Tracker): what they declare
// (Spec.Declare), else what was learned of the pods that ended before,
// by their shape and their lifetime class. It tells the placer when the
// pod it places is expected to end if it starts now (an evicted pod with
// the age it had).
type endsView struct {
	quiet
	r       *replay
	tracker *lifetime.Tracker[int]
	keys    [][]string // by shape
}

func newEndsView(rows int, model *lifetime.Model) *endsView {
	return &endsView{tracker: lifetime.NewTracker[int](model, rows)}
}

// keysOf are pod k's keys for the model: its shape, then its lifetime
// class.
func (x *endsView) keysOf(k int) []string {
	cp := &x.r.pods[k]
	for len(x.keys) <= cp.shape {
		x.keys = append(x.keys, nil)
	}
	if x.keys[cp.shape] == nil {
		s := shapeOf(cp.pod)
		x.keys[cp.shape] = []string{
			fmt.Sprintf("shape %d/%d/%d×%d/%s", s.milliCPU, s.memoryMiB, s.gpuMilli, s.numGPU, s.models),
			classKey(lifetimeClass(cp.pod)),
		}
	}
	return x.keys[cp.shape]
}

// declared is the end pod k declares when it started at started (0: it
// declares none).
func (x *endsView) declared(k int, started float64) float64 {
	if d := x.r.pods[k].declared; !math.IsNaN(d) {
		return started + d
	}
	return 0
}

// startedIfNow is when pod k counts as started if it starts now: now for
// a pod that never ran; for one evicted that waits to run again, now less
// what it ran before (its start, moved on by every wait since).
func (x *endsView) startedIfNow(k int) float64 {
	cp := &x.r.pods[k]
	if math.IsNaN(cp.left) {
		return x.r.now
	}
	return cp.started + cp.waited + (x.r.now - cp.evicted)
}

// classKey is the model's key of a lifetime class.
func classKey(class int) string { return "class " + lifetimeClassName(class) }

func (x *endsView) on(e event) error {
	r := x.r
	switch e.kind {
	case podPlacing:
		started := x.startedIfNow(e.pod)
		var src lifetime.Source
		e.task.Ends, src = x.tracker.Expect(x.keysOf(e.pod), started, x.declared(e.pod, started), r.now)
		e.task.EndsLearned = src.IsLearned()
	case podStarted, podMoved:
		cp := &r.pods[e.pod]
		started := cp.started + cp.waited
		x.tracker.Start(e.pod, lifetime.Pod{Row: e.row, Started: started, Declared: x.declared(e.pod, started),
			Keys: x.keysOf(e.pod), Size: cp.pod.TotalMilliGPU()}, r.now)
	case podEnded:
		if r.spec.Declare == DeclareOracle { // its model learns nothing
			x.tracker.Forget(e.pod)
			break
		}
		x.tracker.End(e.pod, r.now)
	case podEvicted:
		x.tracker.Forget(e.pod)
	}
	return nil
}

func (x *endsView) advance(_, to float64) { x.tracker.Advance(to) }

func (x *endsView) report() Report { return nil }
