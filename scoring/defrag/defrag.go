// Package defrag plans pod moves that win back a fragmented cluster: the
// fewest moves after which a pending task fits (MakeRoom).
//
// A move takes a placed pod off its node and puts it where the pipeline
// the scheduler runs would put it then: its best feasible node other than
// the one it leaves (ties to the lower row, as Batch.Top orders), on the
// devices the scheduler would give it (Cluster.Device). The plan is
// therefore what the scheduler would do, move after move. A pod moves at
// most once in a plan; a pod that is not movable, or whose group's
// disruption budget is spent, does not move.
package defrag

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// Cluster is what a plan is made on: the scheduler's pipeline, the table
// and device view it scores, and the pods placed on them.
type Cluster struct {
	Pipeline *scoring.Pipeline
	Table    *resource.Table
	// Devices is the device view the pipeline reads (its DeviceShare
	// filter, FGD), with the table's rows; nil when it reads none. A
	// pipeline with the DeviceShare filter needs it.
	Devices *resource.Devices
	Pods    []Pod
	// Device is the device a task sharing one (one device, less than a
	// whole one) takes on a row, as the scheduler chooses it (FGD's
	// frag.Scorer.Device, say); nil takes the tightest
	// (resource.Devices.Tightest). Whole devices are taken tightest first
	// (resource.Devices.AllocateInto).
	Device func(task *scoring.Task, row int) int
	// Placer, when not nil, is a placer over Pipeline and Table, without
	// PlacerOptions.Rank, which the planner asks where pods go (it keeps
	// what it scored across plans); nil, each plan makes its own.
	Placer *scoring.Placer
}

// Pod is a placed pod: its task, its node's row, the devices it holds
// there, whether it may move, and its disruption group ("" none;
// Options.Budgets).
type Pod struct {
	Task *scoring.Task
	Row  int
	// Holds are the devices of Cluster.Devices the pod holds on its row,
	// Task.Devices.Each of each: Task.Devices.Count distinct devices, or
	// none without a device view.
	Holds   []int
	Movable bool
	Group   string
}

// Options bound a plan.
type Options struct {
	// MaxMoves is the most moves a plan may make; 0 means DefaultMaxMoves.
	MaxMoves int
	// Budgets are the disruptions each group allows (a
	// PodDisruptionBudget's disruptionsAllowed); a group not listed allows
	// any number.
	Budgets map[string]int
	// Timeout stops the search; 0 means none. A search stopped by it
	// returns the best plan found and the bound it reached.
	Timeout time.Duration
	// ExactStates bounds the exhaustive search: at k moves it runs when
	// the movable pods, raised to the power k, are at most this many
	// sequences. Beyond it a plan is searched among those that move pods
	// off one node only, and is minimal only when it meets the lower
	// bound. 0 means DefaultExactStates; -1 never searches exhaustively.
	ExactStates int
}

// DefaultMaxMoves is MakeRoom's cap on moves unless told otherwise.
const DefaultMaxMoves = 2

// DefaultExactStates is Options.ExactStates unless told otherwise.
const DefaultExactStates = 1 << 16

// Move is one pod's move: its index in Cluster.Pods, the rows it leaves
// and goes to, and the devices it takes there.
type Move struct {
	Pod, From, To int
	Holds         []int
}

// Plan is MakeRoom's answer.
type Plan struct {
	// Moves, applied in order (Apply), make room: after them the task
	// fits, and the pipeline puts it on Row. Found reports whether a plan
	// was found within the caps.
	Moves []Move
	Row   int
	Found bool
	// Minimal reports that no plan with fewer moves exists (each pod
	// moving at most once, to where the pipeline puts it). Bound is the
	// fewest moves a plan may have, as far as the search proved it: with
	// Minimal, len(Moves); without a plan, more than MaxMoves when the
	// search proved that no plan within the cap exists.
	Minimal bool
	Bound   int
	// States counts the move sequences the search examined.
	States int
}

