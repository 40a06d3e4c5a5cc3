package defrag

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// drawPending draws one to three pending tasks: the cluster's own, and
// GPU tasks of a share or whole GPUs.
func drawPending(t *rapid.T, first *scoring.Task) []*scoring.Task {
	pending := []*scoring.Task{first}
	for n := range rapid.IntRange(0, 2).Draw(t, "more pending") {
		task := &scoring.Task{Name: fmt.Sprint("pending-", n), Requests: resource.Vector{int64(rapid.IntRange(1, 4).Draw(t, "cpu")) * 1000, 1 << 30, 0}}
		if rapid.Bool().Draw(t, "shared") {
			task.Devices = resource.DeviceRequest{Count: 1, Each: int64(rapid.SampledFrom([]int{250, 500, 750}).Draw(t, "share"))}
		} else {
			task.Devices = resource.DeviceRequest{Count: rapid.IntRange(1, 2).Draw(t, "whole"), Each: 1000}
		}
		task.Requests[2] = task.Devices.Total()
		pending = append(pending, task)
	}
	return pending
}

// place is the world after the task goes to row, where the scheduler puts
// its devices.
func (w *world) place(t testing.TB, task *scoring.Task, row int) *world {
	n := w.clone(t)
	if err := n.table.AddUsed(row, task.Requests, nil, false); err != nil {
		t.Fatal(err)
	}
	for _, j := range n.take(t, row, task) {
		n.free[row][j] -= task.Devices.Each
	}
	return n
}

// mostTaken is the most device amount the pending tasks take, each where
// the pipeline puts it when it is placed, with at most k moves made before,
// between or after the placements, in any order: the reference the bound
// must never fall below, and Reclaim never rise above.
func (w *world) mostTaken(t testing.TB, pending []*scoring.Task, k int) int64 {
	best := int64(0)
	for n, task := range pending {
		if row := w.fits(t, task); row >= 0 {
			rest := slices.Delete(slices.Clone(pending), n, n+1)
			best = max(best, task.Devices.Total()+w.place(t, task, row).mostTaken(t, rest, k))
		}
	}
	if k == 0 {
		return best
	}
	for i, p := range w.c.Pods {
		if w.moved[i] || !p.Movable || !w.allowed(p, w.budget) {
			continue
		}
		if row, holds := w.destination(t, i); row >= 0 {
			best = max(best, w.moveTo(t, i, row, holds).mostTaken(t, pending, k-1))
		}
	}
	return best
}

