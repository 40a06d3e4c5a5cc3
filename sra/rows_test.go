package sra

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
)

// rejection is one call of a filter's reject.
type rejection struct {
	node int
	f    Failure
}

// Over a table's rows, with their columns, ScoreRows and FilterRows give
// what ScoreNodes and FilterNodes give over the row-major matrices: the
// same scores to the bit, the same nodes rejected in the same order with
// the same failures. A build with kernels (kernel_amd64.go) scores and
// filters through them; blocks of eight, tails, and amounts over the whole
// range [0, 2^53] are drawn.
func TestRowsMatchNodes(t *testing.T) { rapid.Check(t, checkRowsMatchNodes) }

func checkRowsMatchNodes(t *rapid.T) {
	s := propSchema(t)
	k := len(propNames)
	amount := func(label string) int64 {
		return rapid.OneOf(rapid.Just(int64(0)), rapid.Int64Range(1, 64), rapid.Int64Range(1, 1<<40), rapid.Int64Range(1, resource.MaxAmount)).Draw(t, label)
	}
	n := rapid.IntRange(0, 40).Draw(t, "nodes")
	table := resource.NewTable(s, rapid.IntRange(0, 50).Draw(t, "capacity"))
	for i := range n {
		alloc, used := make(resource.Vector, k), make(resource.Vector, k)
		for j := range k {
			alloc[j] = amount("alloc")
			used[j] = rapid.Int64Range(0, min(alloc[j]+alloc[j]/4+1, resource.MaxAmount)).Draw(t, "used")
		}
		if _, err := table.Add(fmt.Sprint("n", i), alloc, used); err != nil {
			t.Fatal(err)
		}
	}
	req := make([]int64, k)
	for j := range req {
		req[j] = rapid.OneOf(rapid.Just(int64(0)), rapid.Int64Range(1, 1<<36)).Draw(t, "req")
	}
	rows := table.Rows()

	r, err := NewRetention(s, rapid.Int64Range(0, resource.MaxWeight).Draw(t, "weight"), drawScarce(t))
	if err != nil {
		t.Fatal(err)
	}
	got, want := make([]float64, n), make([]float64, n)
	if err := r.ScoreRows(req, rows, got); err != nil {
		t.Fatal(err)
	}
	if err := r.ScoreNodes(req, rows.Allocatable, want); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("retention, node %d: rows %v, nodes %v", i, got[i], want[i])
		}
	}

	var ratios []Ratio
	for _, name := range propNames[2:4] {
		if rapid.Bool().Draw(t, "primary "+name) {
			ratios = append(ratios, Ratio{name, rapid.Float64Range(0, 64).Draw(t, "cpu"), rapid.Float64Range(0, 64).Draw(t, "memory")})
		}
	}
	p, err := NewProportional(s, ratios)
	if err != nil {
		t.Fatal(err)
	}
	var viaRows, viaNodes []rejection
	if err := p.FilterRows(req, rows, func(i int, f Failure) { viaRows = append(viaRows, rejection{i, f}) }); err != nil {
		t.Fatal(err)
	}
	if err := p.FilterNodes(req, rows.Allocatable, rows.Used, func(i int, f Failure) { viaNodes = append(viaNodes, rejection{i, f}) }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(viaRows, viaNodes) {
		t.Fatalf("proportional: rows reject %v, nodes %v", viaRows, viaNodes)
	}
}
