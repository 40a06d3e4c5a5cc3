// Package strategy holds the per-resource node scorers: MostAllocated and
// LeastAllocated under the numeric profiles of kube-scheduler, Koordinator
// and Volcano, RequestedToCapacityRatio, BalancedAllocation and Volcano's
// binpack, and resfit's PackLeastUsed.
//
// Each scorer is built once for a resource.Schema and is then immutable and
// safe for concurrent use. It scores one node with ScoreNode and many nodes
// with ScoreNodes, which walks a resource.Table's dense matrices and does
// not allocate. The formulas, with their upstream rounding, are written out
// on each type.
//
// Inputs to every scorer: req, the task's request; alloc and used, a node's
// allocatable and already-requested amounts (for ScoreNodes, row-major
// matrices with len(req) amounts per node), one amount per slot of the
// schema the scorer was built for. All amounts are in
// [0, resource.MaxAmount] and all weights in [0, resource.MaxWeight], which
// keeps every sum and product below exact.
//
// Built with GOEXPERIMENT=simd on amd64, ScoreNodes scores a table's nodes
// eight at a time (AVX-512) or four (AVX2) over the columns the table
// keeps (resource.Columns), the kernel chosen by the CPU at start
// (KernelName), with the scalar loop's results to the bit: kernel.go says
// how. The default build, and any view without columns, runs the scalar
// loop.
//
// ScoreNodes, fed from a table, reports inputs that do not fit the schema as
// an error. ScoreNode is the per-node kernel for callers that hold their own
// vectors: it panics if their lengths are not the schema's, a programming
// error, as gonum's vector functions do.
package strategy

import (
	"fmt"
	"strings"

	"github.com/resfit/resfit/resource"
)

// MaxNodeScore is the highest score a kube-scheduler or Koordinator plugin
// returns, and the scale of Volcano's scores.
const MaxNodeScore = 100

// Type says how one resource's utilisation becomes a score.
type Type uint8

const (
	// LeastAllocated favours nodes with more of the resource left:
	// (allocatable − requested) / allocatable. It spreads work.
	LeastAllocated Type = iota + 1
	// MostAllocated favours nodes with less left: requested / allocatable.
	// It packs work.
	MostAllocated
)

// ParseType reads a strategy type by its upstream name.
func ParseType(s string) (Type, error) {
	switch s {
	case "LeastAllocated":
		return LeastAllocated, nil
	case "MostAllocated":
		return MostAllocated, nil
	}
	return 0, fmt.Errorf("unknown strategy type %q, want one of LeastAllocated, MostAllocated", s)
}

func (t Type) String() string {
	switch t {
	case LeastAllocated:
		return "LeastAllocated"
	case MostAllocated:
		return "MostAllocated"
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// MostRequestedScore is kube-scheduler's and Koordinator's integer
// MostAllocated score of one resource:
//
//	min(requested, capacity) × 100 / capacity   (truncated; 0 when capacity is 0)
func MostRequestedScore(requested, capacity int64) int64 {
	if capacity == 0 {
		return 0
	}
	if requested > capacity {
		requested = capacity
	}
	return requested * MaxNodeScore / capacity
}

// LeastRequestedScore is kube-scheduler's and Koordinator's integer
// LeastAllocated score of one resource:
//
//	(capacity − requested) × 100 / capacity   (truncated; 0 when capacity is 0
//	                                            or requested > capacity)
func LeastRequestedScore(requested, capacity int64) int64 {
	if capacity == 0 || requested > capacity {
		return 0
	}
	return (capacity - requested) * MaxNodeScore / capacity
}

func requestedScore(t Type, requested, capacity int64) int64 {
	if t == MostAllocated {
		return MostRequestedScore(requested, capacity)
	}
	return LeastRequestedScore(requested, capacity)
}

// WeightedMean is the weighted normalisation every per-resource scorer ends
// with, in integers as kube-scheduler and Koordinator write it:
//
//	Σ(wᵢ·sᵢ) / Σwᵢ   (truncated; 0 when Σwᵢ is 0)
//
// With scores in [0, 100], weights in [0, resource.MaxWeight] and at most
// resource.MaxResources of each, no sum overflows. It panics if scores and
// weights have different lengths.
func WeightedMean(scores, weights []int64) int64 {
	if len(scores) != len(weights) {
		panic(fmt.Sprintf("strategy.WeightedMean: %d scores and %d weights", len(scores), len(weights)))
	}
	var sum, weightSum int64
	for i, s := range scores {
		sum += s * weights[i]
		weightSum += weights[i]
	}
	if weightSum == 0 {
		return 0
	}
	return sum / weightSum
}

// Resource configures one resource of a scorer by name.
type Resource struct {
	Name   string
	Type   Type  // ignored by scorers with one type for all resources
	Weight int64 // > 0
}

// slotSpec is a Resource resolved to its schema slot.
type slotSpec struct {
	slot   int
	typ    Type
	weight int64
	scalar bool
}

// taskSlot is a slotSpec that the current task takes part in, with its
// request, gathered once per task so that the per-node loop only walks the
// resources that matter.
type taskSlot struct {
	slot   int
	typ    Type
	weight int64
	req    int64
}

// checkResources validates a resource list: at least one resource (as
// kube-scheduler requires: it refuses to score with none), distinct names,
// weights in [1, resource.MaxWeight] and, with needType, a known type.
func checkResources(rs []Resource, needType bool) error {
	if len(rs) == 0 {
		return fmt.Errorf("resources not found: at least one resource is required")
	}
	seen := make(map[string]bool, len(rs))
	var errs []string
	for i, r := range rs {
		switch {
		case seen[r.Name]:
			errs = append(errs, fmt.Sprintf("resources[%d]: %q appears twice", i, r.Name))
		case r.Weight <= 0 || r.Weight > resource.MaxWeight:
			errs = append(errs, fmt.Sprintf("resources[%d] (%s): weight must be in [1, %d], got %d", i, r.Name, resource.MaxWeight, r.Weight))
		case needType && r.Type != MostAllocated && r.Type != LeastAllocated:
			errs = append(errs, fmt.Sprintf("resources[%d] (%s): unknown strategy type %v", i, r.Name, r.Type))
		}
		seen[r.Name] = true
	}
	if errs != nil {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// checkRows reports whether a request and rows fit a scorer built for a
// schema of k resources.
func checkRows(k int, req []int64, rows resource.Rows, out []float64) error {
	if len(req) != k {
		return fmt.Errorf("a request of %d amounts for a schema of %d resources", len(req), k)
	}
	if k == 0 {
		return nil
	}
	if rows.Stride != k || len(rows.Allocatable) != len(rows.Used) || len(rows.Allocatable) != k*len(out) {
		return fmt.Errorf("rows of %d amounts (stride %d) do not hold %d nodes of %d resources", len(rows.Allocatable), rows.Stride, len(out), k)
	}
	if c := rows.Columns; c.Has() && !c.Holds(len(out), k) {
		return fmt.Errorf("columns of %d and %d amounts (stride %d) do not hold %d nodes of %d resources", len(c.Allocatable), len(c.Used), c.Stride, len(out), k)
	}
	return nil
}
