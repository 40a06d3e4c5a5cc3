package sra

import (
	"fmt"
	"slices"

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
	largest resource.Vector
}

// NewSize builds the score for a schema and the reference node's
// allocatable amounts (a vector of the schema's length): every amount ≥ 0,
// at least one > 0.
func NewSize(schema *resource.Schema, largest resource.Vector) (*Size, error) {
	if len(largest) != schema.Len() {
		return nil, fmt.Errorf("sra: size: the largest node has %d amounts, the schema %d resources", len(largest), schema.Len())
	}
	above := false
	for slot, a := range largest {
		if a < 0 {
			return nil, fmt.Errorf("sra: size: the largest node's %s is %d; it must be ≥ 0", schema.Name(slot), a)
		}
		above = above || a > 0
	}
	if !above {
		return nil, fmt.Errorf("sra: size: the largest node has no resource above 0")
	}
	return &Size{k: schema.Len(), largest: slices.Clone(largest)}, nil
}

// Largest is the reference node of a table: each resource's largest
// allocatable amount over its rows (resource.Table.Largest), a copy.
func Largest(t *resource.Table) resource.Vector { return slices.Clone(t.Largest()) }

// MaxScore is 100.
func (s *Size) MaxScore() float64 { return MaxNodeScore }

// ScoreNode scores one node's allocatable amounts. It panics unless alloc
// has the schema's length.
func (s *Size) ScoreNode(alloc []int64) float64 {
	resource.MustLen("sra.Size.ScoreNode", s.k, alloc)
	return s.score(alloc)
}

func (s *Size) score(alloc []int64) float64 { return sizeAgainst(s.largest, alloc) }

// sizeAgainst is Size's score of a node's allocatable amounts beside a
// reference node: 100 where the reference has no amount above 0.
func sizeAgainst(largest, alloc []int64) float64 {
	var sum float64
	n := 0
	for slot, l := range largest {
		if l <= 0 {
			continue
		}
		a, l := float64(max(alloc[slot], 0)), float64(l)
		sum += min(a, l) / l
		n++
	}
	if n == 0 {
		return MaxNodeScore
	}
	return MaxNodeScore * (1 - sum/float64(n))
}

// ScoreRows scores every node of rows into out (one per node), without
// allocating.
func (s *Size) ScoreRows(rows resource.Rows, out []float64) error {
	return SizeRows(s.largest, rows, out)
}

// SizeRows scores every node of rows into out (one per node) as Size
// does, beside a reference node given with the call: a table's own
// largest node (resource.Table.Largest), which changes as nodes come and
// go. Every node scores 100 beside a reference with no amount above 0 (a
// table without nodes). It allocates nothing.
func SizeRows(largest resource.Vector, rows resource.Rows, out []float64) error {
	k := len(largest)
	if rows.Stride != k || len(rows.Allocatable) != len(out)*k {
		return fmt.Errorf("sra: size: %d nodes of stride %d (%d amounts) for a reference of %d resources", len(out), rows.Stride, len(rows.Allocatable), k)
	}
	for i := range out {
		out[i] = sizeAgainst(largest, rows.Allocatable[i*k:(i+1)*k])
	}
	return nil
}
