// Package defrag plans pod moves that win back a fragmented cluster: the
// fewest moves after which a pending task or gang fits (MakeRoom,
// MakeRoomGang); a budget of moves spent on pending tasks, the most
// devices per move first (Reclaim), with a bound on what any plan within
// the budget could win (BoundReclaim); and the moves that most lower a
// cost summed over the nodes, such as the GPU the workload cannot use
// (GiveBack).
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
	"strconv"
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
	// MaxStates stops the search after examining this many states (a cap
	// that, unlike Timeout, gives the same answer on any machine); 0 means
	// none.
	MaxStates int
	// ExactStates bounds the exhaustive search: at k moves it runs when
	// the movable pods, raised to the power k, are at most this many
	// sequences. Beyond it a plan is searched among those that move pods
	// off one node, making room the same way for a pod that has nowhere
	// else to go, and is minimal only when it meets the lower bound. 0
	// means DefaultExactStates; -1 never searches exhaustively.
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
	// fits, and the pipeline puts it on Row (a gang's tasks, placed in
	// order, on Rows; Row is the first's). Found reports whether a plan
	// was found within the caps.
	Moves []Move
	Row   int
	Rows  []int
	Found bool
	// Minimal reports that no plan with fewer moves exists (each pod
	// moving at most once, to where the pipeline puts it). Bound is the
	// fewest moves a plan may have, as far as the search proved it: with
	// Minimal, len(Moves); without a plan, more than MaxMoves when the
	// search proved that no plan within the cap exists.
	Minimal bool
	Bound   int
	// States counts the move sequences the search examined; Stopped
	// reports that a cap (Options.Timeout, Options.MaxStates) ended it.
	States  int
	Stopped bool
}

// MakeRoom finds the fewest moves of pods after which task fits on some
// node: MakeRoomGang with a gang of one.
func MakeRoom(c *Cluster, task *scoring.Task, opts Options) (Plan, error) {
	if task == nil {
		return Plan{}, errors.New("defrag: nil task")
	}
	return MakeRoomGang(c, []*scoring.Task{task}, opts)
}

