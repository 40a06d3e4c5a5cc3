package starvation

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/resfit/resfit/resource"
)

// Pod is a pod as starvation control sees it: what it asks for and, for a
// running pod, the devices it holds on its node and when it declares it
// ends.
type Pod struct {
	Name string
	// Request is the pod's requests, one amount per slot of the hosts'
	// schema; Devices what it asks of the node's devices (one kind), or
	// nothing.
	Request resource.Vector
	Devices resource.DeviceRequest
	// Holds are the devices a running pod holds on its node.
	Holds []DeviceHold
	// End is when the pod declares it ends: for a running pod, its start
	// plus what it declares it runs for; for a pod about to start, now plus
	// that. Zero when it declares nothing.
	End time.Time
}

// DeviceHold is an amount of one of a node's devices, by its index.
type DeviceHold struct {
	Device int
	Amount int64
}

// Waiting is a pod waiting to start, since when.
type Waiting struct {
	Pod
	Since time.Time
}

// Node is a node as starvation control sees it: what it has, what is in
// use on it and what of its devices is free now (everything running there
// counted), and the pods that may leave it. Use that no listed pod
// accounts for (a DaemonSet's, a pod the host will not move) stays.
type Node struct {
	Name        string
	Allocatable resource.Vector
	Used        resource.Vector
	// DeviceFree is each device's free amount now; a pod's Holds index it.
	DeviceFree []int64
	Pods       []Pod
}

// Check reports a node whose amounts do not add up: vectors of another
// length than the request's, an amount outside [0, resource.MaxAmount]
// (allocatable, used, a pod's request, a device's free amount), a pod
// holding a device the node lacks or more than is in use, used amounts
// below what its pods hold. Plan, Choose, Admits and Freed answer only for
// nodes that pass, and only for pods whose requests are within
// [0, resource.MaxAmount] (checkPod): within those bounds no sum they make
// overflows.
func (n Node) Check(slots int) error {
	if len(n.Allocatable) != slots || len(n.Used) != slots {
		return fmt.Errorf("node %s: %d allocatable and %d used amounts for %d slots", n.Name, len(n.Allocatable), len(n.Used), slots)
	}
	for s := range slots {
		if !inRange(n.Allocatable[s]) || !inRange(n.Used[s]) {
			return fmt.Errorf("node %s: slot %d has %d allocatable and %d used, outside [0, %d]", n.Name, s, n.Allocatable[s], n.Used[s], resource.MaxAmount)
		}
	}
	sum := make(resource.Vector, slots)
	held := make([]int64, len(n.DeviceFree))
	for _, p := range n.Pods {
		if err := checkPod(p, slots); err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
		for s, r := range p.Request {
			// Each sum stays within what is used, itself within
			// MaxAmount, or the node is refused: it cannot overflow.
			if sum[s] += r; sum[s] > n.Used[s] {
				return fmt.Errorf("node %s: its pods request %d of slot %d or more, more than the %d in use", n.Name, sum[s], s, n.Used[s])
			}
		}
		for _, h := range p.Holds {
			if h.Device < 0 || h.Device >= len(n.DeviceFree) || !inRange(h.Amount) {
				return fmt.Errorf("node %s: pod %s holds %d of device %d, of %d devices", n.Name, p.Name, h.Amount, h.Device, len(n.DeviceFree))
			}
			if held[h.Device] += h.Amount; held[h.Device] > resource.MaxAmount {
				return fmt.Errorf("node %s: its pods hold more than %d of device %d", n.Name, resource.MaxAmount, h.Device)
			}
		}
	}
	for j, f := range n.DeviceFree {
		if !inRange(f) || f+held[j] > resource.MaxAmount {
			return fmt.Errorf("node %s: device %d has %d free", n.Name, j, f)
		}
	}
	return nil
}

// checkPod reports a pod whose request has another length than the
// slots, or an amount outside [0, resource.MaxAmount], or whose device
// request is negative or larger than that.
func checkPod(p Pod, slots int) error {
	if len(p.Request) != slots {
		return fmt.Errorf("pod %s has %d requested amounts for %d slots", p.Name, len(p.Request), slots)
	}
	for s, r := range p.Request {
		if !inRange(r) {
			return fmt.Errorf("pod %s requests %d of slot %d, outside [0, %d]", p.Name, r, s, resource.MaxAmount)
		}
	}
	if d := p.Devices; d.Count < 0 || d.Count > resource.MaxDevicesPerNode || !inRange(d.Each) {
		return fmt.Errorf("pod %s asks for %d devices of %d each", p.Name, d.Count, d.Each)
	}
	return nil
}

