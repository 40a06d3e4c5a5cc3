package strategy

import (
	"math/big"
	"testing"

	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
)

// drawNames configures at least one of the property tests' resources.
func drawNames(t *rapid.T, label string) []string {
	var names []string
	for i, n := range propNames {
		if rapid.Bool().Draw(t, label+" "+n) || (i == len(propNames)-1 && names == nil) {
			names = append(names, n)
		}
	}
	return names
}

// refPackLeastUsed is PackLeastUsed from its description, in exact
// rationals: the least, over the configured resources the node has, of
// ⌊min(used + req, alloc) × 100 / alloc⌋; 0 for a node with none of them.
func refPackLeastUsed(names []string, req, alloc, used map[string]int64) int64 {
	best := (*big.Rat)(nil)
	for _, n := range names {
		if alloc[n] == 0 {
			continue
		}
		r := new(big.Rat).SetFrac(new(big.Int).Add(big.NewInt(used[n]), big.NewInt(req[n])), big.NewInt(alloc[n]))
		if r.Cmp(big.NewRat(1, 1)) > 0 {
			r.SetInt64(1)
		}
		if best == nil || r.Cmp(best) < 0 {
			best = r
		}
	}
	if best == nil {
		return 0
	}
	scaled := new(big.Rat).Mul(best, big.NewRat(100, 1))
	return new(big.Int).Quo(scaled.Num(), scaled.Denom()).Int64()
}

func TestPackLeastUsedProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, w := schemaT(t), drawWorld(t)
		names := drawNames(t, "packed")
		p, err := NewPackLeastUsed(s, names)
		if err != nil {
			t.Fatal(err)
		}
		checkScorer(t, w, nodeScorer{p.ScoreNode, p.ScoreNodes, 100})
		for i := range w.alloc {
			got := p.ScoreNode(w.req, w.alloc[i], w.used[i])
			if want := refPackLeastUsed(names, byName(w.req), byName(w.alloc[i]), byName(w.used[i])); got != float64(want) {
				t.Fatalf("node %d: %v, reference %d", i, got, want)
			}
		}
	})
}

// A node never scores lower for being fuller: more used of any resource,
// or a larger request, leaves the score where it was or raises it.
func TestPackLeastUsedMonotone(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, w := schemaT(t), drawWorld(t)
		p, err := NewPackLeastUsed(s, drawNames(t, "packed"))
		if err != nil {
			t.Fatal(err)
		}
		alloc, used := w.alloc[0], w.used[0]
		slot := rapid.IntRange(0, len(propNames)-1).Draw(t, "slot")
		grow := rapid.Int64Range(1, 1<<40).Draw(t, "growth")
		more := append([]int64(nil), used...)
		more[slot] += grow
		bigger := append([]int64(nil), w.req...)
		bigger[slot] += grow
		before := p.ScoreNode(w.req, alloc, used)
		if after := p.ScoreNode(w.req, alloc, more); after < before {
			t.Fatalf("used %v → %v lowered the score %v → %v", used, more, before, after)
		}
		if after := p.ScoreNode(bigger, alloc, used); after < before {
			t.Fatalf("request %v → %v lowered the score %v → %v", w.req, bigger, before, after)
		}
	})
}

// The scorer's own examples: the emptiest resource decides, a resource the
// node lacks is skipped, a resource the task does not request still counts.
func TestPackLeastUsedExamples(t *testing.T) {
	schema, err := resource.NewSchema(resource.CPU, resource.Memory, "nvidia.com/gpu")
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPackLeastUsed(schema, []string{resource.CPU, "nvidia.com/gpu"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name             string
		req, alloc, used []int64
		want             float64
	}{
		// cpu (16+8)/96 = 25%, GPUs (6+1)/8 = 87.5%: the cpu decides.
		{"cpu decides", []int64{8000, 0, 1000}, []int64{96000, 1 << 40, 8000}, []int64{16000, 0, 6000}, 25},
		// the same pod on a node whose cpu is as full as its GPUs
		{"both full", []int64{8000, 0, 1000}, []int64{96000, 1 << 40, 8000}, []int64{76000, 0, 6000}, 87},
		// a CPU-only node: its cpu alone
		{"no GPUs", []int64{8000, 0, 0}, []int64{32000, 1 << 40, 0}, []int64{8000, 0, 0}, 50},
		// a CPU pod on a GPU node: the idle GPUs count
		{"idle GPUs count", []int64{8000, 0, 0}, []int64{96000, 1 << 40, 8000}, []int64{80000, 0, 0}, 0},
		// over the allocatable: capped at 100
		{"capped", []int64{8000, 0, 2000}, []int64{8000, 1 << 40, 1000}, []int64{4000, 0, 0}, 100},
		{"none of them", []int64{8000, 0, 0}, []int64{0, 1 << 40, 0}, []int64{0, 0, 0}, 0},
	} {
		if got := p.ScoreNode(c.req, c.alloc, c.used); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if _, err := NewPackLeastUsed(schema, nil); err == nil {
		t.Error("no resources: no error")
	}
	if _, err := NewPackLeastUsed(schema, []string{resource.CPU, resource.CPU}); err == nil {
		t.Error("cpu twice: no error")
	}
}
