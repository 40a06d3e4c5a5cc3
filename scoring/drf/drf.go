// Package drf orders jobs and queues by Dominant Resource Fairness, as
// Volcano's drf plugin does: the job whose largest share of any one
// resource is smallest goes first, so that as many jobs as possible
// progress.
//
// Everything here is a plain function of its inputs, over the dense vectors
// of package resource; nothing is kept between calls.
package drf

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/resfit/resfit/resource"
)

// Share is a job's dominant share: the largest allocated/total over the
// resources, and the slot where it is reached (-1 when nothing is
// allocated). A resource with total 0 counts as share 0 when nothing of it
// is allocated and 1 otherwise, as Volcano's helpers.Share does.
//
// Shares are capped at 1: Volcano returns allocated/total above 1 when more
// is allocated than the total (an inconsistent input); here that resource
// counts as wholly taken.
//
// It panics if allocated and total have different lengths, a programming
// error; Order and HierarchicalShares, which take vectors from a caller's
// jobs, report that as an error instead.
func Share(allocated, total []int64) (share float64, dominant int) {
	if len(allocated) != len(total) {
		panic(fmt.Sprintf("drf.Share: %d allocated amounts, %d total", len(allocated), len(total)))
	}
	dominant = -1
	for i, a := range allocated {
		var s float64
		switch {
		case a <= 0:
			continue
		case total[i] <= 0 || a >= total[i]:
			s = 1
		default:
			s = float64(a) / float64(total[i])
		}
		if s > share {
			share, dominant = s, i
		}
	}
	return share, dominant
}

// Job is one job as DRF sees it.
type Job struct {
	Name      string
	Allocated resource.Vector
	// Created breaks ties between equal shares: the older job first, then
	// by Name, so the order never depends on the input order.
	Created time.Time
}

// Order returns the indices of jobs in DRF order: smaller dominant share
// first, ties by Created, then Name. Allocated vectors must have total's
// length.
func Order(jobs []Job, total resource.Vector) ([]int, error) {
	shares := make([]float64, len(jobs))
	for i, j := range jobs {
		if len(j.Allocated) != len(total) {
			return nil, fmt.Errorf("drf: job %q has %d amounts, total has %d", j.Name, len(j.Allocated), len(total))
		}
		shares[i], _ = Share(j.Allocated, total)
	}
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := cmp.Compare(shares[a], shares[b]); c != 0 {
			return c
		}
		if c := jobs[a].Created.Compare(jobs[b].Created); c != 0 {
			return c
		}
		return cmp.Compare(jobs[a].Name, jobs[b].Name)
	})
	return order, nil
}

// Queue is a node of a queue tree: a queue with child queues, or a job
// (a leaf, with Allocated and Request).
type Queue struct {
	Name string
	// Weight divides the share when siblings are compared; Volcano raises
	// weights below 1 to 1, and so does HierarchicalShares.
	Weight   float64
	Children []Queue
	// Allocated and Request are a job's (leaves only): what it holds and
	// what it asks for in total.
	Allocated, Request resource.Vector
}

// QueueShare is a Queue's computed state, mirroring the tree.
type QueueShare struct {
	Name      string
	Weight    float64
	Share     float64 // dominant share of Allocated
	Dominant  int     // slot, -1 when nothing
	Saturated bool
	// Allocated is what the node counts as holding: a job's allocation; for
	// a queue, its children's, each non-saturated child scaled to the
	// smallest dominant share among them (Volcano's hierarchical DRF).
	Allocated []float64
	Children  []QueueShare
}

