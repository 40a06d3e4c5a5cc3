package resource

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// The table's columns hold what its rows hold, after any sequence of the
// changes a table takes (Add, SetUsed, AddUsed, SetNonZeroUsed,
// SetAllocatable, Remove), read through Rows and NonZeroRows; and its
// largest node is each resource's largest allocatable amount over the
// rows. Amounts are drawn from a few small values too, so that rows tie
// on the largest.
func TestColumnsFollowTheRows(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.IntRange(1, 5).Draw(t, "resources")
		names := make([]string, k)
		for j := range names {
			names[j] = fmt.Sprint("example.com/r", j)
		}
		s, err := NewSchema(names...)
		if err != nil {
			t.Fatal(err)
		}
		tab := NewTable(s, rapid.IntRange(-1, 4).Draw(t, "capacity"))
		amount := rapid.OneOf(rapid.Int64Range(0, 3), rapid.Int64Range(0, 1000))
		vector := func(label string) Vector {
			v := make(Vector, k)
			for j := range v {
				v[j] = amount.Draw(t, label)
			}
			return v
		}
		for step := range rapid.IntRange(1, 60).Draw(t, "steps") {
			n := tab.Len()
			op := rapid.IntRange(0, 5).Draw(t, "op")
			if n == 0 {
				op = 0
			}
			var err error
			switch op {
			case 0:
				_, err = tab.Add(fmt.Sprint("n", step), vector("allocatable"), vector("used"))
			case 1:
				err = tab.SetUsed(rapid.IntRange(0, n-1).Draw(t, "row"), vector("used"))
			case 2:
				i := rapid.IntRange(0, n-1).Draw(t, "row")
				release := rapid.Bool().Draw(t, "release")
				var nonZero Vector
				if rapid.Bool().Draw(t, "nonZero") {
					nonZero = vector("nonZero")
				}
				err = tab.AddUsed(i, vector("requests"), nonZero, release)
				_ = err // a change that would leave the range is refused and changes nothing
				err = nil
			case 3:
				err = tab.SetNonZeroUsed(rapid.IntRange(0, n-1).Draw(t, "row"), vector("nonZeroUsed"))
			case 4:
				err = tab.SetAllocatable(rapid.IntRange(0, n-1).Draw(t, "row"), vector("allocatable"))
			case 5:
				_, err = tab.Remove(rapid.IntRange(0, n-1).Draw(t, "row"))
			}
			if err != nil {
				t.Fatal(err)
			}
			largest := make(Vector, k)
			for i := range tab.Len() {
				for j, a := range tab.Allocatable(i) {
					largest[j] = max(largest[j], a)
				}
			}
			if got := tab.Largest(); !slices.Equal(got, largest) {
				t.Fatalf("step %d (op %d): largest node %v, over the rows %v", step, op, got, largest)
			}
			for _, rows := range []Rows{tab.Rows(), tab.NonZeroRows()} {
				c := rows.Columns
				if tab.Len() > 0 && !c.Has() {
					t.Fatalf("step %d: a table of %d nodes has no columns", step, tab.Len())
				}
				for i := range tab.Len() {
					for j := range k {
						if a, b := c.Allocatable[j*c.Stride+i], rows.Allocatable[i*k+j]; a != b {
							t.Fatalf("step %d: node %d slot %d allocatable: column %d, row %d", step, i, j, a, b)
						}
						if a, b := c.Used[j*c.Stride+i], rows.Used[i*k+j]; a != b {
							t.Fatalf("step %d: node %d slot %d used: column %d, row %d", step, i, j, a, b)
						}
					}
				}
			}
		}
	})
}
