package strategy

import (
	"fmt"
	"math"
	"math/big"
	"testing"

	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
)

// The property tests draw a cluster over four resources: cpu and memory,
// which kube-scheduler always scores, and two extended resources, which it
// skips when not requested.
var propNames = []string{resource.CPU, resource.Memory, "nvidia.com/gpu", "example.com/foo"}

type world struct {
	req []int64
	// nonZero is req with non-zero defaults: cpu and memory may be larger.
	nonZero     []int64
	alloc, used [][]int64
}

func drawAmount(t *rapid.T, label string) int64 {
	return rapid.OneOf(
		rapid.Just(int64(0)),
		rapid.Int64Range(1, 64),
		rapid.Int64Range(1, 1<<40),
		rapid.Int64Range(resource.MaxAmount/4, resource.MaxAmount/2),
	).Draw(t, label)
}

func drawWorld(t *rapid.T) world {
	k := len(propNames)
	n := rapid.IntRange(1, 12).Draw(t, "nodes")
	w := world{req: make([]int64, k), nonZero: make([]int64, k)}
	for j := range k {
		w.req[j] = drawAmount(t, "req")
		w.nonZero[j] = w.req[j]
	}
	w.nonZero[0] += rapid.SampledFrom([]int64{0, resource.DefaultMilliCPURequest}).Draw(t, "cpu default")
	w.nonZero[1] += rapid.SampledFrom([]int64{0, resource.DefaultMemoryRequest}).Draw(t, "memory default")
	for range n {
		a, u := make([]int64, k), make([]int64, k)
		for j := range k {
			a[j] = drawAmount(t, "alloc")
			u[j] = rapid.Int64Range(0, a[j]+a[j]/4+1).Draw(t, "used")
		}
		w.alloc = append(w.alloc, a)
		w.used = append(w.used, u)
	}
	return w
}

// drawResources configures at least one resource, with weights from the
// whole range (mostly small, as in real configurations).
func drawResources(t *rapid.T, withType bool) []Resource {
	var rs []Resource
	for i, n := range propNames {
		if rapid.Bool().Draw(t, "configured "+n) || (i == len(propNames)-1 && len(rs) == 0) {
			r := Resource{Name: n, Weight: rapid.OneOf(rapid.Int64Range(1, 100), rapid.Int64Range(1, resource.MaxWeight)).Draw(t, "weight")}
			if withType {
				r.Type = rapid.SampledFrom([]Type{MostAllocated, LeastAllocated}).Draw(t, "type")
			}
			rs = append(rs, r)
		}
	}
	return rs
}

func flatten(rows [][]int64) []int64 {
	var out []int64
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}

// nodeScorer is what every scorer offers, with any per-task override fixed.
type nodeScorer struct {
	one  func(req, alloc, used []int64) float64
	many func(req []int64, rows resource.Rows, out []float64) error
	max  float64
}

// checkScorer states the laws every scorer obeys: its score is in [0, max]
// and never NaN, and the batch call gives exactly the single-node scores.
func checkScorer(t *rapid.T, w world, s nodeScorer) {
	rows, err := resource.RowsOf(len(w.req), flatten(w.alloc), flatten(w.used))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, len(w.alloc))
	if err := s.many(w.req, rows, out); err != nil {
		t.Fatal(err)
	}
	// The same nodes in a table, whose view has columns: a build with
	// kernels scores through them (kernel.go).
	schema, err := resource.NewSchema(propNames...)
	if err != nil {
		t.Fatal(err)
	}
	table := resource.NewTable(schema, len(w.alloc))
	for i := range w.alloc {
		if _, err := table.Add(fmt.Sprint("n", i), w.alloc[i], w.used[i]); err != nil {
			t.Fatal(err)
		}
	}
	viaColumns := make([]float64, len(w.alloc))
	if err := s.many(w.req, table.Rows(), viaColumns); err != nil {
		t.Fatal(err)
	}
	for i := range w.alloc {
		one := s.one(w.req, w.alloc[i], w.used[i])
		if math.IsNaN(one) || one < 0 || one > s.max {
			t.Fatalf("node %d: score %v outside [0, %v]", i, one, s.max)
		}
		if out[i] != one {
			t.Fatalf("node %d: batch %v, single %v", i, out[i], one)
		}
		if math.Float64bits(viaColumns[i]) != math.Float64bits(one) {
			t.Fatalf("node %d: batch over a table's columns (%s) %v, single %v", i, KernelName(), viaColumns[i], one)
		}
	}
}