// inRange reports whether an amount is within [0, resource.MaxAmount].
func inRange(v int64) bool { return v >= 0 && v <= resource.MaxAmount }

// Election says who may be elected: the pods that have waited longer than
// MinWait, the largest by the Size slot first (the device resource's: the
// GPUs), then the longest waiting.
type Election struct {
	MinWait time.Duration
	Size    int
}

// Elect picks the target among the waiting pods: the current target (by
// name) while it still waits longer than MinWait; else, of the pods that
// do, the one with the most of the Size slot, then the earliest Since,
// then the smallest name. ok is false when no pod has waited that long.
func Elect(waiting []Waiting, now time.Time, e Election, current string) (int, bool) {
	ranked := Rank(waiting, now, e)
	for _, i := range ranked {
		if current != "" && waiting[i].Name == current {
			return i, true
		}
	}
	if len(ranked) == 0 {
		return -1, false
	}
	return ranked[0], true
}

// Rank is the pods that have waited longer than MinWait in the order
// Elect takes them (the most of the Size slot, then the earliest Since,
// then the smallest name): a host that holds a node for each of several
// targets at once (conservative backfilling, rather than EASY's one) takes
// them in this order.
func Rank(waiting []Waiting, now time.Time, e Election) []int {
	var out []int
	for i, w := range waiting {
		if now.Sub(w.Since) > e.MinWait {
			out = append(out, i)
		}
	}
	slices.SortFunc(out, func(a, b int) int {
		switch {
		case before(waiting[a], waiting[b], e.Size):
			return -1
		case before(waiting[b], waiting[a], e.Size):
			return 1
		}
		return cmp.Compare(a, b)
	})
	return out
}

// Targets is whom a host that holds several nodes at once holds them for,
// by index into the waiting pods Rank ranked, at most holds of them: first
// the pods it holds for already (held, in its order) while they still wait
// over the line (in over, Rank's answer), so that a held node keeps what
// waiting for it has won; then the next in over's order. A held pod no
// longer in over (it started, or left) is dropped, and an index is taken
// once. holds < 1 holds for none.
func Targets(over, held []int, holds int) []int {
	var out []int
	take := func(i int) {
		if len(out) < holds && !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	for _, i := range held {
		if slices.Contains(over, i) {
			take(i)
		}
	}
	for _, i := range over {
		take(i)
	}
	return out
}

// before orders candidates: larger, then earlier, then by name.
func before(a, b Waiting, size int) bool {
	if c := cmp.Compare(amountOf(a.Request, size), amountOf(b.Request, size)); c != 0 {
		return c > 0
	}
	if c := a.Since.Compare(b.Since); c != 0 {
		return c < 0
	}
	return a.Name < b.Name
}

func amountOf(v resource.Vector, slot int) int64 {
	if slot < 0 || slot >= len(v) {
		return 0
	}
	return v[slot]
}

// Hold is a node held for a target.
type Hold struct {
	Target string
	// Node is the node's name, Index its index among the nodes chosen
	// from.
	Node  string
	Index int
	// Request and Devices are the target's.
	Request resource.Vector
	Devices resource.DeviceRequest
	// FreeAt is when the target fits, the node's pods leaving at the ends
	// they declare (EASY's shadow time; now when it fits already); zero
	// when a pod in its way declares no end.
	FreeAt time.Time
	// InTheWay are the node's pods (indices into Node.Pods) that must
	// leave for the target to fit: those ending by FreeAt, then, in its
	// absence, those that declare no end, the largest first.
	InTheWay []int
}

// ErrNeverFits is Plan's answer for a node the target does not fit even
// with every pod that may leave gone.
var ErrNeverFits = errors.New("the target does not fit the node even with its pods gone")

// Plan works out the hold of node n (the index-th node) for the target:
// its pods leave in the order of their declared ends, those that declare
// none after them, the largest of the Size slot first; the first of them
// after which the target fits are in its way, and FreeAt is the last one's
// end, or zero when it declares none.
func Plan(target Waiting, n Node, index int, now time.Time, size int) (Hold, error) {
	if err := checkPod(target.Pod, len(target.Request)); err != nil {
		return Hold{}, err
	}
	if err := n.Check(len(target.Request)); err != nil {
		return Hold{}, err
	}
	h := Hold{Target: target.Name, Node: n.Name, Index: index, Request: target.Request, Devices: target.Devices}
	order := leaving(n.Pods, now, size)
	gone := make([]bool, len(n.Pods))
	for k := 0; ; k++ {
		if fits(n, gone, target.Pod) {
			h.InTheWay = order[:k:k]
			h.FreeAt = now
			if k > 0 {
				h.FreeAt = endOf(n.Pods[order[k-1]], now)
			}
			return h, nil
		}
		if k == len(order) {
			return Hold{}, fmt.Errorf("node %s: %w", n.Name, ErrNeverFits)
		}
		gone[order[k]] = true
	}
}

// endOf is a pod's declared end as the plan counts it: never before now
// (a pod past its end ends now); zero when it declares none.
func endOf(p Pod, now time.Time) time.Time {
	if p.End.IsZero() || !p.End.Before(now) {
		return p.End
	}
	return now
}

// leaving orders a node's pods as Plan lets them go: by declared end, then
// those that declare none, the largest of the size slot first; ties by
// index.
func leaving(pods []Pod, now time.Time, size int) []int {
	order := make([]int, len(pods))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ea, eb := endOf(pods[a], now), endOf(pods[b], now)
		switch {
		case ea.IsZero() != eb.IsZero():
			if ea.IsZero() {
				return 1
			}
			return -1
		case !ea.IsZero():
			return ea.Compare(eb)
		}
		return cmp.Compare(amountOf(pods[b].Request, size), amountOf(pods[a].Request, size))
	})
	return order
}

