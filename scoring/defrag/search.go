package defrag

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// search is MakeRoom's state: the cluster as the moves so far leave it.
// Every method leaves the state as it found it, but for move, which
// undoLast undoes.
type search struct {
	c       *Cluster
	placer  *scoring.Placer
	gang    []*scoring.Task
	budgets map[string]int // what each limited group has left
	row     []int          // each pod's row now
	holds   [][]int        // each pod's devices now
	onRow   [][]int        // the pods on each row now
	moved   []bool
	path    []Move
	left    [][]int // the devices each move of the path left
	guided  []bool  // whether each move of the path was made with gang tasks bound
	best    []Move
	rows    []int // the gang's rows after best
	limit   int   // the most moves a plan may have now
	owed    int   // moves the frames making room have yet to make
	// chains is the most moves a plan may spend making room for pods that
	// have nowhere else to go (moveAll's chains), chained those the path
	// spends so; the search is in a chain while it owes moves (owed > 0).
	chains, chained int
	states          int
	maxStates       int
	deadline        time.Time
	stopped         bool
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

// mayMove reports whether pod i may move now.
func (s *search) mayMove(i int) bool {
	return !s.moved[i] && s.c.Pods[i].Movable && s.c.Pods[i].allowedBy(s.budgets)
}

// tryEveryPod looks for a plan of exactly k more moves from the current
// state, trying every movable pod at each step.
func (s *search) tryEveryPod(k int) (bool, error) {
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
		if !s.mayMove(i) {
			continue
		}
		ok, err := s.move(i)
		if err != nil || !ok {
			if err != nil {
				return false, err
			}
			continue
		}
		found, err := s.tryEveryPod(k - 1)
		if undo := s.undoLast(); err == nil {
			err = undo
		}
		if found || err != nil || s.stopped {
			return found, err
		}
	}
	return false, nil
}

// gangFrom places the gang's tasks from n on, each where the pipeline
// puts it, and makes room (roomOffOneRow) for one that fits nowhere; with every
// task placed it takes them off again and checks that the gang fits after
// the moves alone (settle).
func (s *search) gangFrom(n int) (bool, error) {
	if n == len(s.gang) {
		if err := s.unbindAll(s.bound); err != nil {
			return false, err
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
	placeAt := func(row int) (bool, error) {
		b, err := s.bind(task, row, nil)
		if err != nil {
			return false, err
		}
		s.bound = append(s.bound, b)
		found, err := s.gangFrom(n + 1)
		s.bound = s.bound[:len(s.bound)-1]
		return found, errors.Join(err, s.unbind(b))
	}
	row, err := s.placer.Best(task)
	if err != nil || row >= 0 {
		if err != nil {
			return false, err
		}
		return placeAt(row)
	}
	return s.roomOffOneRow(task, s.shapeKey(task), -1, func() (bool, error) {
		row, err := s.placer.Best(task)
		if err != nil || row < 0 {
			return false, err
		}
		return placeAt(row)
	})
}

// roomOffOneRow makes room for task off one row other than avoid (-1:
// any): for each row whose need is within the moves left (the plan's limit less
// those made and those owed), fewest first, each set of its movable pods
// whose leaving leaves room, moved in order (moveAll); then it calls
// then, and goes on while then says no. It returns then's answer.
func (s *search) roomOffOneRow(task *scoring.Task, key string, avoid int, then func() (bool, error)) (bool, error) {
	left := s.limit - len(s.path) - s.owed
	if s.owed > 0 {
		left = min(left, s.chains-s.chained)
	}
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
			if s.mayMove(i) {
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
// (roomOffOneRow), keeping a move for it and each after it. Then it calls then.
func (s *search) moveAll(pods []int, then func() (bool, error)) (bool, error) {
	if len(pods) == 0 {
		return then()
	}
	if len(s.path)+len(pods)+s.owed > s.limit {
		return false, nil
	}
	i, rest := pods[0], pods[1:]
	// moveOn moves pod i to row to (where the pipeline puts it now), then
	// the rest.
	moveOn := func(to int) (bool, error) {
		if !s.mayMove(i) { // a chain before it spent its group's budget
			return false, nil
		}
		if err := s.moveTo(i, to); err != nil {
			return false, err
		}
		chain := s.owed > 0
		if chain {
			s.chained++
		}
		found, err := s.moveAll(rest, then)
		if chain {
			s.chained--
		}
		return found, errors.Join(err, s.undoLast())
	}
	to, err := s.target(i, s.row[i])
	if err != nil || to >= 0 {
		if err != nil {
			return false, err
		}
		return moveOn(to)
	}
	// Owe the pods' moves while room is made for the first, in a chain.
	s.owed += len(pods)
	found, err := s.roomOffOneRow(s.c.Pods[i].Task, s.key(i), s.row[i], func() (bool, error) {
		to, err := s.target(i, s.row[i])
		if err != nil || to < 0 {
			return false, err
		}
		s.owed -= len(pods)
		found, err := moveOn(to)
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
		p := &s.c.Pods[i]
		for k := -1; k < len(p.Limits); k++ {
			g := p.Group
			if k >= 0 {
				g = p.Limits[k]
			}
			left, limited := s.budgets[g]
			if !limited {
				continue
			}
			for _, j := range pods[:n] {
				if s.c.Pods[j].inGroup(g) {
					left--
				}
			}
			if left <= 0 {
				return false
			}
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
		if err := s.undoLast(); err != nil {
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
				if err := s.undoLast(); err != nil {
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
		err = errors.Join(err, s.undoLast())
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
	if err := s.takeOff(m.Pod); err != nil {
		return err
	}
	if err := s.putOn(m.Pod, m.To, m.Holds); err != nil {
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
	bound, _, err := s.placeEach(s.gang, true)
	err = errors.Join(err, s.unbindAll(bound))
	if err != nil || len(bound) < len(s.gang) {
		return false, err
	}
	rows := make([]int, len(bound))
	for n, b := range bound {
		rows[n] = b.row
	}
	s.best, s.rows = clonePath(s.path), rows
	return true, nil
}