// On small clusters, Reclaim spends at most its moves; every plan it
// makes, replayed move by move on the reference, goes where the pipeline
// puts each pod, keeps the budgets, and lets its task go to the plan's
// row; the tasks it places take no more than the most any sequence of as
// many moves lets them take (the reference: every sequence, every order);
// and BoundReclaim is never below that most.
func TestReclaimAndItsBound(t *testing.T) {
	schema := gpuSchema(t)
	placedSome, tight := 0, 0
	rapid.Check(t, func(rt *rapid.T) {
		c, first := drawCluster(rt, schema)
		pending := drawPending(rt, first)
		budgets := drawBudgets(rt)
		moves := rapid.IntRange(0, 3).Draw(rt, "moves")
		limit, err := BoundReclaim(c, pending, budgets)
		if err != nil {
			rt.Fatal(err)
		}
		most := newWorld(t, c, budgets).mostTaken(t, pending, moves)
		if bound := limit.Within(moves); bound < most {
			rt.Fatalf("bound %d within %d moves (%+v); a plan takes %d", bound, moves, limit, most)
		} else if bound == most {
			tight++
		}
		w := newWorld(t, c, budgets)
		got, err := Reclaim(c, pending, ReclaimOptions{Moves: moves, MaxMoves: 3, Budgets: budgets})
		if err != nil {
			rt.Fatal(err)
		}
		made, taken := 0, int64(0)
		for _, r := range got {
			for _, m := range r.Plan.Moves {
				if to, holds := w.destination(t, m.Pod); to != m.To || !slices.Equal(holds, m.Holds) || m.From != w.rows[m.Pod] || !w.c.Pods[m.Pod].Movable {
					rt.Fatalf("reclaiming %d, move %+v: the pipeline puts the pod on %d, devices %v", r.Task, m, to, holds)
				}
				w = w.moveTo(t, m.Pod, m.To, m.Holds)
				made++
			}
			task := pending[r.Task]
			if row := w.fits(t, task); row != r.Plan.Row || r.Gain != task.Devices.Total() {
				rt.Fatalf("reclaimed %+v: the task goes to %d", r, row)
			}
			w = w.place(t, task, r.Plan.Row)
			taken += r.Gain
		}
		if made > moves {
			rt.Fatalf("%d moves, at most %d", made, moves)
		}
		for g, n := range budgets {
			if w.spent[g] > n {
				rt.Fatalf("group %s moved %d, budget %d", g, w.spent[g], n)
			}
		}
		if taken > most {
			rt.Fatalf("reclaimed %d; the most any plan takes is %d", taken, most)
		}
		if taken > 0 {
			placedSome++
		}
		if len(c.Pods) != len(w.rows)+len(got) {
			rt.Fatalf("%d pods after placing %d of %d", len(c.Pods), len(got), len(w.rows))
		}
	})
	t.Logf("%d cases took devices back; the bound was the most a plan takes in %d", placedSome, tight)
}

