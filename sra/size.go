package sra

import (
	"fmt"

	"github.com/resfit/resfit/resource"
)

// Size scores a node by how small it is beside a reference node, the
// cluster's largest: a pod goes to the smallest node that holds it, and the
// largest nodes stay for the pods only they can hold. It is resfit's own,
// not an upstream score; Slurm's node Weight does the same by hand ("it
// would be preferable to allocate smaller memory nodes rather than larger
// memory nodes if either will satisfy a job's requirements"). For each
// resource r the reference has (largest_r > 0):
//
//	share_r = min(allocatable_r, largest_r) / largest_r
//	score   = 100 × (1 − Σ_r share_r / n)
//
// over the n such resources in schema order, in float64: 100 for a node
// with none of them, 0 for one as large as the reference in every one. It
// reads the node's allocatable amounts only, not what the task asks or what
// is in use, so a host may remember a node's score until the node itself
// changes. Resources outside the reference do not count; a node larger than
// the reference in a resource counts as large as it there.
type Size struct {
	k       int
	slots   []int
	largest []float64
}

// NewSize builds the score for a schema and the reference node's
// allocatable amounts (a vector of the schema's length): every amount ≥ 0,
// at least one > 0.
func NewSize(schema *resource.Schema, largest resource.Vector) (*Size, error) {
	if len(largest) != schema.Len() {
		return nil, fmt.Errorf("sra: size: the largest node has %d amounts, the schema %d resources", len(largest), schema.Len())
	}
	s := &Size{k: schema.Len()}
	for slot, a := range largest {
		switch {
		case a < 0:
			return nil, fmt.Errorf("sra: size: the largest node's %s is %d; it must be ≥ 0", schema.Name(slot), a)
		case a > 0:
			s.slots = append(s.slots, slot)
			s.largest = append(s.largest, float64(a))
		}
	}
	if len(s.slots) == 0 {
		return nil, fmt.Errorf("sra: size: the largest node has no resource above 0")
	}
	return s, nil
}

// Largest is the reference node of a table: each resource's largest
// allocatable amount over its rows.
func Largest(t *resource.Table) resource.Vector {
	out := make(resource.Vector, t.Stride())
	for row := range t.Len() {
		for slot, a := range t.Allocatable(row) {
			out[slot] = max(out[slot], a)
		}
	}
	return out
}

// MaxScore is 100.
func (s *Size) MaxScore() float64 { return MaxNodeScore }

// ScoreNode scores one node's allocatable amounts. It panics unless alloc
// has the schema's length.
func (s *Size) ScoreNode(alloc []int64) float64 {
	resource.MustLen("sra.Size.ScoreNode", s.k, alloc)
	return s.score(alloc)
}

func (s *Size) score(alloc []int64) float64 {
	var sum float64
	for i, slot := range s.slots {
		a := float64(max(alloc[slot], 0))
		sum += min(a, s.largest[i]) / s.largest[i]
	}
	return MaxNodeScore * (1 - sum/float64(len(s.slots)))
}

// ScoreRows scores every node of rows into out (one per node), without
// allocating.
func (s *Size) ScoreRows(rows resource.Rows, out []float64) error {
	if rows.Stride != s.k || len(rows.Allocatable) != len(out)*s.k {
		return fmt.Errorf("sra: size: %d nodes of stride %d (%d amounts) for a schema of %d", len(out), rows.Stride, len(rows.Allocatable), s.k)
	}
	for i := range out {
		out[i] = s.score(rows.Allocatable[i*s.k : (i+1)*s.k])
	}
	return nil
}
