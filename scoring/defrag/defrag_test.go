package defrag

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
)

// pipeline is a scheduler's: NodeResourcesFit, and GPUs packed, cpu spread.
func pipeline(t testing.TB, schema *resource.Schema) *scoring.Pipeline {
	cfg, err := config.Load([]byte(`
plugins:
- name: NodeResourcesFit
  args: {scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]}}
- name: resource-strategy-fit
  args: {resources: {nvidia.com/gpu: {type: MostAllocated, weight: 2}}}
`), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pipe, err := cfg.Build(schema)
	if err != nil {
		t.Fatal(err)
	}
	return pipe
}

// cluster is a drawn cluster: nodes, pods placed where they fit, and a
// pending task.
type cluster struct {
	table *resource.Table
	pods  []Pod
	task  *scoring.Task
}

func drawCluster(t *rapid.T, schema *resource.Schema) cluster {
	nodes := rapid.IntRange(2, 6).Draw(t, "nodes")
	table := resource.NewTable(schema, nodes)
	for i := range nodes {
		alloc := resource.Vector{int64(rapid.SampledFrom([]int{8, 16}).Draw(t, "cpu")) * 1000, 64 << 30, int64(rapid.SampledFrom([]int{0, 4, 8}).Draw(t, "gpus")) * 1000}
		if _, err := table.Add(fmt.Sprint("node-", i), alloc, nil); err != nil {
			t.Fatal(err)
		}
	}
	task := func(label string) *scoring.Task {
		return &scoring.Task{Name: label, Requests: resource.Vector{
			int64(rapid.IntRange(1, 6).Draw(t, label+" cpu")) * 1000, int64(rapid.IntRange(1, 16).Draw(t, label+" memory")) << 30,
			int64(rapid.IntRange(0, 2).Draw(t, label+" gpus")) * 1000}}
	}
	c := cluster{table: table}
	for i := range rapid.IntRange(0, 12).Draw(t, "pods") {
		p := task(fmt.Sprint("pod-", i))
		var rows []int
		for row := range nodes {
			if fitsRow(table, row, p) {
				rows = append(rows, row)
			}
		}
		if len(rows) == 0 {
			continue
		}
		row := rapid.SampledFrom(rows).Draw(t, "row")
		if err := table.AddUsed(row, p.Requests, nil, false); err != nil {
			t.Fatal(err)
		}
		c.pods = append(c.pods, Pod{Task: p, Row: row, Movable: rapid.IntRange(0, 4).Draw(t, "movable") > 0,
			Group: rapid.SampledFrom([]string{"", "web", "db"}).Draw(t, "group")})
	}
	c.task = task("pending")
	// Mostly a task that fits no node as the pods leave them, though some
	// node could hold it: the cases that need moves.
	var free, most int64
	for row := range nodes {
		free = max(free, table.Allocatable(row)[0]-table.Used(row)[0])
		most = max(most, table.Allocatable(row)[0])
	}
	if free < most && rapid.IntRange(0, 3).Draw(t, "needs room") > 0 {
		c.task.Requests[0] = rapid.Int64Range(free+1, most).Draw(t, "pending cpu over the free")
	}
	return c
}

func fitsRow(table *resource.Table, row int, task *scoring.Task) bool {
	alloc, used := table.Allocatable(row), table.Used(row)
	for r, q := range task.Requests {
		if q > 0 && used[r]+q > alloc[r] {
			return false
		}
	}
	return true
}

// exhaustive is the fewest moves (at most max) after which the task fits,
// trying every sequence of distinct movable pods, each to the pipeline's
// best row other than its own then; -1 when none within max.
func exhaustive(t testing.TB, pipe *scoring.Pipeline, c cluster, budgets map[string]int, max int) int {
	for k := 0; k <= max; k++ {
		table, err := copyTable(c.table)
		if err != nil {
			t.Fatal(err)
		}
		if sequences(t, pipe, table, c, budgets, make([]bool, len(c.pods)), k) {
			return k
		}
	}
	return -1
}

func sequences(t testing.TB, pipe *scoring.Pipeline, table *resource.Table, c cluster, budgets map[string]int, moved []bool, k int) bool {
	batch := pipe.NewBatch(table.Len())
	if k == 0 {
		if err := pipe.Score(c.task, table, batch); err != nil {
			t.Fatal(err)
		}
		return len(batch.Top(1, nil)) > 0
	}
	for i, p := range c.pods {
		left, limited := budgets[p.Group]
		if moved[i] || !p.Movable || limited && left == 0 {
			continue
		}
		to := bestOther(t, pipe, table, p)
		if to < 0 {
			continue
		}
		next, err := copyTable(table)
		if err != nil {
			t.Fatal(err)
		}
		if err := next.AddUsed(p.Row, p.Task.Requests, nil, true); err != nil {
			t.Fatal(err)
		}
		if err := next.AddUsed(to, p.Task.Requests, nil, false); err != nil {
			t.Fatal(err)
		}
		moved[i] = true
		if limited {
			budgets[p.Group]--
		}
		found := sequences(t, pipe, next, c, budgets, moved, k-1)
		moved[i] = false
		if limited {
			budgets[p.Group]++
		}
		if found {
			return true
		}
	}
	return false
}

// bestOther is where the pipeline puts a pod taken off its row: its best
// feasible row other than that one, -1 when none.
func bestOther(t testing.TB, pipe *scoring.Pipeline, table *resource.Table, p Pod) int {
	off, err := copyTable(table)
	if err != nil {
		t.Fatal(err)
	}
	if err := off.AddUsed(p.Row, p.Task.Requests, nil, true); err != nil {
		t.Fatal(err)
	}
	batch := pipe.NewBatch(off.Len())
	if err := pipe.Score(p.Task, off, batch); err != nil {
		t.Fatal(err)
	}
	for _, row := range batch.Top(off.Len(), nil) {
		if row != p.Row {
			return row
		}
	}
	return -1
}

// On small clusters (up to 6 nodes and 12 pods, some not movable, two
// groups with budgets), MakeRoom's plan has the true minimum of moves
// (exhaustive search over the same moves) and claims minimality; applied
// move by move, each move goes where the pipeline puts the pod, nothing
// unmovable moves, no budget is overspent, and the task then fits on the
// plan's row. Without a plan, no sequence within the cap makes room.
func TestMakeRoomIsMinimal(t *testing.T) {
	schema, err := resource.NewSchema("cpu", "memory", "nvidia.com/gpu")
	if err != nil {
		t.Fatal(err)
	}
	pipe := pipeline(t, schema)
	withMoves, none := 0, 0
	rapid.Check(t, func(rt *rapid.T) {
		c := drawCluster(rt, schema)
		budgets := map[string]int{"web": rapid.IntRange(0, 2).Draw(rt, "web budget")}
		if rapid.Bool().Draw(rt, "db budget") {
			budgets["db"] = rapid.IntRange(0, 1).Draw(rt, "db disruptions")
		}
		maxMoves := rapid.IntRange(1, 3).Draw(rt, "max moves")
		plan, err := MakeRoom(pipe, c.table, c.pods, c.task, Options{MaxMoves: maxMoves, Budgets: budgets})
		if err != nil {
			rt.Fatal(err)
		}
		want := exhaustive(t, pipe, c, map[string]int{"web": budgets["web"], "db": budgets["db"]}, maxMoves)
		if _, ok := budgets["db"]; !ok {
			want = exhaustiveWithout(t, pipe, c, budgets, maxMoves)
		}
		if !plan.Found {
			none++
			if want >= 0 {
				rt.Fatalf("no plan; %d moves make room", want)
			}
			if plan.Bound != maxMoves+1 {
				rt.Fatalf("bound %d without a plan, want %d", plan.Bound, maxMoves+1)
			}
			return
		}
		if len(plan.Moves) > 0 {
			withMoves++
		}
		if len(plan.Moves) != want || !plan.Minimal || plan.Bound != want {
			rt.Fatalf("plan of %d moves (minimal %v, bound %d); the fewest are %d", len(plan.Moves), plan.Minimal, plan.Bound, want)
		}
		table, err := copyTable(c.table)
		if err != nil {
			rt.Fatal(err)
		}
		spent := map[string]int{}
		for _, m := range plan.Moves {
			p := c.pods[m.Pod]
			if !p.Movable || m.From != p.Row {
				rt.Fatalf("move %+v of pod %+v", m, p)
			}
			if to := bestOther(t, pipe, table, p); to != m.To {
				rt.Fatalf("move %+v: the pipeline puts the pod on %d", m, to)
			}
			spent[p.Group]++
			if err := table.AddUsed(m.From, p.Task.Requests, nil, true); err != nil {
				rt.Fatal(err)
			}
			if err := table.AddUsed(m.To, p.Task.Requests, nil, false); err != nil {
				rt.Fatal(err)
			}
		}
		for g, n := range budgets {
			if spent[g] > n {
				rt.Fatalf("group %s moved %d, budget %d", g, spent[g], n)
			}
		}
		placer, err := scoring.NewPlacer(pipe, table, scoring.PlacerOptions{})
		if err != nil {
			rt.Fatal(err)
		}
		if row, err := placer.Best(c.task); err != nil || row != plan.Row {
			rt.Fatalf("after the moves the task goes to %d (%v), the plan says %d", row, err, plan.Row)
		}
	})
	t.Logf("%d plans with moves, %d cases without a plan", withMoves, none)
}

// exhaustiveWithout is exhaustive with the budgets given (db unlimited).
func exhaustiveWithout(t testing.TB, pipe *scoring.Pipeline, c cluster, budgets map[string]int, max int) int {
	return exhaustive(t, pipe, c, map[string]int{"web": budgets["web"]}, max)
}

// A worked plan. node-0 (8 cores) runs pods of 4 and 2 cores, node-1 (8)
// pods of 4 and 3: a 6-core task fits neither (2 and 1 cores free).
//   - Without a third node, no one move makes room: a pod has nowhere to go
//     but the other node, which lacks the room (no plan; 2 moves at least).
//   - With node-2 of 5 cores, node-0's 4-core pod goes there (the
//     pipeline's only feasible node for it), node-0 then has 6 free: one
//     move, minimal, the task to node-0.
//   - With that pod unmovable, nothing within 2 moves frees 6 cores on a
//     node: node-0 keeps its 4 (at most 4 free), node-1 at most 5 (its
//     4-core pod to node-2; its 3-core pod then fits nowhere).
func TestMakeRoomWorked(t *testing.T) {
	schema, err := resource.NewSchema("cpu", "memory", "nvidia.com/gpu")
	if err != nil {
		t.Fatal(err)
	}
	pipe := pipeline(t, schema)
	cpu := func(cores int64) *scoring.Task {
		return &scoring.Task{Name: fmt.Sprint(cores, " cores"), Requests: resource.Vector{cores * 1000, 1 << 30, 0}}
	}
	build := func(third int64) (*resource.Table, []Pod) {
		table := resource.NewTable(schema, 3)
		for i, cores := range []int64{8, 8, third} {
			if _, err := table.Add(fmt.Sprint("node-", i), resource.Vector{cores * 1000, 64 << 30, 0}, nil); err != nil {
				t.Fatal(err)
			}
		}
		pods := []Pod{{Task: cpu(4), Row: 0, Movable: true}, {Task: cpu(2), Row: 0, Movable: true}, {Task: cpu(4), Row: 1, Movable: true}, {Task: cpu(3), Row: 1, Movable: true}}
		for _, p := range pods {
			if err := table.AddUsed(p.Row, p.Task.Requests, nil, false); err != nil {
				t.Fatal(err)
			}
		}
		return table, pods
	}
	table, pods := build(0)
	plan, err := MakeRoom(pipe, table, pods, cpu(6), Options{MaxMoves: 1})
	if err != nil || plan.Found || plan.Bound != 2 {
		t.Errorf("two full nodes: %+v (%v), want no plan within 1 move", plan, err)
	}
	table, pods = build(5)
	plan, err = MakeRoom(pipe, table, pods, cpu(6), Options{})
	want := []Move{{Pod: 0, From: 0, To: 2}}
	if err != nil || !plan.Found || !plan.Minimal || plan.Row != 0 || fmt.Sprint(plan.Moves) != fmt.Sprint(want) {
		t.Errorf("with a third node of 5 cores: %+v (%v), want %v then node-0", plan, err, want)
	}
	pods[0].Movable = false
	plan, err = MakeRoom(pipe, table, pods, cpu(6), Options{})
	if err != nil || plan.Found {
		t.Errorf("the 4-core pod unmovable: %+v (%v)", plan, err)
	}
}

// Bad input is an error; a search stopped by its timeout says so (no
// minimality claimed, the bound it reached).
func TestMakeRoomErrorsAndTimeout(t *testing.T) {
	schema, err := resource.NewSchema("cpu", "memory", "nvidia.com/gpu")
	if err != nil {
		t.Fatal(err)
	}
	pipe := pipeline(t, schema)
	table := resource.NewTable(schema, 1)
	if _, err := table.Add("node-0", resource.Vector{8000, 64 << 30, 0}, resource.Vector{8000, 0, 0}); err != nil {
		t.Fatal(err)
	}
	task := &scoring.Task{Name: "t", Requests: resource.Vector{1000, 0, 0}}
	for name, c := range map[string]struct {
		pods []Pod
		opts Options
		task *scoring.Task
	}{
		"nil task":          {task: nil},
		"negative MaxMoves": {task: task, opts: Options{MaxMoves: -1}},
		"row outside":       {task: task, pods: []Pod{{Task: task, Row: 1}}},
		"pod without task":  {task: task, pods: []Pod{{Row: 0}}},
	} {
		if _, err := MakeRoom(pipe, table, c.pods, c.task, c.opts); err == nil || !strings.HasPrefix(err.Error(), "defrag: ") {
			t.Errorf("%s: %v", name, err)
		}
	}
	devices, err := resource.NewDevices("nvidia.com/gpu", 1000)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load([]byte("plugins:\n- name: NodeResourcesFit\n"), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	withDevices, err := cfg.BuildFor(schema, config.Host{Devices: devices})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := MakeRoom(withDevices, table, nil, task, Options{}); err == nil || !strings.Contains(err.Error(), "DeviceShare") {
		t.Errorf("a pipeline with DeviceShare: %v", err)
	}
	var pods []Pod
	for i := range 12 {
		pods = append(pods, Pod{Task: &scoring.Task{Name: fmt.Sprint(i), Requests: resource.Vector{500, 0, 0}}, Row: 0, Movable: true})
	}
	plan, err := MakeRoom(pipe, table, pods, task, Options{MaxMoves: 3, Timeout: time.Nanosecond})
	if err != nil || plan.Found || plan.Minimal || plan.Bound != 0 {
		t.Errorf("stopped at once: %+v (%v)", plan, err)
	}
}
