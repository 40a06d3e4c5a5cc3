package resource

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// halves is a small GPU that divides as a MIG GPU does: 4 memory slices
// (counters of 1), 40 of memory (GiB) and 4 compute units; a "half" at
// slice 0 or 2, a "quarter" at each slice (a quarter at slice 3 has no
// compute of its own, as an A100's eighth memory slice has none), and the
// whole GPU.
func halves(t testing.TB) *Layout {
	t.Helper()
	part := func(typ string, memory, compute int64, slices ...int) Part {
		c := []int64{compute, memory, 0, 0, 0, 0}
		for _, s := range slices {
			c[2+s] = 1
		}
		return Part{Type: typ, Consumes: c}
	}
	l, err := NewLayout([]int64{4, 40, 1, 1, 1, 1}, []Part{
		part("whole", 40, 4, 0, 1, 2, 3),
		part("quarter", 10, 1, 0), part("quarter", 10, 1, 1), part("quarter", 10, 1, 2), part("quarter", 10, 0, 3),
		part("half", 20, 2, 0, 1), part("half", 20, 2, 2, 3),
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// What a layout's counters left say: which parts fit, the first of a
// type, and how much of the device is free (its scarcest counter above
// 1: memory or compute, not the slots).
func TestLayoutCountersDecide(t *testing.T) {
	l := halves(t)
	whole := l.Counters()
	if got := l.Types(); !slices.Equal(got, []string{"half", "quarter", "whole"}) {
		t.Fatalf("types %v", got)
	}
	if l.FirstFit("half", whole) != 5 || l.FirstFit("whole", whole) != 0 || l.FirstFit("eighth", whole) != -1 {
		t.Fatal("first fit on a whole device")
	}
	if l.Free(whole, 1000) != 1000 {
		t.Fatalf("whole device free %d", l.Free(whole, 1000))
	}
	// A quarter at slice 0, then one at slice 2: half of the memory is
	// left, but no half fits (each half has a slice taken), and no whole.
	left := l.Take(l.FirstFit("quarter", whole), whole)
	left = l.Take(3, left)
	if !slices.Equal(left, []int64{2, 20, 0, 1, 0, 1}) {
		t.Fatalf("left %v", left)
	}
	if l.FirstFit("half", left) != -1 || l.FirstFit("whole", left) != -1 || l.FirstFit("quarter", left) != 2 {
		t.Fatal("first fit after two quarters")
	}
	if got := l.Free(left, 1000); got != 500 {
		t.Fatalf("free %d, want 500 (half of memory and compute)", got)
	}
	// Compute scarcer than memory: a quarter at slice 3 takes no compute.
	left = l.Take(4, whole) // quarter at 3
	left = l.Take(5, left)  // half at 0
	if got := l.Free(left, 1000); got != 250 || l.FirstFit("quarter", left) != 3 {
		t.Fatalf("free %d (want 250: memory 10 of 40), first quarter %d", got, l.FirstFit("quarter", left))
	}
	// Rounding down, in 128 bits: 1 of 3 left of a counter near MaxAmount.
	big3, err := NewLayout([]int64{3 * (MaxAmount / 3)}, []Part{{Type: "p", Consumes: []int64{MaxAmount / 3}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := big3.Free([]int64{MaxAmount / 3}, 1000); got != 333 {
		t.Fatalf("a third free is %d", got)
	}
	// Slots alone are measured.
	slots, err := NewLayout([]int64{1, 1, 1, 1}, []Part{{Type: "one", Consumes: []int64{1, 0, 0, 0}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := slots.Free([]int64{0, 1, 1, 1}, 1000); got != 0 {
		t.Fatalf("slots: free %d, want 0 (the scarcest slot is taken)", got)
	}
}

func TestLayoutErrors(t *testing.T) {
	for _, c := range []struct {
		counters []int64
		parts    []Part
		want     string
	}{
		{nil, nil, "1 to 64 counters, got 0"},
		{make([]int64, 65), nil, "1 to 64 counters, got 65"},
		{[]int64{-1}, nil, "counters[0]: must be in [0, 9007199254740992], got -1"},
		{[]int64{4}, []Part{{Type: "", Consumes: []int64{1}}}, "parts[0].type: empty"},
		{[]int64{4}, []Part{{Type: "a", Consumes: []int64{1, 1}}}, "parts[0] (a).consumes: 2 counters, the layout has 1"},
		{[]int64{4}, []Part{{Type: "a", Consumes: []int64{5}}}, "parts[0] (a).consumes[0]: must be in [0, 4], got 5"},
		{[]int64{4}, make([]Part, 257), "at most 256 parts, got 257"},
	} {
		if _, err := NewLayout(c.counters, c.parts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewLayout(%v, …): %v, want %q", c.counters, err, c.want)
		}
	}
	l := halves(t)
	if err := l.CheckLeft([]int64{4, 40, 1, 1, 1}); err == nil || !strings.Contains(err.Error(), "5 counters left, the layout has 6") {
		t.Error(err)
	}
	if err := l.CheckLeft([]int64{4, 41, 1, 1, 1, 1}); err == nil || !strings.Contains(err.Error(), "counter 1: left must be in [0, 40], got 41") {
		t.Error(err)
	}
	d, _ := NewDevices("nvidia.com/gpu", 1000)
	d.AddNode(2)
	for _, c := range []struct {
		units []Partitioned
		want  string
	}{
		{[]Partitioned{{Device: 2, Layout: l, Left: l.Counters()}}, "partitioned[0]: no device 2"},
		{[]Partitioned{{Device: 0, Layout: l, Left: l.Counters()}, {Device: 0, Layout: l, Left: l.Counters()}}, "partitioned[1]: device 0 listed twice"},
		{[]Partitioned{{Device: 1}}, "partitioned[0]: no layout"},
		{[]Partitioned{{Device: 1, Layout: l, Left: []int64{1}}}, "partitioned[0]: layout: 1 counters left"},
	} {
		if err := d.SetPartitioned(0, c.units); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SetPartitioned: %v, want %q", err, c.want)
		}
	}
	if err := d.SetPartitioned(1, nil); err == nil || !strings.Contains(err.Error(), "node row 1 is outside [0, 1)") {
		t.Error(err)
	}
	if d.Version(0) != 0 || d.Partitioned(0) != nil {
		t.Error("a failed SetPartitioned changed the node")
	}
}

// A node's partitioned devices: their free amounts follow the counters,
// TakePart takes first fit device by device, and the view's row changes
// (SetCount, Remove) forget or move them with the node's devices.
func TestDevicesPartitioned(t *testing.T) {
	l := halves(t)
	d, _ := NewDevices("nvidia.com/gpu", 1000)
	d.AddNode(3)
	d.AddNode(1)
	oneQuarter := l.Take(1, l.Counters())
	if err := d.SetPartitioned(0, []Partitioned{{Device: 2, Layout: l, Left: l.Counters()}, {Device: 0, Layout: l, Left: oneQuarter}}); err != nil {
		t.Fatal(err)
	}
	if got := d.Free(0); !slices.Equal(got, []int64{750, 1000, 1000}) {
		t.Fatalf("free %v", got)
	}
	if !d.FitsPart(0, "whole", 1) || d.FitsPart(0, "whole", 2) || !d.FitsPart(0, "half", 2) || d.FitsPart(0, "eighth", 1) || !d.FitsPart(1, "x", 0) {
		t.Fatal("fits part")
	}
	// Halves: device 2 first (the order given), then device 0's second half.
	got, err := d.TakePart(0, "half", 2, nil)
	if err != nil || !slices.Equal(got, []int{2, 0}) {
		t.Fatal(got, err)
	}
	if f := d.Free(0); !slices.Equal(f, []int64{250, 1000, 500}) {
		t.Fatalf("free %v", f)
	}
	before := d.ClonePartitioned(0)
	v := d.Version(0)
	if _, err := d.TakePart(0, "half", 2, nil); err == nil || !strings.Contains(err.Error(), "fewer than 2 devices that can take a half part") {
		t.Fatal(err)
	}
	if d.Version(0) != v || !slices.EqualFunc(before, d.Partitioned(0), func(a, b Partitioned) bool { return slices.Equal(a.Left, b.Left) }) {
		t.Fatal("a failed TakePart changed the node")
	}
	// Remove moves the last node, and what it records, into row 0.
	d.SetPartitioned(1, []Partitioned{{Device: 0, Layout: l, Left: l.Counters()}})
	if _, err := d.Remove(0); err != nil {
		t.Fatal(err)
	}
	if d.Len() != 1 || len(d.Partitioned(0)) != 1 || d.Partitioned(0)[0].Layout != l {
		t.Fatalf("after Remove: %v", d.Partitioned(0))
	}
	if err := d.SetCount(0, 2); err != nil || d.Partitioned(0) != nil {
		t.Fatalf("SetCount kept %v (%v)", d.Partitioned(0), err)
	}
}

// Free is the least share left over the measured counters, rounded down
// (exact rationals as the reference), and FirstFit the first part of the
// type that fits, over random layouts and states.
func TestLayoutAgreesWithItsDefinition(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.IntRange(1, 6).Draw(t, "counters")
		counters := rapid.SliceOfN(rapid.Int64Range(0, 50), k, k).Draw(t, "totals")
		var parts []Part
		for range rapid.IntRange(0, 8).Draw(t, "parts") {
			c := make([]int64, k)
			for j := range c {
				c[j] = rapid.Int64Range(0, counters[j]).Draw(t, "consumes")
			}
			parts = append(parts, Part{Type: rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "type"), Consumes: c})
		}
		l, err := NewLayout(counters, parts)
		if err != nil {
			t.Fatal(err)
		}
		left := make([]int64, k)
		for j := range left {
			left[j] = rapid.Int64Range(0, counters[j]).Draw(t, "left")
		}
		per := rapid.Int64Range(1, 1000).Draw(t, "perDevice")
		slots := true
		for _, c := range counters {
			slots = slots && c <= 1
		}
		least := big.NewRat(1, 1)
		for j, c := range counters {
			if c == 0 || !slots && c <= 1 {
				continue
			}
			if r := big.NewRat(left[j], c); r.Cmp(least) < 0 {
				least = r
			}
		}
		want := new(big.Int).Quo(new(big.Int).Mul(least.Num(), big.NewInt(per)), least.Denom()).Int64()
		if got := l.Free(left, per); got != want {
			t.Fatalf("Free %d, want %d", got, want)
		}
		for _, typ := range []string{"a", "b", "c"} {
			first := -1
			for p, part := range parts {
				fits := true
				for j := range part.Consumes {
					fits = fits && part.Consumes[j] <= left[j]
				}
				if part.Type == typ && fits {
					first = p
					break
				}
			}
			if got := l.FirstFit(typ, left); got != first {
				t.Fatalf("FirstFit(%s) %d, want %d", typ, got, first)
			}
		}
	})
}

// memoryShares is a device whose memory (80, in GiB) claims share: a type
// "memory=<n>" is a share of n.
func memoryShares(t testing.TB) *Layout {
	t.Helper()
	l, err := NewShareLayout([]int64{80}, func(typ string) ([]int64, bool) {
		var n int64
		if _, err := fmt.Sscanf(typ, "memory=%d", &n); err != nil {
			return nil, false
		}
		return []int64{n}, true
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A device that claims share is a layout whose parts are shares of any
// size: one fits while its capacity is left, to the unit; a type that is
// no share, or a share larger than the device, fits nowhere.
func TestShareLayout(t *testing.T) {
	l := memoryShares(t)
	for _, c := range []struct {
		typ  string
		left int64
		fits bool
	}{
		{"memory=5", 5, true}, {"memory=5", 4, false}, {"memory=80", 80, true}, {"memory=81", 80, false},
		{"memory=-1", 80, false}, {"3g.40gb", 80, false}, {"memory=5", 0, false},
	} {
		if _, ok := l.Fit(c.typ, []int64{c.left}); ok != c.fits {
			t.Errorf("%s with %d left: fits %v, want %v", c.typ, c.left, ok, c.fits)
		}
	}
	if got := l.Free([]int64{5}, 1000); got != 62 {
		t.Errorf("free %d, want 62 (5 of 80, rounded down)", got)
	}
	if _, err := NewShareLayout([]int64{80}, nil); err == nil {
		t.Error("a share layout without a rule")
	}
	d, _ := NewDevices("nvidia.com/gpu", 1000)
	d.AddNode(2)
	d.SetPartitioned(0, []Partitioned{{Device: 0, Layout: l, Left: []int64{20}}, {Device: 1, Layout: l, Left: []int64{80}}})
	got, err := d.TakePart(0, "memory=30", 1, nil)
	if err != nil || !slices.Equal(got, []int{1}) || !slices.Equal(d.Partitioned(0)[1].Left, []int64{50}) || d.Free(0)[1] != 625 {
		t.Fatalf("took %v (%v): %v, free %v", got, err, d.Partitioned(0), d.Free(0))
	}
}
