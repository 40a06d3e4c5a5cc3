package churn

import (
	"fmt"
	"math"
	"strconv"

	"github.com/resfit/resfit/bench/replay/sim"
)

// Sustainable is a policy's sustainable load on one seed: the highest
// offered load, on a grid of Step, at which the GPU the waiting pods ask
// for is no larger as the window ends than as it starts
// (WaitsReport.AtEnd ≤ AtStart), found by bisection between
// a load that is sustained and one that is not; Replays counts the replays
// it took.
type Sustainable struct {
	Policy, Setting string
	Seed            uint64
	Load            float64
	Replays         int
	// Below says the search's From is not sustained: the sustainable
	// load is below Load, which is From; Above that To is, and it is at
	// least Load, which is To.
	Below, Above bool
}

// String is the load found, with < or ≥ where the search's bounds are the
// answer.
func (s Sustainable) String() string {
	v := strconv.FormatFloat(s.Load, 'f', 2, 64)
	switch {
	case s.Below:
		return "<" + v
	case s.Above:
		return "≥" + v
	}
	return v
}

// SustainSpec bounds the search: From is taken to be sustained and To
// not (each is checked: a From that is not, or a To that is, is the
// answer, reported as such), to Step.
type SustainSpec struct {
	From, To, Step float64
}

// Check reports a search that cannot run.
func (s SustainSpec) Check() error {
	if !(s.Step > 0) || !(s.From > 0) || !(s.To > s.From) || math.IsInf(s.To, 0) || (s.To-s.From)/s.Step > 1e6 {
		return fmt.Errorf("sustainable load: search from %v to %v by %v: want 0 < from < to and a step above 0 that divides it into at most a million", s.From, s.To, s.Step)
	}
	return nil
}

// sustained reports whether a replay ended with no more GPU waiting than
// it started with.
func sustained(r *Result) bool { w := r.Waits(); return w.AtEnd <= w.AtStart }

// SustainableLoad searches one policy's sustainable load on one seed: the
// replays are Run's at the spec's window, with the add-ons, the load on
// the grid From + k·Step.
func SustainableLoad(policy sim.Policy, in sim.Input, l *Lifetimes, spec Spec, add AddOns, s SustainSpec, seed uint64, opts sim.Options) (Sustainable, error) {
	out, err := s.search(func(load float64) (bool, error) {
		run := spec
		run.Load = load
		r, err := Run(policy, in, l, run, add, seed, opts, nil)
		if err != nil {
			return false, err
		}
		return sustained(r), nil
	})
	out.Policy, out.Setting, out.Seed = policy.Name, settingOf(add, spec), seed
	return out, err
}

// search is the bisection on the grid From + k·Step between From, taken
// to be sustained, and To, taken not to be (each tried first), for the
// highest load at which sustains answers true, taking the answers to be
// monotone (true below some load, false above).
func (s SustainSpec) search(sustains func(load float64) (bool, error)) (Sustainable, error) {
	var out Sustainable
	if err := s.Check(); err != nil {
		return out, err
	}
	steps := int(math.Round((s.To - s.From) / s.Step))
	at := func(k int) float64 { return math.Round((s.From+float64(k)*s.Step)/s.Step) * s.Step }
	try := func(k int) (bool, error) {
		out.Replays++
		return sustains(at(k))
	}
	ok, err := try(0)
	if err != nil || !ok {
		out.Load, out.Below = at(0), err == nil
		return out, err
	}
	if ok, err := try(steps); err != nil || ok {
		out.Load, out.Above = at(steps), err == nil
		return out, err
	}
	lo, hi := 0, steps // lo sustained, hi not
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		ok, err := try(mid)
		if err != nil {
			return out, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	out.Load = at(lo)
	return out, nil
}

// SustainableLoads searches every policy's sustainable load under every
// seed, workers at a time, and returns the answers by policy, then seed.
func SustainableLoads(in sim.Input, policies []sim.Policy, seeds []uint64, spec Spec, add AddOns, s SustainSpec, opts sim.Options, workers int, progress func(done, total int, r Sustainable)) ([]Sustainable, error) {
	l, err := newLifetimes(in.Pods, spec.Resample)
	if err != nil {
		return nil, err
	}
	n := len(policies) * len(seeds)
	order := make([]int, n)
	for k := range order {
		order[k] = k
	}
	return sim.Parallel(n, order, workers, func(k int) (Sustainable, error) {
		return SustainableLoad(policies[k/len(seeds)], in, l, spec, add, s, seeds[k%len(seeds)], opts)
	}, progress)
}
