package defrag

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// carryCluster is a copy of the cluster with a table, device view and
// pipeline of its own, to carry a round's plan out on, as a host does.
func carryCluster(t testing.TB, c *Cluster) *Cluster {
	devices, err := resource.NewDevices(c.Devices.Name(), c.Devices.PerDevice())
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Devices.Len() {
		free := c.Devices.Free(i)
		if _, err := devices.AddNode(len(free)); err != nil {
			t.Fatal(err)
		}
		if err := devices.SetFree(i, free); err != nil {
			t.Fatal(err)
		}
	}
	table := copyOf(t, c.Table)
	return &Cluster{Pipeline: pipeline(t, table.Schema(), devices), Table: table, Devices: devices, Pods: slices.Clone(c.Pods)}
}

// carryOut makes a round's moves and placements on the cluster from the
// plan alone, in its order: each move as Apply makes it, each placed task
// bound on its row to the devices the plan gives it.
func carryOut(t *rapid.T, c *Cluster, pending []*scoring.Task, plan *RoundPlan) {
	bind := func(p RoundPlaced) {
		task := pending[p.Task]
		if p.Pod != len(c.Pods) {
			t.Fatalf("placed %+v is pod %d; the cluster has %d", p, p.Pod, len(c.Pods))
		}
		if err := c.Table.AddUsed(p.Row, task.Requests, task.NonZeroRequests, false); err != nil {
			t.Fatal(err)
		}
		for _, j := range p.Holds {
			if err := c.Devices.Take(p.Row, j, task.Devices.Each); err != nil {
				t.Fatalf("placed %+v: %v", p, err)
			}
		}
		c.Pods = append(c.Pods, Pod{Task: task, Row: p.Row, Holds: p.Holds})
	}
	for _, p := range plan.Fit {
		bind(p)
	}
	for n, step := range plan.Steps {
		if err := Apply(c, Plan{Moves: []Move{step.Move}}); err != nil {
			t.Fatalf("move %d %+v: %v", n, step.Move, err)
		}
		for _, p := range step.LetsIn {
			bind(p)
		}
	}
}

// placedAfter is a plan's placed tasks in order, and for each how many of
// the plan's moves were made before it.
func placedAfter(plan *RoundPlan) ([]RoundPlaced, []int) {
	placed := slices.Clone(plan.Fit)
	after := make([]int, len(placed))
	for n, step := range plan.Steps {
		for _, p := range step.LetsIn {
			placed, after = append(placed, p), append(after, n+1)
		}
	}
	return placed, after
}

