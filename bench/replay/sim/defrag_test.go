package sim

import (
	"fmt"
	"math"
	"reflect"
	"testing"
)

// On the synthetic workload, every pass keeps to its budget, accounts for
// its pods (pending after = before − placed + lost), leaves no more GPU
// unallocated than before unless it lost pods (fragMultiPod may), never
// goes below its floor when it lost none (the floor bounds every plan that
// places again what it moves), and the same seed gives the same results.
// Under the race detector it replays seed 43 alone (its passes run on the
// workers all the same), where the two seeds took a minute; without it
// (.ci/run's long tests), seeds 42 and 43. (On seed 42's cluster, as
// ResfitFrag leaves it since its tie-breaker balances while nothing is
// known of when pods end, no pass finds a move.)
func TestDefragPassesKeepTheirBounds(t *testing.T) {
	t.Parallel() // one of the sim tests that take tens of seconds under race: they share the two cores
	in := Synthetic(SyntheticSpec{Nodes: 60, Seed: 3})
	policy, err := Select(Policies(), ResfitFrag)
	if err != nil {
		t.Fatal(err)
	}
	passes := DefragPasses()
	seeds := []uint64{42, 43}
	if raceEnabled {
		seeds = seeds[1:]
	}
	run := func() []*Result {
		rs, err := RunDefrags(in, policy[0], passes, seeds, 1.3, Options{}, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	results := run()
	moved := 0
	for _, r := range results {
		x := r.Defrag
		budgeted := x.Budget > 0
		if budgeted && x.Moves > x.Budget || !budgeted && x.Name[:4] != "make" && x.Moves != 0 {
			t.Errorf("%s seed %d: %d moves, budget %d", x.Name, r.Seed, x.Moves, x.Budget)
		}
		if x.Pending != r.Pending-x.Placed+x.Lost {
			t.Errorf("%s seed %d: %d pending after, %d before, %d placed, %d lost", x.Name, r.Seed, x.Pending, r.Pending, x.Placed, x.Lost)
		}
		if x.Lost == 0 && (x.Unallocated > r.Unallocated()+1e-9 || x.Floor > x.Unallocated+1e-9) {
			t.Errorf("%s seed %d: unallocated %.4f → %.4f, floor %.4f", x.Name, r.Seed, r.Unallocated(), x.Unallocated, x.Floor)
		}
		if x.Name == "none" && (x.Unallocated != r.Unallocated() || x.Placed != 0) {
			t.Errorf("none seed %d: %+v", r.Seed, x)
		}
		moved += x.Moves
	}
	if moved == 0 {
		t.Error("no pass moved a pod")
	}
	for n, r := range run() {
		if !reflect.DeepEqual(r.Defrag, results[n].Defrag) {
			t.Errorf("%s seed %d: %+v, then %+v", r.Defrag.Name, r.Seed, results[n].Defrag, r.Defrag)
		}
	}
	if err := (Defrag{Method: "shuffle"}).Check(); err == nil {
		t.Error("an unknown method passed")
	}
	for _, d := range []Defrag{{Method: MakeRoom}, {Method: Reclaim, Ratio: 0}, {Method: FragMultiPod, Ratio: math.NaN()}, {Method: GiveBack, Ratio: 2}} {
		if err := d.Check(); err == nil {
			t.Errorf("%+v passed", d)
		}
	}
}

// On openb, seed 42, ResfitFrag placing (4.2556% unallocated, 2354 pods
// pending; its tie-breaker balancing until 30% of the GPUs are in use, as
// nothing is known of when pods end): make-room and reclaim 1% place 1
// pod with 1 move (4.2521%), give-back 1% finds no move that places one,
// fragMultiPod 1% 4 pods with 84 moves, losing 1 (4.2495%); no plan of 84
// moves can leave less than 3.5813% (BoundReclaim): the 3.0% target is
// out of reach. The full
// comparison, every seed and budget, is a documented command
// (bench/replay/README.md).
func TestDefragOnOpenb(t *testing.T) {
	skipUnderRace(t)
	t.Parallel()
	in, err := ReadTrace(FindTrace())
	if err != nil {
		noTrace(t, err)
	}
	policy, err := Select(Policies(), ResfitFrag)
	if err != nil {
		t.Fatal(err)
	}
	passes := []Defrag{{Method: NoMoves}, {Method: MakeRoom, K: 1}, {Method: Reclaim, Ratio: 0.01}, {Method: GiveBack, Ratio: 0.01}, {Method: FragMultiPod, Ratio: 0.01}}
	results, err := RunDefrags(in, policy[0], passes, []uint64{42}, 1.3, Options{}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"none: 0 moves of 0, 0 placed, 0 lost, 2354 pending, 4.2556% → 4.2556%, floor 4.0816%",
		"make-room k=1: 1 moves of 0, 1 placed, 0 lost, 2353 pending, 4.2556% → 4.2521%, floor 4.0757%",
		"reclaim 1%: 1 moves of 84, 1 placed, 0 lost, 2353 pending, 4.2556% → 4.2521%, floor 3.5813%",
		"give-back 1%: 0 moves of 84, 0 placed, 0 lost, 2354 pending, 4.2556% → 4.2556%, floor 3.5813%",
		"fragMultiPod 1%: 84 moves of 84, 4 placed, 1 lost, 2351 pending, 4.2556% → 4.2495%, floor 3.5813%",
	}
	for n, r := range results {
		x := r.Defrag
		got := fmt.Sprintf("%s: %d moves of %d, %d placed, %d lost, %d pending, %.4f%% → %.4f%%, floor %.4f%%", x.Name, x.Moves, x.Budget, x.Placed, x.Lost, x.Pending, r.Unallocated(), x.Unallocated, x.Floor)
		if got != want[n] {
			t.Errorf("got  %s\nwant %s", got, want[n])
		}
	}
}
