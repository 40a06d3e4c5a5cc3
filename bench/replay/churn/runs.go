package churn

import (
	"github.com/resfit/resfit/bench/replay/sim"
)

// RunAll replays every policy with each of the add-ons' settings (none
// given: the metrics alone) under every seed at every load with
// departures (Run), workers at a time (≤ 0: GOMAXPROCS), and returns the
// results by policy, add-ons, load, then seed. progress, when not nil, is
// called after each replay, one call at a time.
func RunAll(in sim.Input, policies []sim.Policy, adds []AddOns, seeds []uint64, loads []float64, spec Spec, opts sim.Options, workers int, progress func(done, total int, r *Result)) ([]*Result, error) {
	l, err := newLifetimes(in.Pods, spec.Resample)
	if err != nil {
		return nil, err
	}
	if len(adds) == 0 {
		adds = []AddOns{{}}
	}
	type run struct {
		policy int
		add    AddOns
		load   float64
		seed   uint64
	}
	var runs []run
	for p := range policies {
		for _, a := range adds {
			if err := a.Check(); err != nil {
				return nil, err
			}
			for _, load := range loads {
				s := spec
				s.Load = load
				if err := s.Check(); err != nil {
					return nil, err
				}
				for _, seed := range seeds {
					runs = append(runs, run{p, a, load, seed})
				}
			}
		}
	}
	order := make([]int, len(runs))
	for k := range order {
		order[k] = k
	}
	return sim.Parallel(len(runs), order, workers, func(k int) (*Result, error) {
		s := spec
		s.Load = runs[k].load
		return Run(policies[runs[k].policy], in, l, s, runs[k].add, runs[k].seed, opts, nil)
	}, progress)
}