// MakeRoom finds the fewest moves of pods after which task fits on some
// node. At each number of moves k from a lower bound up (the fewest pods
// some node must lose for the task's requests and devices to fit it), it
// first tries the plans that move k pods off one node, the nodes that
// need the fewest first, then, when affordable (Options.ExactStates),
// every sequence of k moves; the first plan found is
// minimal when every smaller k was ruled out.
//
// MakeRoom changes c.Table and c.Devices while it searches and leaves them
// as they were; nothing else may use them meanwhile.
func MakeRoom(c *Cluster, task *scoring.Task, opts Options) (Plan, error) {
	if task == nil {
		return Plan{}, errors.New("defrag: nil task")
	}
	if opts.MaxMoves < 0 {
		return Plan{}, fmt.Errorf("defrag: MaxMoves %d is negative", opts.MaxMoves)
	}
	if opts.MaxMoves == 0 {
		opts.MaxMoves = DefaultMaxMoves
	}
	if opts.ExactStates < -1 {
		return Plan{}, fmt.Errorf("defrag: ExactStates %d is below -1", opts.ExactStates)
	}
	if opts.ExactStates == 0 {
		opts.ExactStates = DefaultExactStates
	}
	s, err := newSearch(c)
	if err != nil {
		return Plan{}, err
	}
	s.task = task
	s.budgets = maps.Clone(opts.Budgets)
	if opts.Timeout > 0 {
		s.deadline = time.Now().Add(opts.Timeout)
	}
	proved := s.lowerBound()
	movable := 0
	for _, p := range c.Pods {
		if p.Movable {
			movable++
		}
	}
	for k := proved; k <= opts.MaxMoves; k++ {
		found, err := s.direct(k)
		if err == nil && !found && !s.stopped && exhaustible(movable, k, opts.ExactStates) {
			if found, err = s.every(k); err == nil && !found && !s.stopped && proved == k {
				proved = k + 1
			}
		}
		switch {
		case err != nil:
			return Plan{}, err
		case found:
			return Plan{Moves: s.best, Row: s.plan, Found: true, Minimal: proved == k, Bound: proved, States: s.states}, nil
		case s.stopped:
			return Plan{Row: -1, Bound: proved, States: s.states}, nil
		}
	}
	return Plan{Row: -1, Bound: proved, States: s.states}, nil
}

// exhaustible reports whether movable^k ≤ limit.
func exhaustible(movable, k, limit int) bool {
	n := 1
	for range k {
		if n *= movable; n > limit {
			return false
		}
	}
	return true
}

// Apply makes a plan's moves on the cluster: its table, device view and
// pods (their rows and holdings). A move that no longer fits is an error,
// with the moves before it made.
func Apply(c *Cluster, plan Plan) error {
	s, err := newSearch(c)
	if err != nil {
		return err
	}
	for _, m := range plan.Moves {
		if m.Pod < 0 || m.Pod >= len(c.Pods) || c.Pods[m.Pod].Row != m.From || m.To < 0 || m.To >= c.Table.Len() {
			return fmt.Errorf("defrag: move %+v is not one of the cluster's pods from its row to a row of the table", m)
		}
		if err := s.off(m.Pod); err != nil {
			return err
		}
		if err := s.on(m.Pod, m.To, m.Holds); err != nil {
			return err
		}
		c.Pods[m.Pod].Row, c.Pods[m.Pod].Holds = m.To, s.holds[m.Pod]
	}
	return nil
}

