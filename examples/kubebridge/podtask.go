package kubebridge

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/examples/kubebridge/dra"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/lifetime"
)

// PodTask is a pod as a host scores it with DRA: the task its requests
// make (NewTask) with what its claims take added, one task when that is
// the same on every node (Uniform), a task per distinct take otherwise.
// Its methods are safe for concurrent use.
type PodTask struct {
	// Task is the pod's task on a node where each of its claims' requests
	// takes its first alternative's count: on every node, when the demand
	// is uniform; otherwise what the pod asks for in the first place (a
	// host shows it, and counts the pod's class by it), and On says what it
	// takes on each node.
	Task   *scoring.Task
	demand dra.Demand
	// classes are the reading's device classes, which the demand's takes
	// are counted in.
	classes []dra.Class
	base    *scoring.Task
	schema  *resource.Schema
	view    string
	mu      sync.Mutex
	byTake  map[string]*scoring.Task
}

// NewPodTask turns a pod into a task as NewTask does, with what its DRA
// claims take as d says; d may be nil (no DRA). An error names the pod.
func NewPodTask(d *dra.Reading, schema *resource.Schema, pod *v1.Pod, opts scoring.TaskOptions) (*PodTask, error) {
	base, err := NewTask(schema, pod, opts)
	if err != nil {
		return nil, err
	}
	pt := &PodTask{Task: base, base: base, schema: schema, view: opts.Devices}
	if d == nil {
		return pt, nil
	}
	pt.classes = d.Classes()
	if pt.demand, err = d.DemandOf(pod); err != nil {
		return nil, err
	}
	if ext := d.ExtendedClasses(pod); len(ext) > 0 {
		// Its requests of these classes' extended resources are a claim's
		// (extendedClaim), which demand holds: the claim's take stands in
		// for them.
		base = withoutClasses(base, schema, d, ext, opts.Devices)
		pt.Task, pt.base = base, base
	}
	if !pt.demand.Pending() {
		return pt, nil
	}
	if pt.Task, err = pt.with(pt.demand.Nominal(), nil); err != nil {
		return nil, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	pt.byTake = map[string]*scoring.Task{}
	return pt, nil
}

// SetEnds sets when the pod is expected to end (scoring.Task.Ends), and
// whether that was learned (Task.EndsLearned, src.IsLearned), on its
// task and on every task On gives for it. Call it before On.
func (pt *PodTask) SetEnds(at float64, src lifetime.Source) {
	learned := src.IsLearned()
	pt.Task.Ends, pt.base.Ends = at, at
	pt.Task.EndsLearned, pt.base.EndsLearned = learned, learned
	pt.mu.Lock()
	defer pt.mu.Unlock()
	for _, t := range pt.byTake {
		t.Ends, t.EndsLearned = at, learned
	}
}

// BoundTo reports whether claims of the pod allocated already bind it to
// some nodes, and which (dra.Demand.Bound).
func (pt *PodTask) BoundTo() ([]string, bool) { return pt.demand.Bound() }

// Uniform reports whether Task stands for the pod on every node.
func (pt *PodTask) Uniform() bool { return pt.demand.Uniform() }

// OnlyDeviceShare reports whether a pipeline's filters are DeviceShare
// alone, or none: filters that pass every node for a task that asks for no
// devices (PodTask.FiltersNothing).
func OnlyDeviceShare(p *scoring.Pipeline) bool {
	return !slices.ContainsFunc(p.FilterNames(), func(name string) bool { return name != scoring.DeviceShare })
}

// FiltersNothing reports whether filters pass every node for the pod,
// whatever the nodes hold: they are DeviceShare alone or none
// (onlyDeviceShare, OnlyDeviceShare's answer for them), the pod asks for
// no devices, and its task is the same on every node (no claim whose take
// depends on the node, which may leave a node unable to satisfy it). A
// host need not ask the filters about each node then: kube-scheduler's
// PreFilter returns Skip, Volcano's predicate passes at once. Nodes
// changed by the host for a call (nominated pods added, a preemption's dry
// run) pass as well, as nothing of a node is read.
func (pt *PodTask) FiltersNothing(onlyDeviceShare bool) bool {
	return onlyDeviceShare && pt.Task.Devices.Count == 0 && pt.Uniform()
}

// On is the pod's task on a node, and whether the node can satisfy its
// claims (false: the node is infeasible for it, among them a node its
// claims allocated already do not bind it to, dra.Demand.Allows).
func (pt *PodTask) On(node string) (*scoring.Task, bool, error) {
	if !pt.demand.Allows(node) {
		return nil, false, nil // its claims allocated already bind it elsewhere
	}
	if pt.Uniform() || pt.byTake == nil { // byTake: nil where no claim is pending
		return pt.Task, true, nil
	}
	take, types, ok, err := pt.demand.Take(node)
	if err != nil {
		return nil, false, fmt.Errorf("pod task %s: %w", pt.base.Name, err)
	}
	if !ok {
		return nil, false, nil
	}
	var key strings.Builder
	for c, n := range take {
		key.WriteString(strconv.FormatInt(n, 10))
		if types[c] != "" {
			key.WriteString(" " + strconv.Quote(types[c]))
		}
		key.WriteByte(',')
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if t, ok := pt.byTake[key.String()]; ok {
		return t, true, nil
	}
	t, err := pt.with(take, types)
	if err != nil {
		return nil, false, fmt.Errorf("pod task %s: %w", pt.base.Name, err)
	}
	pt.byTake[key.String()] = t
	return t, true, nil
}

// Placed is the pod's task on the node it is placed on, as a learner
// counts it (FGD learning classes of MIG profiles): On's task there, or
// Task where On has none.
func (pt *PodTask) Placed(node string) *scoring.Task {
	if t, ok, err := pt.On(node); err == nil && ok {
		return t
	}
	return pt.Task
}

// withoutClasses is a task without what it asks of the classes'
// resources, in their slots and, for the view's class, in its devices.
func withoutClasses(task *scoring.Task, schema *resource.Schema, d *dra.Reading, classes []int, view string) *scoring.Task {
	t := *task
	t.Requests = slices.Clone(t.Requests)
	t.NonZeroRequests = slices.Clone(t.NonZeroRequests)
	t.KoordinatorRequests = slices.Clone(t.KoordinatorRequests)
	for _, c := range classes {
		name := d.Classes()[c].Resource
		if slot, ok := schema.Slot(name); ok {
			for _, v := range []resource.Vector{t.Requests, t.NonZeroRequests, t.KoordinatorRequests} {
				if v != nil {
					v[slot] = 0
				}
			}
		}
		if name == view {
			t.Devices, t.Partition = resource.DeviceRequest{}, ""
		}
	}
	return &t
}

// with is the base task with a take (in the classes' resources' canonical
// units) added in the classes' slots and, for the view's class, to the
// devices it asks for: whole ones, or one part of one (a share, a
// partition, of its type when types gives one: Task.Partition).
func (pt *PodTask) with(take []int64, types []string) (*scoring.Task, error) {
	t := *pt.base
	t.Requests = slices.Clone(t.Requests)
	t.NonZeroRequests = slices.Clone(t.NonZeroRequests)
	t.KoordinatorRequests = slices.Clone(t.KoordinatorRequests)
	for c, n := range take {
		if n == 0 {
			continue
		}
		class := pt.classes[c]
		slot, ok := pt.schema.Slot(class.Resource)
		if !ok {
			return nil, fmt.Errorf("its claims take %d of deviceclass %s, whose resource %s the schema lacks", n, class.Name, class.Resource)
		}
		for _, v := range []resource.Vector{t.Requests, t.NonZeroRequests, t.KoordinatorRequests} {
			if v != nil {
				v[slot] = resource.Clamp(v[slot] + n)
			}
		}
		// The view's devices: whole ones, or a part of one.
		one := resource.FromWhole(class.Resource, 1)
		switch {
		case class.Resource != pt.view || (t.Devices.Count > 0 && t.Devices.Each != one):
		case n >= one:
			t.Devices = resource.DeviceRequest{Count: t.Devices.Count + int(min(n/one, resource.MaxDevicesPerNode)), Each: one}
		case t.Devices.Count == 0:
			t.Devices = resource.DeviceRequest{Count: 1, Each: n}
			if types != nil {
				t.Partition = types[c]
			}
		}
	}
	return &t, nil
}

// Rows groups a table's rows (its row names are its nodes) by the pod's
// task on them: the distinct tasks in the order of their first rows, each
// one's rows, and the rows whose devices cannot satisfy the pod's claims.
// A uniform pod has one task for every row.
func (pt *PodTask) Rows(table *resource.Table) (tasks []*scoring.Task, rows map[*scoring.Task][]int, unsatisfied []int, err error) {
	rows = map[*scoring.Task][]int{}
	for row := range table.Len() {
		task, ok, err := pt.On(table.Name(row))
		if err != nil {
			return nil, nil, nil, err
		}
		if !ok {
			unsatisfied = append(unsatisfied, row)
			continue
		}
		if _, seen := rows[task]; !seen {
			tasks = append(tasks, task)
		}
		rows[task] = append(rows[task], row)
	}
	return tasks, rows, unsatisfied, nil
}

// PodScores are a placer's results for a pod on every row of its table:
// for a uniform pod, the placer's own view of its task's results (valid
// until the placer's next call); otherwise each row's result for the
// pod's task on that node, copied. The zero value is empty; Score fills
// it, reusing its memory.
type PodScores struct {
	uniform bool
	scores  scoring.Scores
	task    *scoring.Task
	varied  []podResult
}

// podResult is a row's result for the pod's task on its node; task is nil
// where the node's devices cannot satisfy the pod's claims.
type podResult struct {
	task     *scoring.Task
	feasible bool
	total    float64
}

// Len is the number of rows.
func (ps *PodScores) Len() int {
	if ps.uniform {
		return ps.scores.Len()
	}
	return len(ps.varied)
}

// Feasible reports whether the pod may go to a row's node.
func (ps *PodScores) Feasible(row int) bool {
	if ps.uniform {
		return ps.scores.Feasible(row)
	}
	return ps.varied[row].feasible
}

// AppendFeasible appends to dst a bitset of the rows the pod may go to
// (row r is bit r%64 of word r/64), Len bits rounded up to whole words: a
// copy of the feasibility alone, 1 bit a row, for a host that publishes
// it to readers without a lock.
func (ps *PodScores) AppendFeasible(dst []uint64) []uint64 {
	n := ps.Len()
	start := len(dst)
	dst = append(dst, make([]uint64, (n+63)/64)...)
	words := dst[start:]
	for row := range n {
		if ps.Feasible(row) {
			words[row/64] |= 1 << (row % 64)
		}
	}
	return dst
}

// AppendTotals appends every row's total to dst, as Total gives them: a
// copy of the totals alone.
func (ps *PodScores) AppendTotals(dst []float64) []float64 {
	dst = slices.Grow(dst, ps.Len())
	if ps.uniform {
		for row := range ps.scores.Len() {
			dst = append(dst, ps.scores.Total(row))
		}
		return dst
	}
	for _, r := range ps.varied {
		dst = append(dst, r.total)
	}
	return dst
}

// Total is a feasible row's total.
func (ps *PodScores) Total(row int) float64 {
	if ps.uniform {
		return ps.scores.Total(row)
	}
	return ps.varied[row].total
}

// Task is the pod's task on a row's node, nil where the node's devices
// cannot satisfy its claims.
func (ps *PodScores) Task(row int) *scoring.Task {
	if ps.uniform {
		return ps.task
	}
	return ps.varied[row].task
}

// Score has a placer score the pod on every row of its table (the table's
// row names are its nodes) into ps: one call of Placer.Scores for a
// uniform pod, one per distinct task otherwise.
func (pt *PodTask) Score(pl *scoring.Placer, table *resource.Table, ps *PodScores) error {
	if pt.Uniform() {
		scores, err := pl.Scores(pt.Task)
		*ps = PodScores{uniform: true, scores: scores, task: pt.Task, varied: ps.varied[:0]}
		return err
	}
	ps.uniform, ps.task = false, nil
	ps.varied = append(ps.varied[:0], make([]podResult, table.Len())...)
	order, byTask, _, err := pt.Rows(table)
	if err != nil {
		return err
	}
	for _, task := range order {
		scores, err := pl.Scores(task)
		if err != nil {
			return err
		}
		for _, row := range byTask[task] {
			ps.varied[row] = podResult{task: task, feasible: scores.Feasible(row), total: scores.Total(row)}
		}
	}
	return nil
}
