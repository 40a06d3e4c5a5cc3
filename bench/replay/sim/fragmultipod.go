package sim

import (
	"container/heap"
	"slices"
)

// nodeFrag is a row and its fragmentation, in fragMultiPod's heap.
type nodeFrag struct {
	row  int
	frag float64
}

// fragHeap is a max-heap by fragmentation (the lower row first among
// equals).
type fragHeap []nodeFrag

func (h fragHeap) Len() int { return len(h) }
func (h fragHeap) Less(i, j int) bool {
	return h[i].frag > h[j].frag || h[i].frag == h[j].frag && h[i].row < h[j].row
}
func (h fragHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *fragHeap) Push(x any)   { *h = append(*h, x.(nodeFrag)) }
func (h *fragHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// DescheduleFragMultiPod is the FGD paper's simulator's descheduler
// (FragMultiPod) within the budget, for a pass after the arrivals and the
// churn replay's rounds alike: the most fragmented node (frag holds each
// node's fragmentation, which it reads only; the lower row first among
// equals) gives up the pod whose leaving lowers its fragmentation most,
// by a whole milli-GPU at least (the simulator truncates the drop to an
// int64), and goes back to the heap at its fragmentation without it,
// until the budget is spent or no node gains; a node no removal lowers
// leaves the heap. onRow are the
// pods on each node (the victims are taken out of it); without is a
// node's fragmentation with one of its pods taken off and put back, and
// evict takes the victim off. It returns the pods evicted and their
// nodes, in order.
func DescheduleFragMultiPod(frag []float64, onRow [][]int, budget int, without func(pod, row int) (float64, error), evict func(pod, row int) error) (pods, rows []int, err error) {
	h := make(fragHeap, 0, len(frag))
	for row, f := range frag {
		h = append(h, nodeFrag{row, f})
	}
	heap.Init(&h)
	for budget > 0 && h.Len() > 0 {
		top := heap.Pop(&h).(nodeFrag)
		victim, drop, after := -1, int64(0), top.frag
		for _, k := range onRow[top.row] {
			f, err := without(k, top.row)
			if err != nil {
				return nil, nil, err
			}
			if d := int64(top.frag - f); d > drop {
				victim, drop, after = k, d, f
			}
		}
		if victim < 0 {
			continue // no removal lowers it: the node leaves the heap
		}
		if err := evict(victim, top.row); err != nil {
			return nil, nil, err
		}
		onRow[top.row] = slices.DeleteFunc(onRow[top.row], func(k int) bool { return k == victim })
		pods, rows = append(pods, victim), append(rows, top.row)
		heap.Push(&h, nodeFrag{top.row, after})
		budget--
	}
	return pods, rows, nil
}
