package defrag

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
)

const gpuConfig = `
plugins:
- name: NodeResourcesFit
  args: {scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]}}
- name: resource-strategy-fit
  args: {resources: {nvidia.com/gpu: {type: MostAllocated, weight: 2}}}
`

// pipeline is a scheduler's over a device view: NodeResourcesFit and
// DeviceShare, GPUs packed, cpu spread.
func pipeline(t interface{ Fatal(...any) }, schema *resource.Schema, devices *resource.Devices) *scoring.Pipeline {
	cfg, err := config.Load([]byte(gpuConfig), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pipe, err := cfg.BuildFor(schema, config.Host{Devices: devices})
	if err != nil {
		t.Fatal(err)
	}
	return pipe
}

func gpuSchema(t testing.TB) *resource.Schema {
	schema, err := resource.NewSchema("cpu", "memory", "nvidia.com/gpu")
	if err != nil {
		t.Fatal(err)
	}
	return schema
}

// loosest is a device choice other than the tightest: the fitting device
// with the most free (the lowest index among equals).
func loosest(d *resource.Devices) func(*scoring.Task, int) int {
	return func(task *scoring.Task, row int) int {
		best := -1
		for j, f := range d.Free(row) {
			if f >= task.Devices.Each && (best < 0 || f > d.Free(row)[best]) {
				best = j
			}
		}
		return best
	}
}

// drawCluster draws 2 to 6 nodes of 0, 4 or 8 GPUs, up to 12 pods placed
// where they fit (cpu, whole GPUs or a share of one), some unmovable, in
// groups "", "web" and "db", and a pending task that mostly fits nowhere
// as the pods leave the nodes.
func drawCluster(t *rapid.T, schema *resource.Schema) (*Cluster, *scoring.Task) {
	return drawClusterFor(t, schema, false)
}

// drawClusterFor is drawCluster, crowded when asked: more pods, and a
// pending task that asks for more cpu than any node has free, or for
// whole GPUs, so that most draws need moves.
func drawClusterFor(t *rapid.T, schema *resource.Schema, crowded bool) (*Cluster, *scoring.Task) {
	nodes := rapid.IntRange(2, 6).Draw(t, "nodes")
	table := resource.NewTable(schema, nodes)
	devices, err := resource.NewDevices("nvidia.com/gpu", 1000)
	if err != nil {
		t.Fatal(err)
	}
	for i := range nodes {
		gpus := rapid.SampledFrom([]int{0, 4, 8}).Draw(t, "gpus")
		alloc := resource.Vector{int64(rapid.SampledFrom([]int{8, 16}).Draw(t, "cpu")) * 1000, 64 << 30, int64(gpus) * 1000}
		if _, err := table.Add(fmt.Sprint("node-", i), alloc, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := devices.AddNode(gpus); err != nil {
			t.Fatal(err)
		}
	}
	c := &Cluster{Pipeline: pipeline(t, schema, devices), Table: table, Devices: devices}
	if rapid.Bool().Draw(t, "loosest") {
		c.Device = loosest(devices)
	}
	task := func(label string) *scoring.Task {
		task := &scoring.Task{Name: label, Requests: resource.Vector{
			int64(rapid.IntRange(1, 6).Draw(t, label+" cpu")) * 1000, int64(rapid.IntRange(1, 16).Draw(t, label+" memory")) << 30, 0}}
		switch rapid.IntRange(0, 3).Draw(t, label+" gpu kind") {
		case 1:
			task.Devices = resource.DeviceRequest{Count: 1, Each: int64(rapid.SampledFrom([]int{250, 500, 750}).Draw(t, label+" share"))}
		case 2:
			task.Devices = resource.DeviceRequest{Count: rapid.IntRange(1, 2).Draw(t, label+" whole gpus"), Each: 1000}
		}
		task.Requests[2] = task.Devices.Total()
		return task
	}
	fewest := 0
	if crowded {
		fewest = nodes
	}
	for i := range rapid.IntRange(fewest, 12).Draw(t, "pods") {
		p := task(fmt.Sprint("pod-", i))
		var rows []int
		for row := range nodes {
			if fitsRow(table, devices, row, p) {
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
		holds, err := devices.AllocateInto(row, p.Devices, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p.Devices.Count == 0 {
			holds = nil
		}
		c.Pods = append(c.Pods, Pod{Task: p, Row: row, Holds: holds, Movable: rapid.IntRange(0, 4).Draw(t, "movable") > 0,
			Group: rapid.SampledFrom([]string{"", "web", "db"}).Draw(t, "group"), Limits: drawLimits(t, row)})
	}
	pending := task("pending")
	var free, most int64
	for row := range nodes {
		free = max(free, table.Allocatable(row)[0]-table.Used(row)[0])
		most = max(most, table.Allocatable(row)[0])
	}
	least := 0
	if crowded {
		least = 1
	}
	switch rapid.IntRange(least, 2+1-least).Draw(t, "needs room") {
	case 1:
		if free < most {
			over := most
			if crowded { // a little over: room that a move or two can make
				over = min(most, free+3000)
			}
			pending.Requests[0] = rapid.Int64Range(free+1, over).Draw(t, "pending cpu over the free")
		}
	case 2:
		fewest, most := 1, 4
		if crowded { // a GPU or two more than any node has whole and free
			freeWhole, gpus := 0, 0
			for row := range nodes {
				free := devices.Free(row)
				gpus = max(gpus, len(free))
				freeWhole = max(freeWhole, len(slices.DeleteFunc(slices.Clone(free), func(f int64) bool { return f < 1000 })))
			}
			if freeWhole < gpus {
				fewest, most = freeWhole+1, min(gpus, freeWhole+2)
			}
		}
		pending.Devices = resource.DeviceRequest{Count: rapid.IntRange(fewest, most).Draw(t, "pending whole gpus"), Each: 1000}
		pending.Requests[2] = pending.Devices.Total()
	}
	return c, pending
}

func fitsRow(table *resource.Table, devices *resource.Devices, row int, task *scoring.Task) bool {
	alloc, used := table.Allocatable(row), table.Used(row)
	for r, q := range task.Requests {
		if q > 0 && used[r]+q > alloc[r] {
			return false
		}
	}
	return task.Devices.Count == 0 || devices.Fits(row, task.Devices)
}

// world is the reference's state: the cluster's table and device view,
// with the pods where the moves so far put them. It is written apart from
// the planner: every state is a fresh copy.
type world struct {
	c      *Cluster
	table  *resource.Table
	free   [][]int64 // each row's devices
	rows   []int
	holds  [][]int
	moved  []bool
	spent  map[string]int
	budget map[string]int
}

func newWorld(t testing.TB, c *Cluster, budgets map[string]int) *world {
	w := &world{c: c, table: copyOf(t, c.Table), spent: map[string]int{}, budget: budgets, moved: make([]bool, len(c.Pods))}
	for i := range c.Table.Len() {
		w.free = append(w.free, slices.Clone(c.Devices.Free(i)))
	}
	for _, p := range c.Pods {
		w.rows = append(w.rows, p.Row)
		w.holds = append(w.holds, slices.Clone(p.Holds))
	}
	return w
}

func (w *world) clone(t testing.TB) *world {
	n := &world{c: w.c, table: copyOf(t, w.table), rows: slices.Clone(w.rows), moved: slices.Clone(w.moved), spent: map[string]int{}, budget: w.budget}
	for _, f := range w.free {
		n.free = append(n.free, slices.Clone(f))
	}
	for _, h := range w.holds {
		n.holds = append(n.holds, slices.Clone(h))
	}
	for g, k := range w.spent {
		n.spent[g] = k
	}
	return n
}

func copyOf(t testing.TB, src *resource.Table) *resource.Table {
	c := resource.NewTable(src.Schema(), src.Len())
	for i := range src.Len() {
		if _, err := c.Add(src.Name(i), src.Allocatable(i), src.Used(i)); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// score scores the task on the world: the cluster's device view is set to
// the world's for the call and put back after.
func (w *world) score(t testing.TB, task *scoring.Task) *scoring.Batch {
	d := w.c.Devices
	saved := make([][]int64, d.Len())
	for i := range d.Len() {
		saved[i] = slices.Clone(d.Free(i))
		if err := d.SetFree(i, w.free[i]); err != nil {
			t.Fatal(err)
		}
	}
	batch := w.c.Pipeline.NewBatch(w.table.Len())
	if err := w.c.Pipeline.Score(task, w.table, batch); err != nil {
		t.Fatal(err)
	}
	for i := range d.Len() {
		if err := d.SetFree(i, saved[i]); err != nil {
			t.Fatal(err)
		}
	}
	return batch
}

// destination is where the pipeline puts pod i taken off its row: the best
// feasible other row, and the devices it takes there; -1 when none.
func (w *world) destination(t testing.TB, i int) (int, []int) {
	off := w.clone(t)
	p := w.c.Pods[i]
	if err := off.table.AddUsed(w.rows[i], p.Task.Requests, nil, true); err != nil {
		t.Fatal(err)
	}
	for _, j := range w.holds[i] {
		off.free[w.rows[i]][j] += p.Task.Devices.Each
	}
	batch := off.score(t, p.Task)
	for _, row := range batch.Top(off.table.Len(), nil) {
		if row != w.rows[i] {
			return row, off.take(t, row, p.Task)
		}
	}
	return -1, nil
}

// take is the devices a task takes on a row as the scheduler chooses them
// (the world is not changed).
func (w *world) take(t testing.TB, row int, task *scoring.Task) []int {
	r := task.Devices
	if r.Count == 0 {
		return nil
	}
	free := slices.Clone(w.free[row])
	if r.Count == 1 && r.Each < 1000 {
		if w.c.Device != nil {
			// The planner's chooser reads the cluster's view: set it.
			d := w.c.Devices
			saved := slices.Clone(d.Free(row))
			if err := d.SetFree(row, free); err != nil {
				t.Fatal(err)
			}
			j := w.c.Device(task, row)
			if err := d.SetFree(row, saved); err != nil {
				t.Fatal(err)
			}
			return []int{j}
		}
		best := -1
		for j, f := range free {
			if f >= r.Each && (best < 0 || f < free[best]) {
				best = j
			}
		}
		return []int{best}
	}
	// Whole devices: the tightest that fit, lower index first.
	order := make([]int, 0, len(free))
	for j, f := range free {
		if f >= r.Each {
			order = append(order, j)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(free[a] - free[b]) })
	return order[:r.Count]
}

// moveTo is the world after pod i moves to row, taking holds there.
func (w *world) moveTo(t testing.TB, i, row int, holds []int) *world {
	n := w.clone(t)
	p := w.c.Pods[i]
	if err := n.table.AddUsed(w.rows[i], p.Task.Requests, nil, true); err != nil {
		t.Fatal(err)
	}
	if err := n.table.AddUsed(row, p.Task.Requests, nil, false); err != nil {
		t.Fatal(err)
	}
	for _, j := range w.holds[i] {
		n.free[w.rows[i]][j] += p.Task.Devices.Each
	}
	for _, j := range holds {
		n.free[row][j] -= p.Task.Devices.Each
	}
	n.rows[i], n.holds[i], n.moved[i] = row, holds, true
	n.spent[p.Group]++
	for _, g := range p.Limits {
		n.spent[g]++
	}
	return n
}

func (w *world) fits(t testing.TB, task *scoring.Task) int {
	top := w.score(t, task).Top(1, nil)
	if len(top) == 0 {
		return -1
	}
	return top[0]
}

// gangRows is where the gang's tasks go, placed in order on a copy of the
// world; nil when one finds no node.
func (w *world) gangRows(t testing.TB, gang []*scoring.Task) []int {
	n := w.clone(t)
	var rows []int
	for _, task := range gang {
		row := n.fits(t, task)
		if row < 0 {
			return nil
		}
		if err := n.table.AddUsed(row, task.Requests, nil, false); err != nil {
			t.Fatal(err)
		}
		for _, j := range n.take(t, row, task) {
			n.free[row][j] -= task.Devices.Each
		}
		rows = append(rows, row)
	}
	return rows
}

// fewest is the fewest moves (at most max) after which the gang fits,
// over every sequence of distinct movable pods within the budgets; -1
// when none within max.
func (w *world) fewest(t testing.TB, gang []*scoring.Task, max int) int {
	for k := 0; k <= max; k++ {
		if w.within(t, gang, k) {
			return k
		}
	}
	return -1
}

func (w *world) within(t testing.TB, gang []*scoring.Task, k int) bool {
	if k == 0 {
		return w.gangRows(t, gang) != nil
	}
	for i, p := range w.c.Pods {
		if w.moved[i] || !p.Movable || !w.allowed(p, w.budget) {
			continue
		}
		row, holds := w.destination(t, i)
		if row >= 0 && w.moveTo(t, i, row, holds).within(t, gang, k-1) {
			return true
		}
	}
	return false
}

// state is the table's used amounts and the devices' free, to see that
// MakeRoom leaves them as they were.
func state(c *Cluster) string {
	var b strings.Builder
	for i := range c.Table.Len() {
		fmt.Fprint(&b, c.Table.Used(i), c.Table.NonZeroUsed(i), c.Devices.Free(i), ";")
	}
	return b.String()
}

// On small clusters (up to 6 nodes and 12 pods, GPUs whole and shared,
// some pods unmovable, two groups with budgets), MakeRoomGang's plan for a
// task or a gang of up to three has the true minimum of moves (the
// reference: every sequence of moves, every state a fresh copy) whenever
// it claims minimality, and with the default exhaustive search it always
// claims it; without a plan, no sequence within the cap makes room when it
// says it proved so. Applied move by move, each move goes where the
// pipeline puts the pod, on the devices the scheduler gives it, nothing
// unmovable moves, no budget is overspent, and the gang's tasks, placed in
// order, then go to the plan's rows. MakeRoomGang leaves the table and
// devices as they were. With the exhaustive search off, a plan that
// claims minimality is minimal too, and every bound is a true one.
func TestMakeRoomIsMinimal(t *testing.T) {
	schema := gpuSchema(t)
	withMoves, withoutMoves, none, directOnly, missed, longer, gangs, needMoves := 0, 0, 0, 0, 0, 0, 0, 0
	rapid.Check(t, func(rt *rapid.T) {
		c, task := drawClusterFor(rt, schema, true)
		gang := []*scoring.Task{task}
		members := []int{0, 0, 0, 1, 2} // most draws a task alone: a gang of three rarely fits
		for n := range rapid.SampledFrom(members).Draw(rt, "gang members after the first") {
			gang = append(gang, &scoring.Task{Name: fmt.Sprint("member-", n), Requests: slices.Clone(task.Requests), Devices: task.Devices})
		}
		if len(gang) > 1 {
			gangs++
		}
		budgets := drawBudgets(rt)
		if rapid.Bool().Draw(rt, "db budget") {
			budgets["db"] = rapid.IntRange(0, 1).Draw(rt, "db disruptions")
		}
		maxMoves := rapid.IntRange(1, 3).Draw(rt, "max moves")
		exact := rapid.SampledFrom([]int{0, -1}).Draw(rt, "exact states")
		before := state(c)
		plan, err := MakeRoomGang(c, gang, Options{MaxMoves: maxMoves, Budgets: budgets, ExactStates: exact})
		if err != nil {
			rt.Fatal(err)
		}
		if after := state(c); after != before {
			rt.Fatalf("MakeRoom changed the cluster:\n%s\n%s", before, after)
		}
		want := newWorld(t, c, budgets).fewest(t, gang, maxMoves)
		if want != 0 {
			needMoves++
		}
		if plan.Bound > want && want >= 0 {
			rt.Fatalf("bound %d; %d moves make room", plan.Bound, want)
		}
		if !plan.Found {
			none++
			if want >= 0 && exact == 0 {
				rt.Fatalf("no plan; %d moves make room", want)
			}
			if want >= 0 {
				missed++
			}
			return
		}
		if len(plan.Moves) > want {
			longer++
		}
		if len(plan.Moves) > 0 {
			withMoves++
		} else {
			withoutMoves++
		}
		if exact == 0 && !plan.Minimal {
			rt.Fatalf("an exhaustive search did not claim minimality: %+v", plan)
		}
		if exact != 0 && !plan.Minimal {
			directOnly++
		}
		if plan.Minimal && (len(plan.Moves) != want || plan.Bound != want) {
			rt.Fatalf("plan of %d moves claims minimality (bound %d); the fewest are %d", len(plan.Moves), plan.Bound, want)
		}
		w := newWorld(t, c, budgets)
		for _, m := range plan.Moves {
			p := c.Pods[m.Pod]
			if !p.Movable || m.From != w.rows[m.Pod] || w.moved[m.Pod] {
				rt.Fatalf("move %+v of pod %+v", m, p)
			}
			if to, holds := w.destination(t, m.Pod); to != m.To || !slices.Equal(holds, m.Holds) {
				rt.Fatalf("move %+v: the pipeline puts the pod on %d, devices %v", m, to, holds)
			}
			w = w.moveTo(t, m.Pod, m.To, m.Holds)
		}
		for g, n := range budgets {
			if w.spent[g] > n {
				rt.Fatalf("group %s moved %d, budget %d", g, w.spent[g], n)
			}
		}
		if rows := w.gangRows(t, gang); !slices.Equal(rows, plan.Rows) || plan.Row != plan.Rows[0] {
			rt.Fatalf("after the moves the gang goes to %v, the plan says %v (%d)", rows, plan.Rows, plan.Row)
		}
		// Apply makes the same moves on the cluster.
		if err := Apply(c, plan); err != nil {
			rt.Fatal(err)
		}
		for i := range c.Table.Len() {
			if !slices.Equal(c.Table.Used(i), w.table.Used(i)) || !slices.Equal(c.Devices.Free(i), w.free[i]) {
				rt.Fatalf("row %d after Apply: %v %v, the reference %v %v", i, c.Table.Used(i), c.Devices.Free(i), w.table.Used(i), w.free[i])
			}
		}
		for i, p := range c.Pods {
			if p.Row != w.rows[i] || !slices.Equal(p.Holds, w.holds[i]) {
				rt.Fatalf("pod %d after Apply: row %d holds %v, the reference %d %v", i, p.Row, p.Holds, w.rows[i], w.holds[i])
			}
		}
	})
	t.Logf("%d needed moves; %d gangs; %d plans with moves, %d without a plan, %d from the search off one node not claimed minimal; without the exhaustive search %d plans missed, %d longer than the fewest", needMoves, gangs, withMoves, none, directOnly, missed, longer)
	// The draws are crowded so that the interesting cases come often: a
	// test that rarely sees a task that needs moves checks little. About
	// 70% of the draws need moves (or cannot be made room for within the
	// moves allowed) and 14% find a plan with moves (over 100 runs: 5 to
	// 24 of 100); the floors are set where a run of 100 draws falls below
	// them about once in a thousand (a twelfth, the floor until
	// 2026-12-02, failed one run in ten).
	checks := withMoves + withoutMoves + none
	if needMoves*2 < checks || withMoves*25 < checks {
		t.Errorf("of %d draws %d needed moves and %d found a plan with moves; the generator should give at least a half and a twenty-fifth", checks, needMoves, withMoves)
	}
}

// cpuCluster is the worked example's: nodes of the given cores, and pods
// of 4 and 2 cores on node-0, 4 and 3 on node-1.
func cpuCluster(t *testing.T, cores ...int64) *Cluster {
	schema := gpuSchema(t)
	table := resource.NewTable(schema, len(cores))
	devices, err := resource.NewDevices("nvidia.com/gpu", 1000)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range cores {
		if _, err := table.Add(fmt.Sprint("node-", i), resource.Vector{n * 1000, 64 << 30, 0}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := devices.AddNode(0); err != nil {
			t.Fatal(err)
		}
	}
	c := &Cluster{Pipeline: pipeline(t, schema, devices), Table: table, Devices: devices,
		Pods: []Pod{{Task: cpu(4), Row: 0, Movable: true}, {Task: cpu(2), Row: 0, Movable: true}, {Task: cpu(4), Row: 1, Movable: true}, {Task: cpu(3), Row: 1, Movable: true}}}
	for _, p := range c.Pods {
		if err := table.AddUsed(p.Row, p.Task.Requests, nil, false); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func cpu(cores int64) *scoring.Task {
	return &scoring.Task{Name: fmt.Sprint(cores, " cores"), Requests: resource.Vector{cores * 1000, 1 << 30, 0}}
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
	c := cpuCluster(t, 8, 8, 0)
	plan, err := MakeRoom(c, cpu(6), Options{MaxMoves: 1})
	if err != nil || plan.Found || plan.Bound != 2 {
		t.Errorf("two full nodes: %+v (%v), want no plan within 1 move", plan, err)
	}
	c = cpuCluster(t, 8, 8, 5)
	plan, err = MakeRoom(c, cpu(6), Options{})
	want := []Move{{Pod: 0, From: 0, To: 2}}
	if err != nil || !plan.Found || !plan.Minimal || plan.Row != 0 || fmt.Sprint(plan.Moves) != fmt.Sprint(want) {
		t.Errorf("with a third node of 5 cores: %+v (%v), want %v then node-0", plan, err, want)
	}
	c.Pods[0].Movable = false
	plan, err = MakeRoom(c, cpu(6), Options{})
	if err != nil || plan.Found || plan.Bound != 3 {
		t.Errorf("the 4-core pod unmovable: %+v (%v), want no plan, 3 moves at least", plan, err)
	}
}

// chainCluster is the cluster of the chain tests below: node-0 (8 cores)
// runs P0 (3 cores, 8Gi) and P1 (2 cores, 40Gi), node-1 (8 cores) pods of
// the given cores (1Gi each), node-2 has 8 cores and 4Gi free; the task
// asks for 6 cores and 8Gi.
func chainCluster(t *testing.T, onNode1 ...int64) (*Cluster, *scoring.Task) {
	c := cpuCluster(t, 8, 8, 8)
	if err := c.Table.AddUsed(2, resource.Vector{0, 60 << 30, 0}, nil, false); err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Pods {
		if err := c.Table.AddUsed(p.Row, p.Task.Requests, nil, true); err != nil {
			t.Fatal(err)
		}
	}
	p0, p1 := cpu(3), cpu(2)
	p0.Requests[1], p1.Requests[1] = 8<<30, 40<<30
	c.Pods = []Pod{{Task: p0, Row: 0, Movable: true}, {Task: p1, Row: 0, Movable: true}}
	for _, cores := range onNode1 {
		c.Pods = append(c.Pods, Pod{Task: cpu(cores), Row: 1, Movable: true})
	}
	for _, p := range c.Pods {
		if err := c.Table.AddUsed(p.Row, p.Task.Requests, nil, false); err != nil {
			t.Fatal(err)
		}
	}
	task := cpu(6)
	task.Requests[1] = 8 << 30
	return c, task
}

// Plans that chain fewer moves come first. node-0 (8 cores) runs P0 (3
// cores, 8Gi) and P1 (2 cores, 40Gi), node-1 (8) P2, P3 and P4 (2 each);
// node-2 has 8 cores and only 4Gi. A task of 6 cores and 8Gi fits nowhere (node-0 has 3
// cores free, node-1 2, node-2 too little memory); no one move makes room.
// Two moves do, two ways:
//   - node-0 needs one pod to leave (P0), but P0 has nowhere to go: a
//     chain makes room for it on node-1 (P2 to node-2, P0 to node-1), and
//     the task goes to node-0;
//   - node-1 needs two (P2 and P3, each to node-2, spread there), and the
//     task goes to node-1.
//
// node-0 needs fewer moves and comes first, but the plan without a chain
// is the one found: at each number of moves, chained moves are tried
// fewest first.
func TestMakeRoomPrefersPlansWithoutChains(t *testing.T) {
	c, task := chainCluster(t, 2, 2, 2)
	plan, err := MakeRoom(c, task, Options{})
	want := []Move{{Pod: 2, From: 1, To: 2}, {Pod: 3, From: 1, To: 2}}
	if err != nil || !plan.Found || !plan.Minimal || plan.Row != 1 || fmt.Sprint(plan.Moves) != fmt.Sprint(want) {
		t.Errorf("%+v (%v), want %v then node-1", plan, err, want)
	}
}

// A plan without chains is seen before chains at fewer moves spend the
// search's states. The cluster is the one above, but node-1 runs six pods
// of one core: a plan without chains moves four of them (to node-2, the
// only node with room, four 1Gi pods in its 4Gi), one with a chain moves
// two (one of them to node-2, P0 to node-1). Uncapped, the search returns
// the two moves; capped at the fewest states that find a plan at all, the
// four, the cap having stopped the search of chains.
func TestMakeRoomKeepsAPlanWithoutChains(t *testing.T) {
	build := func() (*Cluster, *scoring.Task) { return chainCluster(t, 1, 1, 1, 1, 1, 1) }
	c, task := build()
	plan, err := MakeRoom(c, task, Options{MaxMoves: 4, ExactStates: -1})
	want := "[{6 1 2 []} {0 0 1 []}]"
	if err != nil || !plan.Found || plan.Stopped || plan.Row != 0 || fmt.Sprint(plan.Moves) != want {
		t.Fatalf("uncapped: %+v (%v), want %s then node-0", plan, err, want)
	}
	for states := 1; states < plan.States; states++ {
		c, task := build()
		capped, err := MakeRoom(c, task, Options{MaxMoves: 4, ExactStates: -1, MaxStates: states})
		if err != nil {
			t.Fatal(err)
		}
		if !capped.Found {
			continue
		}
		want := "[{2 1 2 []} {3 1 2 []} {4 1 2 []} {5 1 2 []}]"
		if !capped.Stopped || capped.Minimal || capped.Row != 1 || fmt.Sprint(capped.Moves) != want {
			t.Errorf("capped at %d states: %+v, want %s then node-1, stopped", states, capped, want)
		}
		return
	}
	t.Errorf("no cap below the uncapped search's %d states found a plan", plan.States)
}

// A worked plan on devices. node-0 has two GPUs, each half taken by a
// shared pod (A on GPU 0, B on GPU 1); node-1 has one GPU, half taken by
// C. A task asking for one whole GPU fits neither, though node-0 has a
// GPU's worth free in all (NodeResourcesFit passes it; DeviceShare does
// not). Each node needs one move at least (a half-GPU holder must leave).
// node-0 comes first (the lower row): A leaves it for the only GPU with
// half free elsewhere, node-1's, which it takes; GPU 0 of node-0 is then
// whole, and the task goes there. Minimal: one move, and no plan has none.
func TestMakeRoomWorkedOnDevices(t *testing.T) {
	schema := gpuSchema(t)
	table := resource.NewTable(schema, 2)
	devices, err := resource.NewDevices("nvidia.com/gpu", 1000)
	if err != nil {
		t.Fatal(err)
	}
	for i, gpus := range []int{2, 1} {
		if _, err := table.Add(fmt.Sprint("node-", i), resource.Vector{16000, 64 << 30, int64(gpus) * 1000}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := devices.AddNode(gpus); err != nil {
			t.Fatal(err)
		}
	}
	half := func(name string) *scoring.Task {
		return &scoring.Task{Name: name, Requests: resource.Vector{1000, 1 << 30, 500}, Devices: resource.DeviceRequest{Count: 1, Each: 500}}
	}
	c := &Cluster{Pipeline: pipeline(t, schema, devices), Table: table, Devices: devices,
		Pods: []Pod{{Task: half("A"), Row: 0, Holds: []int{0}, Movable: true}, {Task: half("B"), Row: 0, Holds: []int{1}, Movable: true}, {Task: half("C"), Row: 1, Holds: []int{0}, Movable: true}}}
	for _, p := range c.Pods {
		if err := table.AddUsed(p.Row, p.Task.Requests, nil, false); err != nil {
			t.Fatal(err)
		}
		if err := devices.Take(p.Row, p.Holds[0], 500); err != nil {
			t.Fatal(err)
		}
	}
	whole := &scoring.Task{Name: "whole", Requests: resource.Vector{1000, 1 << 30, 1000}, Devices: resource.DeviceRequest{Count: 1, Each: 1000}}
	plan, err := MakeRoom(c, whole, Options{})
	want := []Move{{Pod: 0, From: 0, To: 1, Holds: []int{0}}}
	if err != nil || !plan.Found || !plan.Minimal || plan.Bound != 1 || plan.Row != 0 || fmt.Sprint(plan.Moves) != fmt.Sprint(want) {
		t.Fatalf("%+v (%v), want %v then node-0", plan, err, want)
	}
	if err := Apply(c, plan); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(devices.Free(0), devices.Free(1), c.Pods[0].Row, c.Pods[0].Holds); got != "[1000 500] [0] 1 [0]" {
		t.Errorf("after the plan: %s", got)
	}
	// Two whole GPUs: node-0 must lose both A and B, which have nowhere
	// to go (node-1 is full now): no plan within 2 moves.
	two := &scoring.Task{Name: "two", Requests: resource.Vector{1000, 1 << 30, 2000}, Devices: resource.DeviceRequest{Count: 2, Each: 1000}}
	if plan, err := MakeRoom(c, two, Options{}); err != nil || plan.Found || plan.Bound != 3 {
		t.Errorf("two whole GPUs: %+v (%v), want none, 3 at least", plan, err)
	}
}

// Bad input is an error; a search stopped by its timeout says so (no
// minimality claimed, the bound it reached).
func TestMakeRoomErrorsAndTimeout(t *testing.T) {
	schema := gpuSchema(t)
	devices, err := resource.NewDevices("nvidia.com/gpu", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := devices.AddNode(2); err != nil {
		t.Fatal(err)
	}
	table := resource.NewTable(schema, 1)
	if _, err := table.Add("node-0", resource.Vector{8000, 64 << 30, 2000}, resource.Vector{8000, 0, 0}); err != nil {
		t.Fatal(err)
	}
	pipe := pipeline(t, schema, devices)
	task := &scoring.Task{Name: "t", Requests: resource.Vector{1000, 0, 0}}
	gpu := &scoring.Task{Name: "g", Requests: resource.Vector{0, 0, 1000}, Devices: resource.DeviceRequest{Count: 1, Each: 1000}}
	for name, c := range map[string]struct {
		c    *Cluster
		opts Options
		task *scoring.Task
	}{
		"nil task":           {c: &Cluster{Pipeline: pipe, Table: table, Devices: devices}},
		"nil cluster":        {task: task},
		"no device view":     {c: &Cluster{Pipeline: pipe, Table: table}, task: task},
		"negative MaxMoves":  {c: &Cluster{Pipeline: pipe, Table: table, Devices: devices}, task: task, opts: Options{MaxMoves: -1}},
		"ExactStates -2":     {c: &Cluster{Pipeline: pipe, Table: table, Devices: devices}, task: task, opts: Options{ExactStates: -2}},
		"row outside":        {c: &Cluster{Pipeline: pipe, Table: table, Devices: devices, Pods: []Pod{{Task: task, Row: 1}}}, task: task},
		"pod without task":   {c: &Cluster{Pipeline: pipe, Table: table, Devices: devices, Pods: []Pod{{Row: 0}}}, task: task},
		"holds without ask":  {c: &Cluster{Pipeline: pipe, Table: table, Devices: devices, Pods: []Pod{{Task: task, Holds: []int{0}}}}, task: task},
		"holds too few":      {c: &Cluster{Pipeline: pipe, Table: table, Devices: devices, Pods: []Pod{{Task: gpu}}}, task: task},
		"holds no such":      {c: &Cluster{Pipeline: pipe, Table: table, Devices: devices, Pods: []Pod{{Task: gpu, Holds: []int{2}}}}, task: task},
		"device view length": {c: &Cluster{Pipeline: pipe, Table: resource.NewTable(schema, 0), Devices: devices}, task: task},
	} {
		if _, err := MakeRoom(c.c, c.task, c.opts); err == nil || !strings.HasPrefix(err.Error(), "defrag: ") {
			t.Errorf("%s: %v", name, err)
		}
	}
	c := &Cluster{Pipeline: pipe, Table: table, Devices: devices}
	for i := range 12 {
		c.Pods = append(c.Pods, Pod{Task: &scoring.Task{Name: fmt.Sprint(i), Requests: resource.Vector{500, 0, 0}}, Row: 0, Movable: true})
	}
	plan, err := MakeRoom(c, task, Options{MaxMoves: 3, Timeout: time.Nanosecond})
	if err != nil || plan.Found || plan.Minimal || plan.Bound != 2 || !plan.Stopped {
		t.Errorf("stopped at once: %+v (%v)", plan, err)
	}
	plan, err = MakeRoom(c, task, Options{MaxMoves: 3, MaxStates: 5})
	if err != nil || plan.Found || plan.Minimal || !plan.Stopped || plan.States != 5 {
		t.Errorf("stopped after 5 states: %+v (%v)", plan, err)
	}
}

// spread is a cost: a node's GPUs neither whole nor full, less the square
// of its free cores (so that gathering free cores on fewer nodes gains).
// It is a whole number, summed exactly in any order.
func spread(free []int64, freeMilliCPU int64) float64 {
	n := 0.0
	for _, f := range free {
		if f > 0 && f < 1000 {
			n++
		}
	}
	cores := float64(freeMilliCPU / 1000)
	return n - cores*cores
}

func freeCPU(t *resource.Table, row int) int64 { return t.Allocatable(row)[0] - t.Used(row)[0] }

// GiveBack, looking at every node, makes at each step the move of the
// largest gain (the reference: every movable pod's move from the state
// before, every state a fresh copy), each gain is what the cost fell by,
// every move goes where the pipeline puts the pod, no budget is
// overspent, and it stops only at the cap or when no move gains.
func TestGiveBackTakesTheBestMove(t *testing.T) {
	schema := gpuSchema(t)
	steps := 0
	rapid.Check(t, func(rt *rapid.T) {
		c, _ := drawCluster(rt, schema)
		budgets := drawBudgets(rt)
		moves := rapid.IntRange(0, 4).Draw(rt, "moves")
		w := newWorld(t, c, budgets)
		got, err := GiveBack(c, func(row int) float64 { return spread(c.Devices.Free(row), freeCPU(c.Table, row)) }, GiveBackOptions{Moves: moves, Budgets: budgets, Candidates: c.Table.Len()})
		if err != nil {
			rt.Fatal(err)
		}
		if len(got) > moves {
			rt.Fatalf("%d moves, cap %d", len(got), moves)
		}
		total := func(w *world) float64 {
			sum := 0.0
			for row, f := range w.free {
				sum += spread(f, freeCPU(w.table, row))
			}
			return sum
		}
		for n := 0; n <= len(got); n++ {
			// The best gain from this state.
			best := 0.0
			for i, p := range c.Pods {
				if w.moved[i] || !p.Movable || !w.allowed(p, budgets) {
					continue
				}
				if row, holds := w.destination(t, i); row >= 0 {
					best = max(best, total(w)-total(w.moveTo(t, i, row, holds)))
				}
			}
			if n == len(got) {
				if n < moves && best > 0 {
					rt.Fatalf("stopped after %d moves; a move gains %v", n, best)
				}
				break
			}
			s := got[n]
			if to, holds := w.destination(t, s.Pod); to != s.To || !slices.Equal(holds, s.Holds) || s.From != w.rows[s.Pod] {
				rt.Fatalf("step %d %+v: the pipeline puts the pod on %d, devices %v", n, s, to, holds)
			}
			next := w.moveTo(t, s.Pod, s.To, s.Holds)
			if gain := total(w) - total(next); gain != s.Gain || gain != best || gain <= 0 {
				rt.Fatalf("step %d %+v: gain %v, the best %v", n, s, gain, best)
			}
			w = next
			steps++
		}
		for g, n := range budgets {
			if w.spent[g] > n {
				rt.Fatalf("group %s moved %d, budget %d", g, w.spent[g], n)
			}
		}
		for i := range c.Table.Len() {
			if !slices.Equal(c.Table.Used(i), w.table.Used(i)) || !slices.Equal(c.Devices.Free(i), w.free[i]) {
				rt.Fatalf("row %d: %v %v, the reference %v %v", i, c.Table.Used(i), c.Devices.Free(i), w.table.Used(i), w.free[i])
			}
		}
	})
	t.Logf("%d steps checked", steps)
}

// drawLimits draws the limits a pod's moves count against: none, its
// node's, or a namespace's.
func drawLimits(t *rapid.T, row int) []string {
	switch rapid.IntRange(0, 2).Draw(t, "limits") {
	case 1:
		return []string{fmt.Sprint("node/", row)}
	case 2:
		return []string{"namespace/train", fmt.Sprint("node/", row)}
	}
	return nil
}

// allowed reports whether the budgets let the pod move once more, after
// what the world's moves spent.
func (w *world) allowed(p Pod, budgets map[string]int) bool {
	for _, g := range append([]string{p.Group}, p.Limits...) {
		if left, limited := budgets[g]; limited && w.spent[g] >= left {
			return false
		}
	}
	return true
}

// drawBudgets draws the budgets of group web and of the limits
// (drawLimits): the namespace's, and nodes 0's and 1's.
func drawBudgets(t *rapid.T) map[string]int {
	return map[string]int{"web": rapid.IntRange(0, 2).Draw(t, "web budget"), "namespace/train": rapid.IntRange(0, 2).Draw(t, "namespace budget"),
		"node/0": rapid.IntRange(0, 1).Draw(t, "node 0 budget"), "node/1": rapid.IntRange(0, 1).Draw(t, "node 1 budget")}
}