// search is MakeRoom's state: the cluster as the moves so far leave it.
type search struct {
	c        *Cluster
	placer   *scoring.Placer
	task     *scoring.Task
	budgets  map[string]int // what each limited group has left
	row      []int          // each pod's row now
	holds    [][]int        // each pod's devices now
	onRow    [][]int        // the pods on each row now
	moved    []bool
	path     []Move
	left     [][]int // the devices each move of the path left
	best     []Move
	plan     int // the row the task goes to after best
	states   int
	deadline time.Time
	stopped  bool
	// checked are the slots the pipeline's fit filter checks (the bound's
	// resources); none, no bound from them. devices says the pipeline
	// checks devices one by one (DeviceShare).
	checked []int
	devices bool
	free    []int64 // scratch: a row's device free amounts
	buf     []int
}

// newSearch checks the cluster and readies a search over it.
func newSearch(c *Cluster) (*search, error) {
	if c == nil || c.Pipeline == nil || c.Table == nil {
		return nil, errors.New("defrag: nil cluster, pipeline or table")
	}
	t := c.Table
	devices := slices.Contains(c.Pipeline.FilterNames(), scoring.DeviceShare)
	if devices && c.Devices == nil {
		return nil, errors.New("defrag: the pipeline checks devices one by one (DeviceShare); give its device view as Cluster.Devices")
	}
	if c.Devices != nil && c.Devices.Len() != t.Len() {
		return nil, fmt.Errorf("defrag: the device view has %d nodes, the table %d", c.Devices.Len(), t.Len())
	}
	s := &search{c: c, placer: c.Placer, checked: c.Pipeline.CheckedAmounts(), devices: devices,
		row: make([]int, len(c.Pods)), holds: make([][]int, len(c.Pods)), onRow: make([][]int, t.Len()), moved: make([]bool, len(c.Pods))}
	for i, p := range c.Pods {
		if p.Task == nil || p.Row < 0 || p.Row >= t.Len() {
			return nil, fmt.Errorf("defrag: pod %d: no task, or row %d outside the table's %d", i, p.Row, t.Len())
		}
		if err := checkHolds(c.Devices, p); err != nil {
			return nil, fmt.Errorf("defrag: pod %d (%s): %w", i, p.Task.Name, err)
		}
		s.row[i], s.holds[i] = p.Row, p.Holds
		s.onRow[p.Row] = append(s.onRow[p.Row], i)
	}
	if s.placer == nil {
		var err error
		if s.placer, err = scoring.NewPlacer(c.Pipeline, t, scoring.PlacerOptions{}); err != nil {
			return nil, fmt.Errorf("defrag: %w", err)
		}
	}
	return s, nil
}

// checkHolds checks a pod's holdings against its request and the view.
func checkHolds(d *resource.Devices, p Pod) error {
	if d == nil || p.Task.Devices.Count == 0 {
		if len(p.Holds) > 0 {
			return fmt.Errorf("holds devices %v without a device request and a device view", p.Holds)
		}
		return nil
	}
	if len(p.Holds) != p.Task.Devices.Count {
		return fmt.Errorf("holds %d devices for a request of %d", len(p.Holds), p.Task.Devices.Count)
	}
	n := len(d.Free(p.Row))
	for k, j := range p.Holds {
		if j < 0 || j >= n || slices.Contains(p.Holds[:k], j) {
			return fmt.Errorf("holds device %d, not one of its node's %d or twice", j, n)
		}
	}
	return nil
}

// tick counts a state and reports whether the search must stop.
func (s *search) tick() bool {
	s.states++
	if !s.deadline.IsZero() && s.states%64 == 0 && time.Now().After(s.deadline) {
		s.stopped = true
	}
	return s.stopped
}

// may reports whether pod i may move now.
func (s *search) may(i int) bool {
	left, limited := s.budgets[s.c.Pods[i].Group]
	return !s.moved[i] && s.c.Pods[i].Movable && (!limited || left > 0)
}