func byName(v []int64) map[string]int64 {
	m := map[string]int64{}
	for i, n := range propNames {
		m[n] = v[i]
	}
	return m
}

// refKube is kube-scheduler's NodeResourcesFit score written from its
// description, over names.
func refKube(typ Type, rs []Resource, req, alloc, used map[string]int64) int64 {
	var num, den int64
	for _, r := range rs {
		if resource.IsScalar(r.Name) && req[r.Name] == 0 {
			continue
		}
		a := alloc[r.Name]
		if a == 0 {
			continue
		}
		requested := used[r.Name] + req[r.Name]
		var s int64
		if typ == MostAllocated {
			s = min(requested, a) * 100 / a
		} else if requested <= a {
			s = (a - requested) * 100 / a
		}
		num += s * r.Weight
		den += r.Weight
	}
	if den == 0 {
		return 0
	}
	return num / den
}

// refKoordinator is NodeResourcesFitPlus written from its description:
// resources chosen by the plain request, amounts from the non-zero one.
func refKoordinator(rs []Resource, req, nonZero, alloc, used map[string]int64) int64 {
	var num, den int64
	for _, r := range rs {
		if req[r.Name] <= 0 {
			continue
		}
		a, requested := alloc[r.Name], used[r.Name]+nonZero[r.Name]
		var s int64
		switch {
		case a == 0:
		case r.Type == MostAllocated:
			s = min(requested, a) * 100 / a
		case requested <= a:
			s = (a - requested) * 100 / a
		}
		num += s * r.Weight
		den += r.Weight
	}
	if den == 0 {
		return 100
	}
	return num / den
}

// refVolcano is resource-strategy-fit in exact rational arithmetic; the
// float64 implementation must agree to within rounding.
func refVolcano(rs []Resource, pluginWeight int64, req, alloc, used map[string]int64) float64 {
	sum, weights := new(big.Rat), int64(0)
	for _, name := range propNames {
		if req[name] == 0 {
			continue
		}
		r, ok := matchResource(name, rs)
		if !ok {
			continue
		}
		a, requested := alloc[name], used[name]+req[name]
		weights += r.Weight
		if a == 0 || r.Weight == 0 {
			continue
		}
		if requested > a {
			return 0
		}
		part := requested
		if r.Type == LeastAllocated {
			part = a - requested
		}
		num := new(big.Int).Mul(big.NewInt(part), big.NewInt(r.Weight))
		sum.Add(sum, new(big.Rat).SetFrac(num, big.NewInt(a)))
	}
	if weights > 0 {
		sum.Quo(sum, new(big.Rat).SetInt64(weights))
	}
	sum.Mul(sum, new(big.Rat).SetInt64(100*pluginWeight))
	f, _ := sum.Float64()
	return f
}

func schemaT(t *rapid.T) *resource.Schema {
	s, err := resource.NewSchema(propNames...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestKubeFitProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, w := schemaT(t), drawWorld(t)
		typ := rapid.SampledFrom([]Type{MostAllocated, LeastAllocated}).Draw(t, "type")
		rs := drawResources(t, false)
		f, err := NewKubeFit(s, typ, rs)
		if err != nil {
			t.Fatal(err)
		}
		checkScorer(t, w, nodeScorer{f.ScoreNode, f.ScoreNodes, 100})
		for i := range w.alloc {
			want := refKube(typ, rs, byName(w.req), byName(w.alloc[i]), byName(w.used[i]))
			if got := f.ScoreNode(w.req, w.alloc[i], w.used[i]); got != float64(want) {
				t.Fatalf("node %d: %v, reference %d", i, got, want)
			}
		}
	})
}

func TestKoordinatorFitProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, w := schemaT(t), drawWorld(t)
		rs := drawResources(t, true)
		f, err := NewKoordinatorFit(s, rs)
		if err != nil {
			t.Fatal(err)
		}
		one := func(req, alloc, used []int64) float64 { return f.ScoreNode(req, w.nonZero, alloc, used) }
		many := func(req []int64, rows resource.Rows, out []float64) error {
			return f.ScoreNodes(req, w.nonZero, rows, out)
		}
		checkScorer(t, w, nodeScorer{one, many, 100})
		for i := range w.alloc {
			want := refKoordinator(rs, byName(w.req), byName(w.nonZero), byName(w.alloc[i]), byName(w.used[i]))
			if got := one(w.req, w.alloc[i], w.used[i]); got != float64(want) {
				t.Fatalf("node %d: %v, reference %d", i, got, want)
			}
		}
	})
}

func TestVolcanoFitProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, w := schemaT(t), drawWorld(t)
		rs := drawResources(t, true)
		if rapid.Bool().Draw(t, "wildcard") {
			rs = append(rs, Resource{Name: "example.*", Type: MostAllocated, Weight: rapid.Int64Range(0, 5).Draw(t, "wildcard weight")})
		}
		pw := rapid.Int64Range(0, 20).Draw(t, "plugin weight")
		f, err := NewVolcanoFit(s, rs, pw)
		if err != nil {
			t.Fatal(err)
		}
		one := func(req, alloc, used []int64) float64 { return f.ScoreNode(req, nil, alloc, used) }
		many := func(req []int64, rows resource.Rows, out []float64) error { return f.ScoreNodes(req, nil, rows, out) }
		checkScorer(t, w, nodeScorer{one, many, f.MaxScore()})
		for i := range w.alloc {
			want := refVolcano(rs, pw, byName(w.req), byName(w.alloc[i]), byName(w.used[i]))
			got := one(w.req, w.alloc[i], w.used[i])
			if math.Abs(got-want) > 1e-9*math.Max(1, want) {
				t.Fatalf("node %d: %v, exact reference %v", i, got, want)
			}
		}
	})
}

func TestRequestedToCapacityRatioProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, w := schemaT(t), drawWorld(t)
		rs := drawResources(t, false)
		shape := drawShape(t)
		r, err := NewRequestedToCapacityRatio(s, rs, shape)
		if err != nil {
			t.Fatal(err)
		}
		checkScorer(t, w, nodeScorer{r.ScoreNode, r.ScoreNodes, 100})
		for i := range w.alloc {
			want := refRTCR(rs, shape, byName(w.req), byName(w.alloc[i]), byName(w.used[i]))
			if got := r.ScoreNode(w.req, w.alloc[i], w.used[i]); got != float64(want) {
				t.Fatalf("node %d: %v, reference %d", i, got, want)
			}
		}
	})
}

func drawShape(t *rapid.T) []ShapePoint {
	n := rapid.IntRange(1, 5).Draw(t, "points")
	us := rapid.SliceOfNDistinct(rapid.Int64Range(0, 100), n, n, rapid.ID[int64]).Draw(t, "utilizations")
	sortInt64(us)
	shape := make([]ShapePoint, n)
	for i, u := range us {
		shape[i] = ShapePoint{Utilization: u, Score: rapid.Int64Range(0, 10).Draw(t, "score")}
	}
	return shape
}

func sortInt64(v []int64) {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}

// refRTCR evaluates the shape by finding the segment with exact rationals
// and truncating, as kube-scheduler's integer code does.
func refRTCR(rs []Resource, shape []ShapePoint, req, alloc, used map[string]int64) int64 {
	f := func(p int64) int64 {
		if p <= shape[0].Utilization {
			return shape[0].Score * 10
		}
		last := shape[len(shape)-1]
		if p > last.Utilization {
			return last.Score * 10
		}
		for i := 1; i < len(shape); i++ {
			a, b := shape[i-1], shape[i]
			if p <= b.Utilization {
				return a.Score*10 + (b.Score-a.Score)*10*(p-a.Utilization)/(b.Utilization-a.Utilization)
			}
		}
		panic("unreachable")
	}
	var num, den int64
	for _, r := range rs {
		if resource.IsScalar(r.Name) && req[r.Name] == 0 || alloc[r.Name] == 0 {
			continue
		}
		a, requested := alloc[r.Name], used[r.Name]+req[r.Name]
		u := int64(100)
		if requested <= a {
			u = requested * 100 / a
		}
		if s := f(u); s > 0 {
			num += s * r.Weight
			den += r.Weight
		}
	}
	if den == 0 {
		return 0
	}
	q := new(big.Rat).SetFrac64(num, den)
	q.Add(q, big.NewRat(1, 2)) // round half away from zero for positives
	return new(big.Int).Quo(q.Num(), q.Denom()).Int64()
}

func TestBalancedAllocationProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, w := schemaT(t), drawWorld(t)
		var names []string
		for i, n := range propNames {
			if rapid.Bool().Draw(t, "balanced "+n) || (i == len(propNames)-1 && names == nil) {
				names = append(names, n)
			}
		}
		b, err := NewBalancedAllocation(s, names)
		if err != nil {
			t.Fatal(err)
		}
		checkScorer(t, w, nodeScorer{b.ScoreNode, b.ScoreNodes, 100})
		for i := range w.alloc {
			got := b.ScoreNode(w.req, w.alloc[i], w.used[i])
			if got != 0 && (got < 50 || got > 100) {
				t.Fatalf("node %d: %v outside {0} ∪ [50, 100]", i, got)
			}
			if want := refBalanced(names, byName(w.req), byName(w.alloc[i]), byName(w.used[i])); got != float64(want) {
				t.Fatalf("node %d: %v, reference %d", i, got, want)
			}
		}
	})
}

// refBalanced is BalancedAllocation from its description: the population
// standard deviation of the capped utilisation fractions, with and without
// the task (two fractions: half their distance, which is the same number).
func refBalanced(names []string, req, alloc, used map[string]int64) int64 {
	var counted []string
	requested := false
	for _, n := range names {
		if resource.IsScalar(n) && req[n] == 0 {
			continue
		}
		if req[n] != 0 {
			requested = true
		}
		if alloc[n] != 0 {
			counted = append(counted, n)
		}
	}
	if !requested {
		return 0
	}
	score := func(withTask bool) int64 {
		var fs []float64
		for _, n := range counted {
			r := used[n]
			if withTask {
				r += req[n]
			}
			fs = append(fs, math.Min(float64(r)/float64(alloc[n]), 1))
		}
		std := 0.0
		if len(fs) == 2 {
			std = math.Abs(fs[0]-fs[1]) / 2
		} else if len(fs) > 2 {
			mean := 0.0
			for _, f := range fs {
				mean += f
			}
			mean /= float64(len(fs))
			v := 0.0
			for _, f := range fs {
				v += (f - mean) * (f - mean)
			}
			std = math.Sqrt(v / float64(len(fs)))
		}
		return int64((1 - std) * 100)
	}
	return 50 + (50+score(true)-score(false))/2
}

// Monotonicity: on a node where the task fits, MostAllocated never
// decreases and LeastAllocated never increases as used grows. (Volcano
// zeroes a node the task overflows, so the law is stated where it fits.)
func TestMonotoneInUsed(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, w := schemaT(t), drawWorld(t)
		typ := rapid.SampledFrom([]Type{MostAllocated, LeastAllocated}).Draw(t, "type")
		rs := drawResources(t, false)
		for i := range rs {
			rs[i].Type = typ
		}
		kube, _ := NewKubeFit(s, typ, rs)
		koord, _ := NewKoordinatorFit(s, rs)
		volc, _ := NewVolcanoFit(s, rs, 1)
		scorers := map[string]func(req, alloc, used []int64) float64{
			"kube":        kube.ScoreNode,
			"koordinator": func(req, alloc, used []int64) float64 { return koord.ScoreNode(req, req, alloc, used) },
			"volcano":     func(req, alloc, used []int64) float64 { return volc.ScoreNode(req, nil, alloc, used) },
		}
		alloc, used := w.alloc[0], w.used[0]
		slot := rapid.IntRange(0, len(propNames)-1).Draw(t, "slot")
		more := append([]int64(nil), used...)
		more[slot] += rapid.Int64Range(1, 1<<40).Draw(t, "growth")
		fits := true
		for j := range more {
			if more[j]+w.req[j] > alloc[j] && w.req[j] > 0 {
				fits = false
			}
		}
		for name, score := range scorers {
			before, after := score(w.req, alloc, used), score(w.req, alloc, more)
			if name == "volcano" && !fits {
				continue
			}
			if typ == MostAllocated && after < before || typ == LeastAllocated && after > before {
				t.Fatalf("%s %v: used %v → %v moved the score %v → %v", name, typ, used, more, before, after)
			}
		}
	})
}

