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
func TestDefragPassesKeepTheirBounds(t *testing.T) {
	t.Parallel() // one of the sim tests that take tens of seconds under race: they share the two cores
	in := Synthetic(SyntheticSpec{Nodes: 60, Seed: 3})
	policy, err := Select(Policies(), ResfitFrag)
	if err != nil {
		t.Fatal(err)
	}
	passes := DefragPasses()
	run := func() []*Result {
		rs, err := RunDefrags(in, policy[0], passes, []uint64{42, 43}, 1.3, Options{}, 0, nil)
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

// On openb, seed 42, ResfitFrag placing (4.2803% unallocated, 2290 pods
// pending): make-room and reclaim 1% place 2 pods with 2 moves (4.2716%),
// give-back 1% 2 other pods with 19 moves (4.2590%), fragMultiPod 1% 5
// pods with 85 (4.2310%); no plan of 85 moves can leave less than 3.5900%
// (BoundReclaim): the 3.0% target is out of reach. The full comparison,
// every seed and budget, is a documented command (bench/replay/README.md).
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
		"none: 0 moves of 0, 0 placed, 0 lost, 2290 pending, 4.2803% → 4.2803%, floor 4.0963%",
		"make-room k=1: 2 moves of 0, 2 placed, 0 lost, 2288 pending, 4.2803% → 4.2716%, floor 4.0844%",
		"reclaim 1%: 2 moves of 85, 2 placed, 0 lost, 2288 pending, 4.2803% → 4.2716%, floor 3.5900%",
		"give-back 1%: 19 moves of 85, 2 placed, 0 lost, 2288 pending, 4.2803% → 4.2590%, floor 3.5900%",
		"fragMultiPod 1%: 85 moves of 85, 5 placed, 0 lost, 2285 pending, 4.2803% → 4.2310%, floor 3.5900%",
	}
	for n, r := range results {
		x := r.Defrag
		got := fmt.Sprintf("%s: %d moves of %d, %d placed, %d lost, %d pending, %.4f%% → %.4f%%, floor %.4f%%", x.Name, x.Moves, x.Budget, x.Placed, x.Lost, x.Pending, r.Unallocated(), x.Unallocated, x.Floor)
		if got != want[n] {
			t.Errorf("got  %s\nwant %s", got, want[n])
		}
	}
}