// every looks for a plan of exactly k more moves from the current state,
// trying every movable pod at each step.
func (s *search) every(k int) (bool, error) {
	if s.tick() {
		return false, nil
	}
	if k == 0 {
		return s.fits()
	}
	if s.lowerBound() > k {
		return false, nil
	}
	for i := range s.c.Pods {
		if !s.may(i) {
			continue
		}
		ok, err := s.move(i)
		if err != nil || !ok {
			if err != nil {
				return false, err
			}
			continue
		}
		found, err := s.every(k - 1)
		if undo := s.back(); err == nil {
			err = undo
		}
		if found || err != nil || s.stopped {
			return found, err
		}
	}
	return false, nil
}

// direct looks for a plan of k moves that all take pods off one row, the
// rows that need the fewest moves first.
func (s *search) direct(k int) (bool, error) {
	type cand struct{ row, need int }
	var rows []cand
	for row := range s.c.Table.Len() {
		if need := s.need(row); need <= k {
			rows = append(rows, cand{row, need})
		}
	}
	slices.SortStableFunc(rows, func(a, b cand) int { return cmp.Compare(a.need, b.need) })
	if k == 0 {
		if len(rows) == 0 {
			return false, nil
		}
		s.tick()
		return s.fits()
	}
	var pods, pick []int
	for _, r := range rows {
		pods = pods[:0]
		for _, i := range s.onRow[r.row] {
			if s.may(i) {
				pods = append(pods, i)
			}
		}
		if len(pods) < k {
			continue
		}
		found, err := s.subsets(r.row, pods, pick[:0], k)
		if found || err != nil || s.stopped {
			return found, err
		}
	}
	return false, nil
}

// subsets tries the k-subsets of pods (in order, after those picked) whose
// leaving makes room for the task on row.
func (s *search) subsets(row int, pods, picked []int, k int) (bool, error) {
	if len(picked) == k {
		if s.tick() || !s.roomAfter(row, picked) || !s.withinBudgets(picked) {
			return false, nil
		}
		return s.tryMoves(picked)
	}
	for n, i := range pods {
		if len(pods)-n < k-len(picked) {
			break
		}
		found, err := s.subsets(row, pods[n+1:], append(picked, i), k)
		if found || err != nil || s.stopped {
			return found, err
		}
	}
	return false, nil
}

// withinBudgets reports whether the pods' groups allow them all to move.
func (s *search) withinBudgets(pods []int) bool {
	for n, i := range pods {
		g := s.c.Pods[i].Group
		left, limited := s.budgets[g]
		if !limited {
			continue
		}
		for _, j := range pods[:n] {
			if s.c.Pods[j].Group == g {
				left--
			}
		}
		if left <= 0 {
			return false
		}
	}
	return true
}

// tryMoves moves the pods in order and checks that the task then fits;
// the state is as before when it returns.
func (s *search) tryMoves(pods []int) (bool, error) {
	made := 0
	found := false
	var err error
	for _, i := range pods {
		var ok bool
		if ok, err = s.move(i); err != nil || !ok {
			break
		}
		made++
	}
	if err == nil && made == len(pods) {
		found, err = s.fits()
	}
	for range made {
		if undo := s.back(); err == nil {
			err = undo
		}
	}
	return found, err
}

// fits records the path as the best plan when the task fits now.
func (s *search) fits() (bool, error) {
	row, err := s.placer.Best(s.task)
	if err != nil || row < 0 {
		return false, err
	}
	s.best, s.plan = clonePath(s.path), row
	return true, nil
}

func clonePath(path []Move) []Move {
	out := make([]Move, len(path))
	for n, m := range path {
		m.Holds = slices.Clone(m.Holds)
		out[n] = m
	}
	return out
}

// move moves pod i to where the pipeline puts it, reporting false (and
// changing nothing) when it fits nowhere else.
func (s *search) move(i int) (bool, error) {
	from := s.row[i]
	to, err := s.target(i, from)
	if err != nil || to < 0 {
		return false, err
	}
	held := s.holds[i]
	if err := s.off(i); err != nil {
		return false, err
	}
	if err := s.on(i, to, nil); err != nil {
		return false, err
	}
	s.moved[i] = true
	s.path = append(s.path, Move{Pod: i, From: from, To: to, Holds: s.holds[i]})
	s.left = append(s.left, held)
	s.spend(i, 1)
	return true, nil
}

