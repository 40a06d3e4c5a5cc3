package sim

// DefragBudgets are the budgets of the passes that have one, as fractions
// of the placed pods.
var DefragBudgets = []float64{0.005, 0.01, 0.02, 0.05}

// DefragPasses are the passes the replay compares: none; make-room with
// k = 1, 2, 4; and reclaim, give-back and fragMultiPod at each of
// DefragBudgets.
func DefragPasses() []Defrag {
	passes := []Defrag{{Method: NoMoves}, {Method: MakeRoom, K: 1}, {Method: MakeRoom, K: 2}, {Method: MakeRoom, K: 4}}
	for _, m := range []DefragMethod{Reclaim, GiveBack, FragMultiPod} {
		for _, r := range DefragBudgets {
			passes = append(passes, Defrag{Method: m, Ratio: r})
		}
	}
	return passes
}

// RunDefrags replays the policy under every seed once per pass, workers
// at a time (≤ 0: GOMAXPROCS), and returns the results by pass, then
// seed; each Result holds the cluster before its pass and the pass's
// (Result.Defrag). progress, when not nil, is called after each replay,
// one call at a time.
func RunDefrags(in Input, policy Policy, passes []Defrag, seeds []uint64, ratio float64, opts Options, workers int, progress func(done, total int, r *Result)) ([]*Result, error) {
	for _, d := range passes {
		if err := d.Check(); err != nil {
			return nil, err
		}
	}
	workloads, err := in.workloads(seeds, ratio)
	if err != nil {
		return nil, err
	}
	order := make([]int, len(passes)*len(seeds))
	for k := range order {
		order[k] = k
	}
	return Parallel(len(order), order, workers, func(k int) (*Result, error) {
		o := opts
		o.Defrag = &passes[k/len(seeds)]
		s := k % len(seeds)
		return Run(policy, in.Nodes, workloads[s], in.Classes, seeds[s], o, in.CoresPerGPU())
	}, progress)
}
