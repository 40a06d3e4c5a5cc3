package kubebridge

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"
)

// RowIndex agrees with a Go map after any sequence of puts and removes,
// growth and wrapped runs included.
func TestRowIndexAgreesWithAMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nodes := make([]*v1.Node, rapid.IntRange(1, 64).Draw(t, "nodes"))
		for i := range nodes {
			nodes[i] = &v1.Node{}
		}
		x := NewRowIndex[v1.Node](rapid.IntRange(0, 4).Draw(t, "capacity"))
		ref := map[*v1.Node]int32{}
		for range rapid.IntRange(0, 300).Draw(t, "ops") {
			n := nodes[rapid.IntRange(0, len(nodes)-1).Draw(t, "node")]
			if rapid.IntRange(0, 2).Draw(t, "op") == 0 {
				x.Remove(n)
				delete(ref, n)
			} else {
				row := rapid.Int32().Draw(t, "row")
				x.Put(n, row)
				ref[n] = row
			}
			for i, m := range nodes {
				got, ok := x.Get(m)
				want, wok := ref[m]
				if ok != wok || got != want {
					t.Fatalf("node %d: index %d,%v, map %d,%v", i, got, ok, want, wok)
				}
			}
		}
	})
}