// fits reports whether the extra pods fit the node with the pods marked
// gone taken off: in every slot an extra pod requests, what is in use and
// what they ask within the allocatable, and their devices, each in turn,
// on the devices then free, the tightest first (resource.Devices'
// allocation).
func fits(n Node, gone []bool, extra ...Pod) bool {
	used := make([]int64, len(n.Used))
	copy(used, n.Used)
	free := slices.Clone(n.DeviceFree)
	for i, p := range n.Pods {
		if !gone[i] {
			continue
		}
		for s, r := range p.Request {
			used[s] -= r
		}
		for _, d := range p.Holds {
			free[d.Device] += d.Amount
		}
	}
	for _, p := range extra {
		for s, r := range p.Request {
			if r > 0 && used[s]+r > n.Allocatable[s] {
				return false
			}
			used[s] += r
		}
		if !allocate(free, p.Devices) {
			return false
		}
	}
	return true
}

// allocate takes a device request from the free amounts as
// resource.Devices allocates it (take).
func allocate(free []int64, r resource.DeviceRequest) bool {
	_, ok := take(free, r)
	return ok
}

// take takes a device request from the free amounts as resource.Devices
// allocates it: Count devices with at least Each free, the least free
// first (then the lowest index), each giving Each; it returns what it
// took. Nothing is taken when the request does not fit.
func take(free []int64, r resource.DeviceRequest) ([]DeviceHold, bool) {
	if r.Count <= 0 {
		return []DeviceHold{}, true
	}
	var picked []int
	for range r.Count {
		best := -1
		for j, f := range free {
			if f >= r.Each && !slices.Contains(picked, j) && (best < 0 || f < free[best]) {
				best = j
			}
		}
		if best < 0 {
			return nil, false
		}
		picked = append(picked, best)
	}
	holds := make([]DeviceHold, len(picked))
	for i, j := range picked {
		free[j] -= r.Each
		holds[i] = DeviceHold{Device: j, Amount: r.Each}
	}
	return holds, true
}

// Choose holds the best node for the target among the nodes usable
// reports it could ever use (nil: all): the one it fits first (the
// earliest FreeAt, a node blocked by pods that declare no end last), then
// the fewest pods in the way, then the least of the Size slot in the way,
// then the lowest index. ok is false when it fits none of them, however
// many pods leave. A node that does not check (Node.Check) is passed
// over.
func Choose(target Waiting, nodes []Node, now time.Time, size int, usable func(i int) bool) (Hold, bool) {
	var best Hold
	found := false
	for i, n := range nodes {
		if usable != nil && !usable(i) {
			continue
		}
		h, err := Plan(target, n, i, now, size)
		if err != nil {
			continue
		}
		if !found || better(h, best, n, nodes[best.Index], size) {
			best, found = h, true
		}
	}
	return best, found
}

// better orders holds as Choose does.
func better(a, b Hold, na, nb Node, size int) bool {
	switch {
	case a.FreeAt.IsZero() != b.FreeAt.IsZero():
		return b.FreeAt.IsZero()
	case !a.FreeAt.Equal(b.FreeAt):
		return a.FreeAt.Before(b.FreeAt)
	case len(a.InTheWay) != len(b.InTheWay):
		return len(a.InTheWay) < len(b.InTheWay)
	}
	if wa, wb := inTheWay(a, na, size), inTheWay(b, nb, size); wa != wb {
		return wa < wb
	}
	return a.Index < b.Index
}