// back takes the last move back.
func (s *search) back() error {
	m := s.path[len(s.path)-1]
	held := s.left[len(s.left)-1]
	s.path, s.left = s.path[:len(s.path)-1], s.left[:len(s.left)-1]
	s.moved[m.Pod] = false
	s.spend(m.Pod, -1)
	if err := s.off(m.Pod); err != nil {
		return err
	}
	return s.on(m.Pod, m.From, held)
}

func (s *search) spend(i, n int) {
	if left, limited := s.budgets[s.c.Pods[i].Group]; limited {
		s.budgets[s.c.Pods[i].Group] = left - n
	}
}

// target is where the pipeline puts pod i once off row from: its best
// feasible row other than from, -1 when none. A row's score does not
// depend on other rows, so the pod may stay on from while it is asked.
func (s *search) target(i, from int) (int, error) {
	task := s.c.Pods[i].Task
	row, err := s.placer.Best(task)
	if err != nil || row != from {
		return row, err
	}
	scores, err := s.placer.Scores(task)
	if err != nil {
		return -1, err
	}
	best := -1
	for r := range scores.Len() {
		if r != from && scores.Feasible(r) && (best < 0 || scores.Total(r) > scores.Total(best)) {
			best = r
		}
	}
	return best, nil
}

// off takes pod i off its row: its requests and devices.
func (s *search) off(i int) error {
	p, row := s.c.Pods[i], s.row[i]
	if err := s.c.Table.AddUsed(row, p.Task.Requests, p.Task.NonZeroRequests, true); err != nil {
		return err
	}
	if s.c.Devices != nil {
		for _, j := range s.holds[i] {
			if err := s.c.Devices.Return(row, j, p.Task.Devices.Each); err != nil {
				return fmt.Errorf("defrag: pod %s: %w", p.Task.Name, err)
			}
		}
	}
	s.holds[i] = nil
	s.onRow[row] = slices.DeleteFunc(s.onRow[row], func(j int) bool { return j == i })
	s.row[i] = -1
	return nil
}

// on puts pod i on row: its requests, and its devices, those given
// (holds) or as the scheduler chooses them.
func (s *search) on(i, row int, holds []int) error {
	p := s.c.Pods[i]
	if err := s.c.Table.AddUsed(row, p.Task.Requests, p.Task.NonZeroRequests, false); err != nil {
		return err
	}
	if d := s.c.Devices; d != nil && p.Task.Devices.Count > 0 {
		each := p.Task.Devices.Each
		switch {
		case holds != nil:
			for _, j := range holds {
				if err := d.Take(row, j, each); err != nil {
					return fmt.Errorf("defrag: pod %s: %w", p.Task.Name, err)
				}
			}
		case p.Task.Devices.Count == 1 && each < d.PerDevice():
			j := -1
			if s.c.Device != nil {
				j = s.c.Device(p.Task, row)
			}
			if j < 0 {
				j = d.Tightest(row, each)
			}
			if err := d.Take(row, j, each); err != nil {
				return fmt.Errorf("defrag: pod %s: %w", p.Task.Name, err)
			}
			holds = []int{j}
		default:
			var err error
			if holds, err = d.AllocateInto(row, p.Task.Devices, nil); err != nil {
				return fmt.Errorf("defrag: pod %s: %w", p.Task.Name, err)
			}
		}
	}
	s.holds[i], s.row[i] = holds, row
	s.onRow[row] = append(s.onRow[row], i)
	return nil
}