// Weight-scale invariance: multiplying every resource weight by c leaves
// integer scores unchanged exactly and float scores within rounding.
func TestWeightScaleInvariance(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, w := schemaT(t), drawWorld(t)
		rs := drawResources(t, true)
		largest := int64(1)
		for _, r := range rs {
			largest = max(largest, r.Weight)
		}
		if largest > resource.MaxWeight/2 {
			t.Skip("no room to scale the weights")
		}
		c := rapid.Int64Range(2, min(1000, resource.MaxWeight/largest)).Draw(t, "c")
		scaled := append([]Resource(nil), rs...)
		for i := range scaled {
			scaled[i].Weight *= c
		}
		shape := drawShape(t)
		typ := rapid.SampledFrom([]Type{MostAllocated, LeastAllocated}).Draw(t, "kube type")
		k1, _ := NewKubeFit(s, typ, rs)
		k2, _ := NewKubeFit(s, typ, scaled)
		p1, _ := NewKoordinatorFit(s, rs)
		p2, _ := NewKoordinatorFit(s, scaled)
		r1, _ := NewRequestedToCapacityRatio(s, rs, shape)
		r2, _ := NewRequestedToCapacityRatio(s, scaled, shape)
		v1, _ := NewVolcanoFit(s, rs, 3)
		v2, _ := NewVolcanoFit(s, scaled, 3)
		for i := range w.alloc {
			a, u := w.alloc[i], w.used[i]
			if x, y := k1.ScoreNode(w.req, a, u), k2.ScoreNode(w.req, a, u); x != y {
				t.Fatalf("kube: %v vs %v", x, y)
			}
			if x, y := p1.ScoreNode(w.req, w.nonZero, a, u), p2.ScoreNode(w.req, w.nonZero, a, u); x != y {
				t.Fatalf("koordinator: %v vs %v", x, y)
			}
			if x, y := r1.ScoreNode(w.req, a, u), r2.ScoreNode(w.req, a, u); x != y {
				t.Fatalf("rtcr: %v vs %v", x, y)
			}
			if x, y := v1.ScoreNode(w.req, nil, a, u), v2.ScoreNode(w.req, nil, a, u); math.Abs(x-y) > 1e-9*math.Max(1, x) {
				t.Fatalf("volcano: %v vs %v", x, y)
			}
		}
	})
}

func TestWeightedMean(t *testing.T) {
	if got := WeightedMean([]int64{100, 42, 79}, []int64{2, 1, 1}); got != (200+42+79)/4 {
		t.Errorf("WeightedMean = %d", got)
	}
	if got := WeightedMean(nil, nil); got != 0 {
		t.Errorf("empty WeightedMean = %d", got)
	}
}

// Binpack is resource-strategy-fit with every type MostAllocated and the
// cpu and memory weights always set: it agrees with the exact reference
// built that way, stays in [0, 100 × weight], and never decreases as used
// grows on a node where the task fits.
func TestBinpackProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, w := schemaT(t), drawWorld(t)
		weight := rapid.Int64Range(0, 20).Draw(t, "binpack.weight")
		cpu, mem := rapid.Int64Range(0, 5).Draw(t, "binpack.cpu"), rapid.Int64Range(0, 5).Draw(t, "binpack.memory")
		extra := map[string]int64{}
		for _, n := range propNames[2:] {
			if rapid.Bool().Draw(t, "listed "+n) {
				extra[n] = rapid.Int64Range(0, 5).Draw(t, "weight "+n)
			}
		}
		b, err := NewBinpack(s, weight, cpu, mem, extra)
		if err != nil {
			t.Fatal(err)
		}
		rs := []Resource{{Name: "cpu", Type: MostAllocated, Weight: cpu}, {Name: "memory", Type: MostAllocated, Weight: mem}}
		for n, wt := range extra {
			rs = append(rs, Resource{Name: n, Type: MostAllocated, Weight: wt})
		}
		one := func(req, alloc, used []int64) float64 { return b.ScoreNode(req, nil, alloc, used) }
		many := func(req []int64, rows resource.Rows, out []float64) error { return b.ScoreNodes(req, nil, rows, out) }
		checkScorer(t, w, nodeScorer{one, many, b.MaxScore()})
		for i := range w.alloc {
			want := refVolcano(rs, weight, byName(w.req), byName(w.alloc[i]), byName(w.used[i]))
			if got := one(w.req, w.alloc[i], w.used[i]); math.Abs(got-want) > 1e-9*math.Max(1, want) {
				t.Fatalf("node %d: %v, exact reference %v", i, got, want)
			}
		}
	})
}
