package lifetime_test

import (
	"fmt"

	"github.com/resfit/resfit/scoring/lifetime"
)

// A host follows its running pods in a Tracker: pods that declare an end
// end then; the others are predicted from the lifetimes of the pods of
// their keys that ended, and predicted again when they outlive it.
func ExampleTracker() {
	model, _ := lifetime.NewModel(lifetime.ModelOptions{MinSamples: 2})
	tracker := lifetime.NewTracker[string](model, 2)
	// Two pods of job "etl" ran for 10 and 30 minutes, one for 2 hours.
	for _, lived := range []float64{600, 1800, 7200} {
		model.Observe([]string{"job etl", "1 GPU"}, lived)
	}
	// Node 0: a pod of etl that started now; node 1: one that declares
	// it ends in an hour.
	tracker.Start("etl-1", lifetime.Pod{Row: 0, Started: 0, Keys: []string{"job etl", "1 GPU"}}, 0)
	tracker.Start("train-1", lifetime.Pod{Row: 1, Started: 0, Declared: 3600}, 0)
	// etl-1 outlives what its keys say at 1800 s, and both pods outlive
	// what is known of them by 7200 s: each is expected to run as long
	// again as it has run.
	for _, now := range []float64{0, 1800, 7200} {
		tracker.Advance(now)
		for row := range 2 {
			e := tracker.Nodes().Row(row)
			fmt.Printf("at %4.0f s node %d empties at %4.0f s (declared by %d, learned for %d, as long again for %d)\n",
				now, row, e.At, e.Declared, e.Learned, e.Lindy)
		}
	}
	// Output:
	// at    0 s node 0 empties at 1800 s (declared by 0, learned for 1, as long again for 0)
	// at    0 s node 1 empties at 3600 s (declared by 1, learned for 0, as long again for 0)
	// at 1800 s node 0 empties at 3600 s (declared by 0, learned for 0, as long again for 1)
	// at 1800 s node 1 empties at 3600 s (declared by 1, learned for 0, as long again for 0)
	// at 7200 s node 0 empties at 14400 s (declared by 0, learned for 0, as long again for 1)
	// at 7200 s node 1 empties at 14400 s (declared by 0, learned for 0, as long again for 1)
}