// A make-room round, on small clusters with budgets, against the
// exhaustive reference: for each of the first Tasks pending tasks in
// order, while moves are left, the task is placed exactly when some plan
// of at most PerTask and the moves left makes room for it, after the
// fewest moves any plan needs, each move where the pipeline puts its pod,
// then the task where the pipeline puts it; the round never makes more
// than its moves nor overspends a budget. Either mode's plan, carried out
// from the record alone on a copy of the cluster as it was, leaves the
// copy as the round left the cluster.
func TestPlanRound(t *testing.T) {
	schema := gpuSchema(t)
	placedSome, passedOver, giveBacks, gangsPlaced := 0, 0, 0, 0
	rapid.Check(t, func(rt *rapid.T) {
		c, first := drawClusterFor(rt, schema, true)
		pending := drawPending(rt, first)
		for _, task := range pending { // some in gangs
			task.Job = rapid.SampledFrom([]string{"", "", "a", "b"}).Draw(rt, "job")
		}
		if rapid.Bool().Draw(rt, "all in web") { // so that budgets bind across the round's plans
			for i := range c.Pods {
				c.Pods[i].Group = "web"
			}
		}
		round := Round{Mode: RoundMakeRoom, Moves: rapid.IntRange(0, 4).Draw(rt, "moves"), PerTask: rapid.IntRange(0, 2).Draw(rt, "per task"),
			Tasks: rapid.IntRange(0, 3).Draw(rt, "tasks"), Budgets: drawBudgets(rt)}
		if rapid.Bool().Draw(rt, "give back") {
			round.Mode = RoundGiveBack
			round.Cost = func(row int) float64 { return spread(c.Devices.Free(row), freeCPU(c.Table, row)) }
			pending = slices.DeleteFunc(pending, func(task *scoring.Task) bool { return newWorld(t, c, nil).fits(t, task) >= 0 })
		}
		before := *c
		before.Pods = slices.Clone(c.Pods)
		w := newWorld(t, &before, round.Budgets)
		carry := carryCluster(t, c)
		plan, err := PlanRound(c, pending, round)
		if err != nil {
			rt.Fatal(err)
		}
		carryOut(rt, carry, pending, plan)
		if got, want := state(carry), state(c); got != want {
			rt.Fatalf("carried out from the plan:\n%s\nthe round left:\n%s", got, want)
		}
		for i, p := range c.Pods {
			if q := carry.Pods[i]; p.Row != q.Row || !slices.Equal(p.Holds, q.Holds) {
				rt.Fatalf("pod %d: the round left it on %d %v, the plan carried out on %d %v", i, p.Row, p.Holds, q.Row, q.Holds)
			}
		}
		moves := plan.Moves()
		placed, afters := placedAfter(plan)
		if len(moves) > round.Moves {
			rt.Fatalf("%d moves, at most %d", len(moves), round.Moves)
		}
		// The gangs: each job's tasks, in order, at its first task; a job
		// with tasks beyond the round's Tasks is none of the round's.
		gangs := map[string][]int{}
		for n, task := range pending {
			if task.Job != "" {
				gangs[task.Job] = append(gangs[task.Job], n)
			}
		}
		within := len(pending)
		if round.Tasks > 0 {
			within = min(within, round.Tasks)
		}
		gangOf := func(n int) []int {
			job := pending[n].Job
			if job == "" {
				return []int{n}
			}
			if gangs[job][len(gangs[job])-1] >= within {
				return nil // cut
			}
			return gangs[job]
		}
		if round.Mode == RoundGiveBack {
			for _, p := range placed {
				if g := gangOf(p.Task); len(g) != 1 {
					rt.Fatalf("give-back placed task %d of gang %v", p.Task, g)
				}
			}
			giveBacks++
			return
		}
		made, next := 0, 0
		for n := range pending[:within] {
			if made >= round.Moves {
				break
			}
			gang := gangOf(n)
			if len(gang) == 0 || gang[0] != n {
				continue // cut, or planned at its gang's first task
			}
			tasks := make([]*scoring.Task, len(gang))
			for i, m := range gang {
				tasks[i] = pending[m]
			}
			w.moved = make([]bool, len(w.moved)) // each plan moves a pod at most once
			fewest := w.fewest(t, tasks, min(cmp.Or(round.PerTask, DefaultMaxMoves), round.Moves-made))
			if fewest < 0 {
				if next < len(placed) && slices.Contains(gang, placed[next].Task) {
					rt.Fatalf("gang %v: %+v placed; no plan within the moves makes room for it", gang, placed[next])
				}
				passedOver++
				continue
			}
			if next+len(gang) > len(placed) {
				rt.Fatalf("gang %v not placed; %d moves make room for it (%d made of %d)", gang, fewest, made, round.Moves)
			}
			after := afters[next]
			if after-made != fewest {
				rt.Fatalf("gang %v placed after %d moves; the fewest are %d", gang, after-made, fewest)
			}
			for _, m := range moves[made:after] {
				if to, holds := w.destination(t, m.Pod); to != m.To || !slices.Equal(holds, m.Holds) || m.From != w.rows[m.Pod] || !before.Pods[m.Pod].Movable {
					rt.Fatalf("gang %v, move %+v: the pipeline puts the pod on %d, devices %v", gang, m, to, holds)
				}
				w = w.moveTo(t, m.Pod, m.To, m.Holds)
			}
			for _, m := range gang {
				p := placed[next]
				if p.Task != m || afters[next] != after {
					rt.Fatalf("gang %v: placed %+v, want task %d after %d moves", gang, p, m, after)
				}
				if row := w.fits(t, pending[m]); row != p.Row {
					rt.Fatalf("task %d placed on %d; the pipeline puts it on %d", m, p.Row, row)
				}
				w = w.place(t, pending[m], p.Row)
				next++
				placedSome++
			}
			if len(gang) > 1 {
				gangsPlaced++
			}
			made = after
		}
		if next != len(placed) || made != len(moves) {
			rt.Fatalf("the reference places %d tasks after %d moves; the round %d after %d", next, made, len(placed), len(moves))
		}
		for g, n := range round.Budgets {
			if w.spent[g] > n {
				rt.Fatalf("group %s moved %d, budget %d", g, w.spent[g], n)
			}
		}
	})
	t.Logf("make-room rounds placed %d tasks (%d gangs of more than one) and passed over %d; %d give-back rounds", placedSome, gangsPlaced, passedOver, giveBacks)
}

// A round's settings are checked before it runs, and so are its tasks.
func TestPlanRoundErrors(t *testing.T) {
	c := cpuCluster(t, 4, 4)
	for _, r := range []Round{
		{Mode: "spread", Moves: 1},
		{Mode: RoundMakeRoom, Moves: -1},
		{Mode: RoundMakeRoom, Moves: 1, ExactStates: -2},
		{Mode: RoundMakeRoom, Moves: 1, Timeout: -time.Second},
		{Mode: RoundGiveBack, Moves: 1},
	} {
		if _, err := PlanRound(c, []*scoring.Task{cpu(1)}, r); err == nil {
			t.Errorf("%+v: no error", r)
		}
	}
	if _, err := PlanRound(c, []*scoring.Task{nil}, Round{Mode: RoundMakeRoom, Moves: 1}); err == nil {
		t.Error("a nil task: no error")
	}
	if _, err := PlanRound(nil, nil, Round{Mode: RoundMakeRoom, Moves: 1}); err == nil {
		t.Error("a nil cluster: no error")
	}
}

// The allowance worked by hand: 1% of 1000 running pods an hour is 10
// moves an hour. Ten minutes earn 1.67 (1 whole move); an hour more is
// capped at the hour's 10; spending 4 leaves 6; 30 minutes with 500 pods
// running earn 2.5, capped at that hour's 5; a clock that went back earns
// nothing.
func TestAllowanceByHand(t *testing.T) {
	a := &Allowance{PerHour: 0.01}
	for _, step := range []struct {
		running int
		elapsed time.Duration
		spend   int
		want    int
	}{
		{1000, 10 * time.Minute, 0, 1},
		{1000, time.Hour, 4, 10},
		{1000, 0, 0, 6},
		{500, 30 * time.Minute, 0, 5},
		{500, -time.Hour, 0, 5},
	} {
		if got := a.Accrue(step.running, step.elapsed); got != step.want {
			t.Fatalf("%d running, %s: %d moves, want %d", step.running, step.elapsed, got, step.want)
		}
		a.Spend(step.spend)
	}
	for _, bad := range []float64{-0.1, 1.5} {
		if err := (&Allowance{PerHour: bad}).Check(); err == nil {
			t.Errorf("PerHour %v: no error", bad)
		}
	}
}