// inTheWay is how much of the size slot the pods in the hold's way ask.
func inTheWay(h Hold, n Node, size int) int64 {
	var sum int64
	for _, k := range h.InTheWay {
		sum += amountOf(n.Pods[k].Request, size)
	}
	return sum
}

// Admits reports whether pod p, about to start on the held node n (the
// node the hold was planned on), cannot delay the target: it is the
// target; or, taking the devices it holds (p.Holds) or else those the
// node's allocation gives it now (the least free that fit first), and
// leaving at its declared end (p.End, zero for never), the target still
// fits at FreeAt: the pods ending by then gone, p too if it ends by then
// (EASY's rule), or, when a pod in the way declares no end, the pods in
// the way gone and p staying (what fits beside the target). The host's
// filters still decide whether p fits the node now.
func (h Hold) Admits(p Pod, n Node, now time.Time) bool {
	if p.Name == h.Target {
		return true
	}
	if n.Check(len(h.Request)) != nil || checkPod(p, len(h.Request)) != nil || checkPod(Pod{Request: h.Request, Devices: h.Devices}, len(h.Request)) != nil {
		return false
	}
	if p.Holds == nil {
		free := slices.Clone(n.DeviceFree)
		var ok bool
		if p.Holds, ok = take(free, p.Devices); !ok {
			return false
		}
	}
	with := n
	with.Used = slices.Clone(n.Used)
	with.DeviceFree = slices.Clone(n.DeviceFree)
	for s, r := range p.Request {
		with.Used[s] += r
	}
	for _, d := range p.Holds {
		if d.Device < 0 || d.Device >= len(with.DeviceFree) || !inRange(d.Amount) || d.Amount > with.DeviceFree[d.Device] {
			return false
		}
		with.DeviceFree[d.Device] -= d.Amount
	}
	with.Pods = append(slices.Clip(n.Pods), p)
	gone := make([]bool, len(with.Pods))
	for _, k := range h.InTheWay {
		if k >= 0 && k < len(n.Pods) {
			gone[k] = true
		}
	}
	if !h.FreeAt.IsZero() {
		for i, q := range with.Pods {
			if end := endOf(q, now); !end.IsZero() && !end.After(h.FreeAt) {
				gone[i] = true
			}
		}
	}
	return fits(with, gone, Pod{Request: h.Request, Devices: h.Devices})
}

// Overdue reports whether waiting alone will not free the node within
// patience: a pod in the way declares no end, or FreeAt is further off.
// The host then drains the pods in the way (DrainOrder) until the target
// fits (Freed).
func (h Hold) Overdue(now time.Time, patience time.Duration) bool {
	return h.FreeAt.IsZero() || h.FreeAt.Sub(now) > patience
}

// DrainOrder is the pods in the way (indices into n.Pods, the node the
// hold was planned on) as a drain moves them: those that would stay
// longest first, the ones that declare no end (the largest of the Size
// slot first), then the latest to end, so that each move saves the most
// waiting. A drain stops as soon as the target fits (Freed): the pods
// left in the way then need not go. Indices that n does not have (a node
// other than the hold's) are left out.
func (h Hold) DrainOrder(n Node, now time.Time, size int) []int {
	order := slices.DeleteFunc(slices.Clone(h.InTheWay), func(k int) bool { return k < 0 || k >= len(n.Pods) })
	slices.SortStableFunc(order, func(a, b int) int {
		ea, eb := endOf(n.Pods[a], now), endOf(n.Pods[b], now)
		switch {
		case ea.IsZero() != eb.IsZero():
			if ea.IsZero() {
				return -1
			}
			return 1
		case !ea.IsZero():
			return eb.Compare(ea)
		}
		return cmp.Compare(amountOf(n.Pods[b].Request, size), amountOf(n.Pods[a].Request, size))
	})
	return order
}

// Freed reports whether the target fits node n (the node the hold was
// planned on) now, with the pods gone (indices into n.Pods) taken off:
// where a drain stops. False for a node that does not check.
func (h Hold) Freed(n Node, gone []int) bool {
	if n.Check(len(h.Request)) != nil || checkPod(Pod{Request: h.Request, Devices: h.Devices}, len(h.Request)) != nil {
		return false
	}
	off := make([]bool, len(n.Pods))
	for _, k := range gone {
		if k >= 0 && k < len(off) {
			off[k] = true
		}
	}
	return fits(n, off, Pod{Request: h.Request, Devices: h.Devices})
}
