package sim

import (
	"fmt"
	"math"
)

// Sustainable is a policy's sustainable load on one seed: the highest
// offered load, on a grid of Step, at which the GPU the waiting pods ask
// for is no larger as the window ends than as it starts
// (ChurnResult.WaitingAtEnd ≤ WaitingAtStart), found by bisection between
// a load that is sustained and one that is not; Replays counts the replays
// it took.
type Sustainable struct {
	Policy, Moves string
	Seed          uint64
	Load          float64
	Replays       int
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
func sustained(r *ChurnResult) bool { return r.WaitingAtEnd <= r.WaitingAtStart }

// SustainableLoad searches one policy's sustainable load on one seed: the
// replays are RunChurn's at the spec's window and moves, the load on the
// grid From + k·Step.
func SustainableLoad(policy Policy, in Input, l *Lifetimes, spec ChurnSpec, s SustainSpec, seed uint64, opts Options) (Sustainable, error) {
	out := Sustainable{Policy: policy.Name, Moves: spec.Moves.Name(), Seed: seed}
	if err := s.Check(); err != nil {
		return out, err
	}
	steps := int(math.Round((s.To - s.From) / s.Step))
	at := func(k int) float64 { return math.Round((s.From+float64(k)*s.Step)/s.Step) * s.Step }
	try := func(k int) (bool, error) {
		run := spec
		run.Load = at(k)
		r, err := RunChurn(policy, in, l, run, seed, opts, nil)
		out.Replays++
		if err != nil {
			return false, err
		}
		return sustained(r), nil
	}
	ok, err := try(0)
	if err != nil || !ok {
		out.Load = at(0)
		return out, err
	}
	if ok, err := try(steps); err != nil || ok {
		out.Load = at(steps)
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
func SustainableLoads(in Input, policies []Policy, seeds []uint64, spec ChurnSpec, s SustainSpec, opts Options, workers int, progress func(done, total int, r Sustainable)) ([]Sustainable, error) {
	l, err := NewLifetimes(in.Pods)
	if err != nil {
		return nil, err
	}
	n := len(policies) * len(seeds)
	order := make([]int, n)
	for k := range order {
		order[k] = k
	}
	return replays(n, order, workers, func(k int) (Sustainable, error) {
		return SustainableLoad(policies[k/len(seeds)], in, l, spec, s, seeds[k%len(seeds)], opts)
	}, progress)
}