// The bound worked by hand. Two nodes of two GPUs: node-0 holds a 0.75
// share on GPU 0 (0.25 free) and a 0.5 share on GPU 1 (0.5 free); node-1
// holds a 0.75 share on each (0.25 and 0.25), the second unmovable. On
// the grid of 0.25:
//   - Pending a 0.5 share: u(f) = 0, 0, 0.5, 0.5, 1 for f = 0 … 1, so U now
//     is u(.25)+u(.5)+u(.25)+u(.25) = 0.5. For e = 0.75 the differences
//     u(f+e) − u(f) are 0.5 (f = 0) and 1 (f = 0.25): δ = 0.5, the 0.75 pod
//     leaving 0.25 free for a GPU with 0.75 free; for e = 0.5 they are all
//     0.5: δ = 0. The two movable 0.75 pods may add 0.5 each.
//   - A 0.25 share pending as well: u(f) = f, U = 1.25, every δ 0.
//   - A whole GPU pending alone: u is 0 but at 1, U = 0, δ(0.75) = δ(0.5)
//     = 1: each of the three movable pods may add a GPU.
func TestBoundReclaimWorked(t *testing.T) {
	schema := gpuSchema(t)
	table := resource.NewTable(schema, 2)
	devices, err := resource.NewDevices("nvidia.com/gpu", 1000)
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Table: table, Devices: devices}
	for i := range 2 {
		if _, err := table.Add(fmt.Sprint("node-", i), resource.Vector{16000, 64 << 30, 2000}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := devices.AddNode(2); err != nil {
			t.Fatal(err)
		}
	}
	share := func(each int64) *scoring.Task {
		return &scoring.Task{Name: fmt.Sprint(each), Requests: resource.Vector{1000, 1 << 30, each}, Devices: resource.DeviceRequest{Count: 1, Each: each}}
	}
	for _, p := range []Pod{{Task: share(750), Row: 0, Holds: []int{0}}, {Task: share(500), Row: 0, Holds: []int{1}}, {Task: share(750), Row: 1, Holds: []int{0}}, {Task: share(750), Row: 1, Holds: []int{1}}} {
		p.Movable = p.Row == 0 || p.Holds[0] == 0
		if err := devices.Take(p.Row, p.Holds[0], p.Task.Devices.Each); err != nil {
			t.Fatal(err)
		}
		c.Pods = append(c.Pods, p)
	}
	whole := &scoring.Task{Name: "whole", Requests: resource.Vector{1000, 1 << 30, 1000}, Devices: resource.DeviceRequest{Count: 1, Each: 1000}}
	for _, tc := range []struct {
		pending []*scoring.Task
		want    string
	}{
		{[]*scoring.Task{share(500)}, "500 [500 500] 1000 1500"},
		{[]*scoring.Task{share(500), share(250)}, "1250 [] 1250 1250"},
		{[]*scoring.Task{whole}, "0 [1000 1000 1000] 1000 3000"},
	} {
		l, err := BoundReclaim(c, tc.pending, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(l.Now, l.Gains, l.Within(1), l.Within(5)); got != tc.want {
			t.Errorf("pending %v: %s, want %s", tc.pending[0].Name, got, tc.want)
		}
	}
	// A budget of one for the group of node-0's pods keeps one of them.
	c.Pods[0].Group, c.Pods[1].Group = "web", "web"
	if l, err := BoundReclaim(c, []*scoring.Task{whole}, map[string]int{"web": 1}); err != nil || fmt.Sprint(l.Gains) != "[1000 1000]" {
		t.Errorf("with a budget: %+v (%v)", l, err)
	}
	if _, err := BoundReclaim(&Cluster{Table: table}, nil, nil); err == nil {
		t.Error("no device view: no error")
	}
}

// Bad options and tasks are errors, not panics.
func TestReclaimErrors(t *testing.T) {
	c := cpuCluster(t, 8, 8)
	for name, call := range map[string]func() error{
		"nil task":       func() error { _, err := Reclaim(c, []*scoring.Task{nil}, ReclaimOptions{}); return err },
		"negative moves": func() error { _, err := Reclaim(c, nil, ReclaimOptions{Moves: -1}); return err },
		"negative cap":   func() error { _, err := Reclaim(c, nil, ReclaimOptions{MaxStates: -1}); return err },
		"nil cluster":    func() error { _, err := Reclaim(nil, []*scoring.Task{cpu(1)}, ReclaimOptions{}); return err },
		"bound nil task": func() error { _, err := BoundReclaim(c, []*scoring.Task{nil}, nil); return err },
		"bound share over a device": func() error {
			_, err := BoundReclaim(c, []*scoring.Task{{Name: "big", Requests: resource.Vector{0, 0, 2000}, Devices: resource.DeviceRequest{Count: 1, Each: 2000}}}, nil)
			return err
		},
	} {
		if err := call(); err == nil || err.Error()[:8] != "defrag: " {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The clusters of TestMakeRoomWorked and two 6-core tasks: two full
	// nodes let neither in; with a third node of 5 cores, node-0's 4-core
	// pod moves there and the first task goes to node-0; the second has no
	// plan within the move left.
	got, err := Reclaim(c, []*scoring.Task{cpu(6), cpu(6)}, ReclaimOptions{Moves: 2})
	if err != nil || len(got) != 0 {
		t.Errorf("two full nodes: %+v (%v)", got, err)
	}
	c = cpuCluster(t, 8, 8, 5)
	got, err = Reclaim(c, []*scoring.Task{cpu(6), cpu(6)}, ReclaimOptions{Moves: 2})
	if err != nil || len(got) != 1 || got[0].Task != 0 || got[0].Plan.Row != 0 || len(got[0].Plan.Moves) != 1 || len(c.Pods) != 5 {
		t.Errorf("with a third node: %+v (%v)", got, err)
	}
}

// GiveBack with pending tasks (those that fit nowhere now): replayed on
// the reference, each step's move goes where the pipeline puts the pod,
// and its Takes is what the waiting tasks take placed then, in order, each
// where the pipeline puts it; every round ends with the first of its
// steps that takes the most, whose Placed are those tasks, placed there
// (the moves after it were taken back); the cluster ends as the
// reference with them among its pods.
func TestGiveBackLetsPendingIn(t *testing.T) {
	schema := gpuSchema(t)
	useful, rounds := 0, 0
	rapid.Check(t, func(rt *rapid.T) {
		c, first := drawCluster(rt, schema)
		w := newWorld(t, c, nil)
		var pending []*scoring.Task
		for _, task := range drawPending(rt, first) {
			if w.fits(t, task) < 0 {
				pending = append(pending, task)
			}
		}
		pods := len(c.Pods)
		moves := rapid.IntRange(0, 4).Draw(rt, "moves")
		got, err := GiveBack(c, func(row int) float64 { return spread(c.Devices.Free(row), freeCPU(c.Table, row)) },
			GiveBackOptions{Moves: moves, Candidates: c.Table.Len(), Pending: pending, Patience: rapid.IntRange(0, 2).Draw(rt, "patience")})
		if err != nil {
			rt.Fatal(err)
		}
		if len(got) > moves {
			rt.Fatalf("%d steps, cap %d", len(got), moves)
		}
		// admitted places the waiting tasks that fit, in order, on a copy.
		admitted := func(w *world, waiting []int) (*world, []int, int64) {
			var in []int
			var takes int64
			for _, i := range waiting {
				if row := w.fits(t, pending[i]); row >= 0 {
					w = w.place(t, pending[i], row)
					in, takes = append(in, i), takes+pending[i].Devices.Total()
				}
			}
			return w, in, takes
		}
		waiting := make([]int, len(pending))
		for i := range waiting {
			waiting[i] = i
		}
		var placed []int
		var round int64 // the most a step of this round took before its last
		for n, s := range got {
			if to, holds := w.destination(t, s.Pod); to != s.To || !slices.Equal(holds, s.Holds) || s.From != w.rows[s.Pod] {
				rt.Fatalf("step %d %+v: the pipeline puts the pod on %d, devices %v", n, s, to, holds)
			}
			w = w.moveTo(t, s.Pod, s.To, s.Holds)
			if len(pending) == 0 {
				continue
			}
			after, in, takes := admitted(w, waiting)
			if takes != s.Takes {
				rt.Fatalf("step %d: takes %d, the reference %d", n, s.Takes, takes)
			}
			if s.Placed == nil {
				round = max(round, takes)
				continue
			}
			if !slices.Equal(in, s.Placed) || takes <= round {
				rt.Fatalf("step %d ends a round: places %v (the reference %v), takes %d, an earlier step %d", n, s.Placed, in, takes, round)
			}
			w, round, placed = after, 0, append(placed, in...)
			waiting = slices.DeleteFunc(waiting, func(i int) bool { return slices.Contains(in, i) })
			rounds++
		}
		if len(pending) > 0 && len(got) > 0 {
			if got[len(got)-1].Placed == nil {
				rt.Fatalf("the last step places nothing: %+v", got)
			}
			useful++
		}
		if len(c.Pods) != pods+len(placed) {
			rt.Fatalf("%d pods, %d before and %d placed", len(c.Pods), pods, len(placed))
		}
		for n, i := range placed {
			if c.Pods[pods+n].Task != pending[i] {
				rt.Fatalf("pod %d is %s, placed %s", pods+n, c.Pods[pods+n].Task.Name, pending[i].Name)
			}
		}
		for i := range c.Table.Len() {
			if !slices.Equal(c.Table.Used(i), w.table.Used(i)) || !slices.Equal(c.Devices.Free(i), w.free[i]) {
				rt.Fatalf("row %d: %v %v, the reference %v %v", i, c.Table.Used(i), c.Devices.Free(i), w.table.Used(i), w.free[i])
			}
		}
	})
	t.Logf("%d rounds placed tasks", rounds)
	t.Logf("%d cases let a pending task in", useful)
	c := cpuCluster(t, 8, 8)
	if _, err := GiveBack(c, func(int) float64 { return 0 }, GiveBackOptions{Moves: 1, Pending: []*scoring.Task{cpu(1)}}); err == nil {
		t.Error("a pending task that fits with no move: no error")
	}
}