// roomAfter reports whether the task's requests (the slots the fit filter
// checks) and devices fit row once the pods leave it.
func (s *search) roomAfter(row int, pods []int) bool {
	alloc, used := s.c.Table.Allocatable(row), s.c.Table.Used(row)
	for _, r := range s.checked {
		q := s.task.Requests[r]
		if q == 0 {
			continue
		}
		left := used[r] + q - alloc[r]
		for _, i := range pods {
			left -= s.c.Pods[i].Task.Requests[r]
		}
		if left > 0 {
			return false
		}
	}
	want := s.task.Devices
	if !s.devices || want.Count == 0 {
		return true
	}
	s.free = append(s.free[:0], s.c.Devices.Free(row)...)
	for _, i := range pods {
		for _, j := range s.holds[i] {
			s.free[j] += s.c.Pods[i].Task.Devices.Each
		}
	}
	fit := 0
	for _, f := range s.free {
		if f >= want.Each {
			fit++
		}
	}
	return fit >= want.Count
}

// lowerBound is the fewest moves that can let the task fit: the least
// need over the rows.
func (s *search) lowerBound() int {
	best := len(s.c.Pods) + 1
	for row := range s.c.Table.Len() {
		best = min(best, s.need(row))
	}
	return best
}

// need is the fewest pods (movable, not yet moved) that must leave row for
// the task to fit it, as far as the fit filter's resources and the
// devices one by one tell (a bound: it ignores the other filters, and that
// the pods must go somewhere); len(pods)+1 when no number will do.
func (s *search) need(row int) int {
	never := len(s.c.Pods) + 1
	alloc, used := s.c.Table.Allocatable(row), s.c.Table.Used(row)
	need := 0
	for _, r := range s.checked {
		q := s.task.Requests[r]
		if q == 0 {
			continue // the filter checks what the task asks for
		}
		deficit := used[r] + q - alloc[r]
		if deficit <= 0 {
			continue
		}
		if q > alloc[r] {
			return never
		}
		need = max(need, s.cover(row, deficit, func(i int) int64 { return s.c.Pods[i].Task.Requests[r] }))
	}
	if s.devices && s.task.Devices.Count > 0 {
		need = max(need, s.deviceNeed(row))
	}
	return min(need, never)
}

// cover is the fewest movable pods now on row whose amounts add up to
// deficit, largest first (len(pods)+1 when they cannot).
func (s *search) cover(row int, deficit int64, amount func(i int) int64) int {
	sizes := s.buf[:0]
	for _, i := range s.onRow[row] {
		if s.may(i) && amount(i) > 0 {
			sizes = append(sizes, int(amount(i)))
		}
	}
	s.buf = sizes
	slices.SortFunc(sizes, func(a, b int) int { return cmp.Compare(b, a) }) // largest first
	for n, size := range sizes {
		if deficit -= int64(size); deficit <= 0 {
			return n + 1
		}
	}
	return len(s.c.Pods) + 1
}

// deviceNeed bounds the pods that must leave row for the task's devices
// to fit: m devices short, the m cheapest devices to free (each's fewest
// holders, largest first) need at least the m-th cheapest's pods, and at
// least their sum over the most devices one pod holds.
func (s *search) deviceNeed(row int) int {
	never := len(s.c.Pods) + 1
	want, d := s.task.Devices, s.c.Devices
	free := d.Free(row)
	if len(free) < want.Count || !s.task.Models.Accepts(d.Model(row)) {
		return never
	}
	short := want.Count
	var costs []int
	most := 1
	for j, f := range free {
		if f >= want.Each {
			short--
			continue
		}
		costs = append(costs, s.cover(row, want.Each-f, func(i int) int64 {
			if slices.Contains(s.holds[i], j) {
				return s.c.Pods[i].Task.Devices.Each
			}
			return 0
		}))
	}
	if short <= 0 {
		return 0
	}
	for _, i := range s.onRow[row] {
		most = max(most, len(s.holds[i]))
	}
	slices.Sort(costs)
	sum := 0
	for _, c := range costs[:short] {
		sum += c
	}
	return min(never, max(costs[short-1], (sum+most-1)/most))
}