// MakeRoomGang finds the fewest moves of pods after which a gang's tasks
// all fit, placed one after another in order as the scheduler would place
// them (each on its best feasible node, taking its devices there).
//
// At each number of moves k from a lower bound up (the fewest pods some
// node must lose for a task's requests and devices to fit it), it first
// tries plans that move pods off one node for the first task that does
// not fit, the nodes that need the fewest first; a pod that has nowhere
// else to go gets room made for it the same way, with the moves left
// (a chain). Then, when affordable (Options.ExactStates), it tries every
// sequence of k moves. The first plan found is minimal when every smaller
// k was ruled out.
//
// MakeRoomGang changes c.Table and c.Devices while it searches and leaves
// them as they were; nothing else may use them meanwhile.
func MakeRoomGang(c *Cluster, gang []*scoring.Task, opts Options) (Plan, error) {
	if len(gang) == 0 || slices.Contains(gang, nil) {
		return Plan{}, errors.New("defrag: an empty gang or a nil task")
	}
	if opts.MaxMoves < 0 || opts.MaxStates < 0 {
		return Plan{}, fmt.Errorf("defrag: MaxMoves %d and MaxStates %d must be ≥ 0", opts.MaxMoves, opts.MaxStates)
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
	s.gang = gang
	s.budgets = maps.Clone(opts.Budgets)
	s.maxStates = opts.MaxStates
	if opts.Timeout > 0 {
		s.deadline = time.Now().Add(opts.Timeout)
	}
	movable := 0
	for _, p := range c.Pods {
		if p.Movable {
			movable++
		}
	}
	s.limit = 0
	found, err := s.settle()
	if err != nil {
		return Plan{}, err
	}
	if found {
		return s.plan(true, 0), nil
	}
	proved := max(1, s.lowerBound())
	for k := proved; k <= opts.MaxMoves; k++ {
		s.limit = k
		found, err := s.gangFrom(0)
		if err == nil && !found && !s.stopped && exhaustible(movable, k, opts.ExactStates) {
			if found, err = s.every(k); err == nil && !found && !s.stopped && proved == k {
				proved = k + 1
			}
		}
		switch {
		case err != nil:
			return Plan{}, err
		case found:
			return s.plan(proved == len(s.best), proved), nil
		case s.stopped:
			return Plan{Row: -1, Bound: proved, States: s.states, Stopped: true}, nil
		}
	}
	return Plan{Row: -1, Bound: proved, States: s.states}, nil
}

// plan is the plan the search recorded.
func (s *search) plan(minimal bool, bound int) Plan {
	if minimal {
		bound = len(s.best)
	}
	return Plan{Moves: s.best, Row: s.rows[0], Rows: s.rows, Found: true, Minimal: minimal, Bound: bound, States: s.states}
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
// Every method leaves the state as it found it, but for move, which back
// undoes.
type search struct {
	c         *Cluster
	placer    *scoring.Placer
	gang      []*scoring.Task
	budgets   map[string]int // what each limited group has left
	row       []int          // each pod's row now
	holds     [][]int        // each pod's devices now
	onRow     [][]int        // the pods on each row now
	moved     []bool
	path      []Move
	left      [][]int // the devices each move of the path left
	guided    []bool  // whether each move of the path was made with gang tasks bound
	best      []Move
	rows      []int // the gang's rows after best
	limit     int   // the most moves a plan may have now
	owed      int   // moves the frames making room have yet to make
	states    int
	maxStates int
	deadline  time.Time
	stopped   bool
	// checked are the slots the pipeline's fit filter checks (the bound's
	// resources); none, no bound from them. devices says the pipeline
	// checks devices one by one (DeviceShare).
	checked []int
	devices bool
	// bound are the gang's tasks bound so far while room is made for the
	// next (gangFrom).
	bound []binding
	// needs remembers need per task shape and row, valid while the row's
	// version (ver, bumped by every change the search makes to it) and
	// the budgets (budgetVer) are as they were.
	needs     map[string]*needs
	ver       []uint64
	clock     uint64
	budgetVer uint64
	podKey    []string
	keys      map[string]string // the shape names made so far
	keyBuf    []byte
	free      []int64 // scratch: a row's device free amounts
	buf       []int
	costs     []int // scratch: deviceNeed's
}

// binding is a task the search placed on a row, with the devices it took.
type binding struct {
	task  *scoring.Task
	row   int
	holds []int
}

// needs is what need found for one task shape on each row.
type needs struct {
	need      []int
	ver       []uint64
	budgetVer []uint64
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
		row: make([]int, len(c.Pods)), holds: make([][]int, len(c.Pods)), onRow: make([][]int, t.Len()), moved: make([]bool, len(c.Pods)),
		needs: map[string]*needs{}, ver: make([]uint64, t.Len()), podKey: make([]string, len(c.Pods)), keys: map[string]string{}}
	// Each row's pods in one array, a row's capacity its count so that a
	// move onto it copies its list rather than writing into the next.
	count := make([]int, t.Len()+1)
	for i, p := range c.Pods {
		if p.Task == nil || p.Row < 0 || p.Row >= t.Len() {
			return nil, fmt.Errorf("defrag: pod %d: no task, or row %d outside the table's %d", i, p.Row, t.Len())
		}
		if err := checkHolds(c.Devices, p); err != nil {
			return nil, fmt.Errorf("defrag: pod %d (%s): %w", i, p.Task.Name, err)
		}
		s.row[i], s.holds[i] = p.Row, p.Holds
		count[p.Row+1]++
	}
	for r := range t.Len() {
		count[r+1] += count[r]
	}
	all := make([]int, len(c.Pods))
	for r := range s.onRow {
		s.onRow[r] = all[count[r]:count[r]:count[r+1]]
	}
	for i, p := range c.Pods {
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
	if s.maxStates > 0 && s.states >= s.maxStates {
		s.stopped = true
	}
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
		return s.settle()
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

// gangFrom places the gang's tasks from n on, each where the pipeline
// puts it, and makes room (open) for one that fits nowhere; with every
// task placed it takes them off again and checks that the gang fits after
// the moves alone (settle).
func (s *search) gangFrom(n int) (bool, error) {
	if n == len(s.gang) {
		for i := len(s.bound) - 1; i >= 0; i-- {
			if err := s.unbind(s.bound[i]); err != nil {
				return false, err
			}
		}
		found, err := s.settleReplayed()
		for _, b := range s.bound {
			if err == nil {
				_, err = s.bind(b.task, b.row, b.holds)
			}
		}
		return found, err
	}
	task := s.gang[n]
	next := func() (bool, error) {
		row, err := s.placer.Best(task)
		if err != nil || row < 0 {
			return false, err
		}
		b, err := s.bind(task, row, nil)
		if err != nil {
			return false, err
		}
		s.bound = append(s.bound, b)
		found, err := s.gangFrom(n + 1)
		s.bound = s.bound[:len(s.bound)-1]
		return found, errors.Join(err, s.unbind(b))
	}
	if row, err := s.placer.Best(task); err != nil || row >= 0 {
		if err != nil {
			return false, err
		}
		return next()
	}
	return s.open(task, s.shapeKey(task), -1, next)
}

// open makes room for task off one row other than avoid (-1: any): for
// each row whose need is within the moves left (the plan's limit less
// those made and those owed), fewest first, each set of its movable pods
// whose leaving leaves room, moved in order (moveAll); then it calls
// then, and goes on while then says no. It returns then's answer.
func (s *search) open(task *scoring.Task, key string, avoid int, then func() (bool, error)) (bool, error) {
	left := s.limit - len(s.path) - s.owed
	if left <= 0 || s.stopped {
		return false, nil
	}
	type cand struct{ row, need int }
	var rows []cand
	memo := s.needsOf(key)
	for row := range s.c.Table.Len() {
		if row == avoid {
			continue
		}
		if need := s.cachedNeed(memo, task, row); need <= left {
			rows = append(rows, cand{row, need})
		}
	}
	slices.SortStableFunc(rows, func(a, b cand) int { return cmp.Compare(a.need, b.need) })
	// pods and picked are this call's own: the calls then makes (deeper
	// opens) have theirs, and subsets only reads pods.
	var pods []int
	picked := make([]int, 0, left)
	for _, r := range rows {
		pods = pods[:0]
		for _, i := range s.onRow[r.row] {
			if s.may(i) {
				pods = append(pods, i)
			}
		}
		for j := max(1, r.need); j <= min(left, len(pods)); j++ {
			found, err := s.subsets(task, r.row, pods, picked[:0], j, then)
			if found || err != nil || s.stopped {
				return found, err
			}
		}
	}
	return false, nil
}

// subsets tries the k-subsets of pods (in order, after those picked) whose
// leaving makes room for the task on row.
func (s *search) subsets(task *scoring.Task, row int, pods, picked []int, k int, then func() (bool, error)) (bool, error) {
	if len(picked) == k {
		if s.tick() || !s.roomAfter(task, row, picked) || !s.withinBudgets(picked) {
			return false, nil
		}
		return s.moveAll(picked, then)
	}
	for n, i := range pods {
		if len(pods)-n < k-len(picked) {
			break
		}
		found, err := s.subsets(task, row, pods[n+1:], append(picked, i), k, then)
		if found || err != nil || s.stopped {
			return found, err
		}
	}
	return false, nil
}

// moveAll moves the pods in order, each where the pipeline puts it; for
// one that fits nowhere else it first makes room off the other rows
// (open), keeping a move for it and each after it. Then it calls then.
func (s *search) moveAll(pods []int, then func() (bool, error)) (bool, error) {
	if len(pods) == 0 {
		return then()
	}
	if len(s.path)+len(pods)+s.owed > s.limit {
		return false, nil
	}
	i, rest := pods[0], pods[1:]
	moveOn := func() (bool, error) {
		if !s.may(i) { // a chain before it spent its group's budget
			return false, nil
		}
		ok, err := s.move(i)
		if err != nil || !ok {
			return false, err
		}
		found, err := s.moveAll(rest, then)
		return found, errors.Join(err, s.back())
	}
	if to, err := s.target(i, s.row[i]); err != nil || to >= 0 {
		if err != nil {
			return false, err
		}
		return moveOn()
	}
	// Owe the pods' moves while room is made for the first.
	s.owed += len(pods)
	found, err := s.open(s.c.Pods[i].Task, s.key(i), s.row[i], func() (bool, error) {
		s.owed -= len(pods)
		found, err := moveOn()
		s.owed += len(pods)
		return found, err
	})
	s.owed -= len(pods)
	return found, err
}

// key is pod i's task shape (shapeKey), worked out once.
func (s *search) key(i int) string {
	if s.podKey[i] == "" {
		s.podKey[i] = s.shapeKey(s.c.Pods[i].Task)
	}
	return s.podKey[i]
}

// shapeKey names what need reads of a task: its requests, devices and
// accepted models. A shape's name is made once per search.
func (s *search) shapeKey(t *scoring.Task) string {
	b := s.keyBuf[:0]
	for _, q := range t.Requests {
		b = strconv.AppendInt(append(b, ','), q, 10)
	}
	b = strconv.AppendInt(append(b, '|'), int64(t.Devices.Count), 10)
	b = strconv.AppendInt(append(b, 'x'), t.Devices.Each, 10)
	b = append(append(b, '|'), t.Models...)
	s.keyBuf = b
	if k, ok := s.keys[string(b)]; ok {
		return k
	}
	k := string(b)
	s.keys[k] = k
	return k
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

// settleReplayed is settle for a path some of whose moves were made with
// gang tasks bound (gangFrom): those moves may go elsewhere without them,
// so the path is first made again from its start, move by move where the
// pipeline puts each pod; a path that goes otherwise is no plan. The
// path is as it was when it returns.
func (s *search) settleReplayed() (bool, error) {
	if !slices.Contains(s.guided, true) {
		return s.settle()
	}
	saved, held, guided := clonePath(s.path), slices.Clone(s.left), slices.Clone(s.guided)
	for range saved {
		if err := s.back(); err != nil {
			return false, err
		}
	}
	same := true
	for _, m := range saved {
		ok, err := s.move(m.Pod)
		if err != nil {
			return false, err
		}
		if !ok || !sameMove(s.path[len(s.path)-1], m) {
			if ok {
				if err := s.back(); err != nil {
					return false, err
				}
			}
			same = false
			break
		}
	}
	found := false
	var err error
	if same {
		found, err = s.settle()
	}
	for len(s.path) > 0 {
		err = errors.Join(err, s.back())
	}
	for n, m := range saved {
		err = errors.Join(err, s.redo(m, held[n], guided[n]))
	}
	return found, err
}

func sameMove(a, b Move) bool {
	return a.Pod == b.Pod && a.From == b.From && a.To == b.To && slices.Equal(a.Holds, b.Holds)
}

// redo makes move m again as it was made, pod m.Pod having held held.
func (s *search) redo(m Move, held []int, guided bool) error {
	if err := s.off(m.Pod); err != nil {
		return err
	}
	if err := s.on(m.Pod, m.To, m.Holds); err != nil {
		return err
	}
	s.moved[m.Pod] = true
	s.path = append(s.path, m)
	s.left = append(s.left, held)
	s.guided = append(s.guided, guided)
	s.spend(m.Pod, 1)
	return nil
}

// settle records the path as the best plan when the gang fits now, its
// tasks placed in order where the pipeline puts them.
func (s *search) settle() (bool, error) {
	var bound []binding
	rows := make([]int, 0, len(s.gang))
	var err error
	for _, task := range s.gang {
		var row int
		if row, err = s.placer.Best(task); err != nil || row < 0 {
			break
		}
		var b binding
		if b, err = s.bind(task, row, nil); err != nil {
			break
		}
		bound = append(bound, b)
		rows = append(rows, row)
	}
	for i := len(bound) - 1; i >= 0; i-- {
		err = errors.Join(err, s.unbind(bound[i]))
	}
	if err != nil || len(rows) < len(s.gang) {
		return false, err
	}
	s.best, s.rows = clonePath(s.path), rows
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
	s.guided = append(s.guided, len(s.bound) > 0)
	s.spend(i, 1)
	return true, nil
}

// back takes the last move back.
func (s *search) back() error {
	m := s.path[len(s.path)-1]
	held := s.left[len(s.left)-1]
	s.path, s.left, s.guided = s.path[:len(s.path)-1], s.left[:len(s.left)-1], s.guided[:len(s.guided)-1]
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
		s.budgetVer++
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
	row := s.row[i]
	if err := s.unbind(binding{task: s.c.Pods[i].Task, row: row, holds: s.holds[i]}); err != nil {
		return err
	}
	s.holds[i] = nil
	s.onRow[row] = slices.DeleteFunc(s.onRow[row], func(j int) bool { return j == i })
	s.row[i] = -1
	return nil
}

// on puts pod i on row: its requests, and its devices, those given
// (holds) or as the scheduler chooses them.
func (s *search) on(i, row int, holds []int) error {
	b, err := s.bind(s.c.Pods[i].Task, row, holds)
	if err != nil {
		return err
	}
	s.holds[i], s.row[i] = b.holds, row
	s.onRow[row] = append(s.onRow[row], i)
	return nil
}

// bind adds a task to row: its requests, and its devices, those given
// (holds) or as the scheduler chooses them.
func (s *search) bind(task *scoring.Task, row int, holds []int) (binding, error) {
	if err := s.c.Table.AddUsed(row, task.Requests, task.NonZeroRequests, false); err != nil {
		return binding{}, err
	}
	s.changed(row)
	if d := s.c.Devices; d != nil && task.Devices.Count > 0 {
		each := task.Devices.Each
		switch {
		case holds != nil:
			for _, j := range holds {
				if err := d.Take(row, j, each); err != nil {
					return binding{}, fmt.Errorf("defrag: pod %s: %w", task.Name, err)
				}
			}
		case task.Devices.Count == 1 && each < d.PerDevice():
			j := -1
			if s.c.Device != nil {
				j = s.c.Device(task, row)
			}
			if j < 0 {
				j = d.Tightest(row, each)
			}
			if err := d.Take(row, j, each); err != nil {
				return binding{}, fmt.Errorf("defrag: pod %s: %w", task.Name, err)
			}
			holds = []int{j}
		default:
			var err error
			if holds, err = d.AllocateInto(row, task.Devices, nil); err != nil {
				return binding{}, fmt.Errorf("defrag: pod %s: %w", task.Name, err)
			}
		}
	}
	return binding{task: task, row: row, holds: holds}, nil
}

// unbind takes a bound task off its row: its requests and devices.
func (s *search) unbind(b binding) error {
	if err := s.c.Table.AddUsed(b.row, b.task.Requests, b.task.NonZeroRequests, true); err != nil {
		return err
	}
	s.changed(b.row)
	if s.c.Devices != nil {
		for _, j := range b.holds {
			if err := s.c.Devices.Return(b.row, j, b.task.Devices.Each); err != nil {
				return fmt.Errorf("defrag: pod %s: %w", b.task.Name, err)
			}
		}
	}
	return nil
}

// changed notes that the search changed row.
func (s *search) changed(row int) {
	s.clock++
	s.ver[row] = s.clock
}

// roomAfter reports whether the task's requests (the slots the fit filter
// checks) and devices fit row once the pods leave it.
func (s *search) roomAfter(task *scoring.Task, row int, pods []int) bool {
	alloc, used := s.c.Table.Allocatable(row), s.c.Table.Used(row)
	for _, r := range s.checked {
		q := task.Requests[r]
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
	want := task.Devices
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

// lowerBound is the fewest moves that can let the gang fit: the least need
// over the rows of the task that needs the most.
func (s *search) lowerBound() int {
	most := 0
	for _, task := range s.gang {
		best := len(s.c.Pods) + 1
		for row := range s.c.Table.Len() {
			best = min(best, s.need(task, row))
		}
		most = max(most, best)
	}
	return most
}

// needsOf is the memory of need for a task shape.
func (s *search) needsOf(key string) *needs {
	m := s.needs[key]
	if m == nil {
		n := s.c.Table.Len()
		m = &needs{need: make([]int, n), ver: make([]uint64, n), budgetVer: make([]uint64, n)}
		for row := range m.ver {
			m.ver[row] = ^uint64(0)
		}
		s.needs[key] = m
	}
	return m
}

// cachedNeed is need, from the memory when the row and budgets are as
// they were when it was worked out.
func (s *search) cachedNeed(m *needs, task *scoring.Task, row int) int {
	if m.ver[row] != s.ver[row] || m.budgetVer[row] != s.budgetVer {
		m.need[row], m.ver[row], m.budgetVer[row] = s.need(task, row), s.ver[row], s.budgetVer
	}
	return m.need[row]
}

// need is the fewest pods (movable, not yet moved) that must leave row for
// the task to fit it, as far as the fit filter's resources and the
// devices one by one tell (a bound: it ignores the other filters, and that
// the pods must go somewhere); len(pods)+1 when no number will do.
func (s *search) need(task *scoring.Task, row int) int {
	never := len(s.c.Pods) + 1
	alloc, used := s.c.Table.Allocatable(row), s.c.Table.Used(row)
	need := 0
	for _, r := range s.checked {
		q := task.Requests[r]
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
		need = max(need, s.cover(row, deficit, r, -1))
	}
	if s.devices && task.Devices.Count > 0 {
		need = max(need, s.deviceNeed(task, row))
	}
	return min(need, never)
}

// cover is the fewest movable pods now on row whose amounts add up to
// deficit, largest first (len(pods)+1 when they cannot): the amounts of
// slot, or with slot -1 what each holds of device j.
func (s *search) cover(row int, deficit int64, slot, j int) int {
	sizes := s.buf[:0]
	for _, i := range s.onRow[row] {
		if !s.may(i) {
			continue
		}
		var amount int64
		if slot >= 0 {
			amount = s.c.Pods[i].Task.Requests[slot]
		} else if slices.Contains(s.holds[i], j) {
			amount = s.c.Pods[i].Task.Devices.Each
		}
		if amount > 0 {
			sizes = append(sizes, int(amount))
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
func (s *search) deviceNeed(task *scoring.Task, row int) int {
	never := len(s.c.Pods) + 1
	want, d := task.Devices, s.c.Devices
	free := d.Free(row)
	if len(free) < want.Count || !task.Models.Accepts(d.Model(row)) {
		return never
	}
	short := want.Count
	for _, f := range free {
		if f >= want.Each {
			short--
		}
	}
	if short <= 0 {
		return 0
	}
	costs := s.costs[:0]
	most := 1
	for j, f := range free {
		if f < want.Each {
			costs = append(costs, s.cover(row, want.Each-f, -1, j))
		}
	}
	s.costs = costs
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
