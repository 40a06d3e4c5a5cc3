package defrag

import (
	"fmt"
	"slices"

	"github.com/resfit/resfit/scoring"
)

// placeEach binds the tasks that fit, in order, each where the pipeline
// puts it, and returns their bindings and indices; with all, it stops at
// the first that fits nowhere. A task of a shape that fitted nowhere is
// not tried again: placing others only fills the nodes.
func (s *search) placeEach(tasks []*scoring.Task, all bool) ([]binding, []int, error) {
	var bound []binding
	var in []int
	var failed map[string]bool
	for i, task := range tasks {
		key := s.shapeKey(task)
		if failed[key] {
			continue
		}
		row, err := s.placer.Best(task)
		if err != nil {
			return bound, in, err
		}
		if row < 0 {
			if all {
				break
			}
			if failed == nil {
				failed = map[string]bool{}
			}
			failed[key] = true
			continue
		}
		b, err := s.bind(task, row, nil)
		if err != nil {
			return bound, in, err
		}
		bound, in = append(bound, b), append(in, i)
	}
	return bound, in, nil
}

// unbindAll takes bound tasks off, the last bound first.
func (s *search) unbindAll(bound []binding) error {
	for i := len(bound) - 1; i >= 0; i-- {
		if err := s.unbind(bound[i]); err != nil {
			return err
		}
	}
	return nil
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
	to, err := s.target(i, s.row[i])
	if err != nil || to < 0 {
		return false, err
	}
	return true, s.moveTo(i, to)
}

// moveTo moves pod i to row to, on the devices the scheduler gives it
// there, as the path's next move.
func (s *search) moveTo(i, to int) error {
	from, held := s.row[i], s.holds[i]
	if err := s.takeOff(i); err != nil {
		return err
	}
	if err := s.putOn(i, to, nil); err != nil {
		return err
	}
	s.moved[i] = true
	s.path = append(s.path, Move{Pod: i, From: from, To: to, Holds: s.holds[i]})
	s.left = append(s.left, held)
	s.guided = append(s.guided, len(s.bound) > 0)
	s.spend(i, 1)
	return nil
}

// addPlaced adds a bound task to the cluster's pods (a placed pending task),
// and to the search's, as one that has not moved.
func (s *search) addPlaced(b binding, movable bool, group string) {
	holds := b.holds
	if s.c.Devices == nil || b.task.Devices.Count == 0 {
		holds = nil
	}
	i := len(s.c.Pods)
	s.c.Pods = append(s.c.Pods, Pod{Task: b.task, Row: b.row, Holds: holds, Movable: movable, Group: group})
	s.row, s.holds, s.moved, s.podKey = append(s.row, b.row), append(s.holds, holds), append(s.moved, false), append(s.podKey, "")
	s.onRow[b.row] = append(s.onRow[b.row], i)
}

// undoLast takes the last move back.
func (s *search) undoLast() error {
	m := s.path[len(s.path)-1]
	held := s.left[len(s.left)-1]
	s.path, s.left, s.guided = s.path[:len(s.path)-1], s.left[:len(s.left)-1], s.guided[:len(s.guided)-1]
	s.moved[m.Pod] = false
	s.spend(m.Pod, -1)
	if err := s.takeOff(m.Pod); err != nil {
		return err
	}
	return s.putOn(m.Pod, m.From, held)
}

func (s *search) spend(i, n int) {
	s.c.Pods[i].spendOn(s.budgets, n)
	s.budgetVer++
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

// takeOff takes pod i off its row: its requests and devices.
func (s *search) takeOff(i int) error {
	row := s.row[i]
	if err := s.unbind(binding{task: s.c.Pods[i].Task, row: row, holds: s.holds[i]}); err != nil {
		return err
	}
	s.holds[i] = nil
	s.onRow[row] = slices.DeleteFunc(s.onRow[row], func(j int) bool { return j == i })
	s.row[i] = -1
	return nil
}

// putOn puts pod i on row: its requests, and its devices, those given
// (holds) or as the scheduler chooses them.
func (s *search) putOn(i, row int, holds []int) error {
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