// HierarchicalShares computes hierarchical DRF over a queue tree, as
// Volcano's drf plugin does with hierarchy enabled:
//
//   - a job is saturated when it holds all it requests of some resource,
//     or requests a resource that the cluster has wholly allocated
//     (allocatedTotal ≥ total);
//   - a queue scales each non-empty, non-saturated child's allocation by
//     m / share_child, m the smallest such child share (1 if none), adds
//     saturated children as they are, and takes its dominant share of the
//     sum; it is saturated when all its children are.
//
// allocatedTotal is what the whole cluster has allocated.
func HierarchicalShares(root Queue, total, allocatedTotal resource.Vector) (QueueShare, error) {
	if len(allocatedTotal) != len(total) {
		return QueueShare{}, fmt.Errorf("drf: allocated total has %d amounts, total has %d", len(allocatedTotal), len(total))
	}
	demanding := make([]bool, len(total))
	for i := range total {
		demanding[i] = allocatedTotal[i] < total[i]
	}
	return hierarchy(root, total, demanding)
}

func hierarchy(q Queue, total resource.Vector, demanding []bool) (QueueShare, error) {
	w := q.Weight
	if !(w >= 1) || math.IsInf(w, 0) {
		w = 1
	}
	qs := QueueShare{Name: q.Name, Weight: w, Dominant: -1, Allocated: make([]float64, len(total))}
	if len(q.Children) == 0 {
		if len(q.Allocated) != len(total) || len(q.Request) != len(total) {
			return qs, fmt.Errorf("drf: job %q needs allocated and request vectors of %d amounts", q.Name, len(total))
		}
		for i, a := range q.Allocated {
			qs.Allocated[i] = float64(a)
		}
		qs.Share, qs.Dominant = Share(q.Allocated, total)
		qs.Saturated = saturated(q.Allocated, q.Request, demanding)
		return qs, nil
	}
	minShare := 1.0
	for _, c := range q.Children {
		cs, err := hierarchy(c, total, demanding)
		if err != nil {
			return qs, err
		}
		if cs.Share != 0 && !cs.Saturated && cs.Share < minShare {
			minShare = cs.Share
		}
		qs.Children = append(qs.Children, cs)
	}
	qs.Saturated = true
	for _, cs := range qs.Children {
		if !cs.Saturated {
			qs.Saturated = false
		}
		if cs.Share == 0 {
			continue
		}
		scale := 1.0
		if !cs.Saturated {
			scale = minShare / cs.Share
		}
		for i, a := range cs.Allocated {
			qs.Allocated[i] += a * scale
		}
	}
	qs.Share, qs.Dominant = floatShare(qs.Allocated, total)
	return qs, nil
}

func saturated(allocated, request []int64, demanding []bool) bool {
	for i, a := range allocated {
		if a == 0 {
			continue
		}
		if request[i] != 0 && a >= request[i] {
			return true
		}
		if !demanding[i] && request[i] != 0 {
			return true
		}
	}
	return false
}

func floatShare(allocated []float64, total []int64) (float64, int) {
	share, dominant := 0.0, -1
	for i, a := range allocated {
		var s float64
		switch {
		case a <= 0:
			continue
		case total[i] <= 0 || a >= float64(total[i]):
			s = 1
		default:
			s = a / float64(total[i])
		}
		if s > share {
			share, dominant = s, i
		}
	}
	return share, dominant
}

// CompareQueues orders two queues given by their paths of names from the
// root's children down ("research", "research/nlp"), as Volcano does: at
// each level, a saturated queue goes after a non-saturated one, and
// otherwise the smaller share/weight goes first; equal levels descend. It
// returns a negative number when a goes first, positive when b does, 0 when
// they tie or a path is not in the tree.
func CompareQueues(root QueueShare, a, b []string) int {
	la, lb := root, root
	for i := 0; i < min(len(a), len(b)); i++ {
		var okA, okB bool
		la, okA = child(la, a[i])
		lb, okB = child(lb, b[i])
		if !okA || !okB {
			return 0
		}
		switch {
		case !la.Saturated && lb.Saturated:
			return -1
		case la.Saturated && !lb.Saturated:
			return 1
		}
		if c := cmp.Compare(la.Share/la.Weight, lb.Share/lb.Weight); c != 0 {
			return c
		}
	}
	return 0
}

func child(q QueueShare, name string) (QueueShare, bool) {
	for _, c := range q.Children {
		if c.Name == name {
			return c, true
		}
	}
	return QueueShare{}, false
}
