package defrag

import (
	"cmp"
	"slices"

	"github.com/resfit/resfit/scoring"
)

// The search's bound: how many pods must leave a row at the least for a
// task to fit it, as far as the fit filter's resources and the devices one
// by one tell.

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
		memo := s.needsOf(s.shapeKey(task))
		for row := range s.c.Table.Len() {
			best = min(best, s.cachedNeed(memo, task, row))
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
		if !s.mayMove(i) {
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
