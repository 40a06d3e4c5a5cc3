//go:build volcano

package volcano

import (
	"sync/atomic"

	"volcano.sh/volcano/pkg/scheduler/api"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/scoring"
)

// answers are a placer's results for one task at one reading of the
// table's clock, read by every call for that task until the table changes.
type answers struct {
	uid   api.TaskID
	clock uint64
	valid bool
	task  *kubebridge.PodTask
	err   error // the task's pod could not be read
	all   bool  // nothing to check: every node passes (checked only)
	nodes kubebridge.PodScores
}

// fresh reports whether a holds the answers for t on the table as it is.
// The caller holds s.mu, for reading at least.
func (s *sessionView) fresh(a *answers, t *api.TaskInfo) bool {
	return a.valid && a.uid == t.UID && a.clock == s.table.Clock()
}

// published are a placer's answers for one task at one reading of the
// table's clock, copied for the calls that read them without the lock;
// never changed once made. The checked answers keep only which rows pass
// (a bit a row), the ranked ones only the totals: each task publishes
// both, and a copy of the whole results (12 bytes a row, twice) was a
// quarter of what a session allocated per task at 5000 nodes.
type published struct {
	uid   api.TaskID
	clock uint64
	err   bool // the task's pod could not be read: no node passes, each scores 0
	all   bool // every node passes (checked only)
	task  *kubebridge.PodTask
	// rows is how many rows the answers cover; feasible (checked) and
	// totals (ranked) hold them.
	rows     int
	feasible []uint64
	totals   []float64
}

// passes reports whether row r passed the checks.
func (p *published) passes(r int) bool { return p.feasible[r/64]>>(r%64)&1 == 1 }

// publish publishes a's answers, worked out on the table as it is, to p:
// the rows that pass when checked, the totals when ranked. The caller
// holds s.mu.
func (s *sessionView) publish(a *answers, p *atomic.Pointer[published], checked bool) {
	if !a.valid || a.clock != s.table.Clock() {
		return
	}
	if cur := p.Load(); cur != nil && cur.uid == a.uid && cur.clock == a.clock {
		return // published already
	}
	out := &published{uid: a.uid, clock: a.clock, err: a.err != nil, all: a.all, task: a.task}
	if !out.err && !out.all {
		out.rows = a.nodes.Len()
		if checked {
			out.feasible = a.nodes.AppendFeasible(nil)
		} else {
			out.totals = a.nodes.AppendTotals(nil)
		}
	}
	p.Store(out)
}

// current is what p holds for t, when it was worked out on the table as it
// is now; nil otherwise. It takes no lock.
func (s *sessionView) current(p *atomic.Pointer[published], t *api.TaskInfo) *published {
	if a := p.Load(); a != nil && a.uid == t.UID && a.clock == s.clock.Load() {
		return a
	}
	return nil
}

// unlock notes the table's clock for the calls that read without the
// lock, and releases it.
func (s *sessionView) unlock() {
	s.clock.Store(s.table.Clock())
	s.mu.Unlock()
}

// answer brings a up to date for t with the placer's results. The caller
// holds s.mu for writing.
func (s *sessionView) answer(a *answers, pl *scoring.Placer, t *api.TaskInfo) error {
	if s.fresh(a, t) {
		return nil
	}
	a.valid, a.uid, a.clock = false, t.UID, s.table.Clock()
	a.task, a.err = s.task(t)
	a.all = a.err == nil && pl == s.checker && a.task.FiltersNothing(s.onlyDeviceShare)
	if a.err == nil && !a.all {
		if err := a.task.Score(pl, s.table, &a.nodes); err != nil {
			return err
		}
	}
	a.valid = true
	return nil
}

// nodeOrder is a node's total: for a node of the session's, as the
// ranker keeps it (scored for the task's class when the task is first
// asked about, again only where rows changed); for a copy, its row read
// from the copy for the call. A task whose pod cannot be read scores 0
// everywhere (the predicate keeps it off every node, with the reason).
func (s *sessionView) nodeOrder(t *api.TaskInfo, n *api.NodeInfo) (float64, error) {
	if p := s.current(&s.ranks, t); p != nil {
		if r, ok := s.rows.Get(n); ok && (p.err || int(r) < p.rows) {
			if p.err {
				return 0, nil
			}
			return p.totals[r], nil
		}
	}
	s.mu.Lock()
	defer s.unlock()
	info, row, ok := s.node(n.Name)
	if !ok {
		return 0, nil
	}
	if info != n {
		restore, err := s.borrow(row, n)
		if err != nil {
			return 0, err
		}
		defer restore()
	}
	a := &s.ranked
	if err := s.answer(a, s.ranker, t); err != nil || a.err != nil {
		return 0, err
	}
	if info == n {
		s.publish(a, &s.ranks, false)
	}
	return a.nodes.Total(row), nil
}

// predicate keeps a task off a node the pipeline's filters reject: the
// configuration's own, and DeviceShare (GPUs free, each with the task's
// share, of a model it accepts). Its first call for a task checks every
// node (the checker's results, kept until the table changes); the others
// read the answer.
func (s *sessionView) predicate(t *api.TaskInfo, n *api.NodeInfo) error {
	if p := s.current(&s.checks, t); p != nil {
		if p.all {
			return nil // nothing of the node is read (PodTask.FiltersNothing): no row to find
		}
		if r, ok := s.rows.Get(n); ok && !p.err && int(r) < p.rows {
			if p.passes(int(r)) {
				return nil
			}
			if p.task.Uniform() { // rejected: why, under the read lock, which keeps the table as it is
				s.mu.RLock()
				if s.current(&s.checks, t) == p {
					defer s.mu.RUnlock()
					return s.why(p.task, t, n, int(r))
				}
				s.mu.RUnlock()
			}
		}
	}
	s.mu.Lock()
	defer s.unlock()
	info, row, ok := s.node(n.Name)
	if !ok {
		return nil
	}
	a := &s.checked
	if err := s.answer(a, s.checker, t); err != nil {
		return err
	}
	s.publish(a, &s.checks, true)
	switch {
	case a.err != nil:
		return s.unfit(t, n, a.err.Error())
	case a.all:
		return nil
	case info == n && a.nodes.Feasible(row):
		return nil
	}
	if info != n {
		restore, err := s.borrow(row, n)
		if err != nil {
			return err
		}
		defer restore()
	}
	return s.why(a.task, t, n, row)
}

// why is why the filters keep a task off a node whose row holds it: a
// FitError with the reason. The caller holds s.mu, for reading at least.
func (s *sessionView) why(pt *kubebridge.PodTask, t *api.TaskInfo, n *api.NodeInfo, row int) error {
	task, ok, err := pt.On(n.Name)
	if err != nil {
		return err
	}
	if !ok {
		return s.unfit(t, n, "the node's DRA devices cannot satisfy the task's resource claims")
	}
	why, err := s.filters.Reason(task, s.table, row)
	if err != nil || why == "" {
		return err
	}
	return s.unfit(t, n, why)
}

func (s *sessionView) unfit(t *api.TaskInfo, n *api.NodeInfo, reason string) error {
	return api.NewFitErrWithStatus(t, n, &api.Status{Code: api.UnschedulableAndUnresolvable, Plugin: s.name, Reason: reason})
}
