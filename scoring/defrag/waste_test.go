package defrag

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// Worked by hand, on devices of 1000:
//   - 600, 600, 400: the best packing is 600+400 and 600 alone, 400 lost;
//     the dual values v(600) = 1000, v(400) = 0 (600+400 is worth 1000, two
//     400s 0) give 2·(1000−600) + (0−400) = 400.
//   - with a 400 pending, the second 600 takes it: 0.
//   - 810 ×3 and 470 ×4 with 160 pending: each 810 takes a 160 (30 lost a
//     device), the 470s pair up (60 lost a pair): 3·30 + 2·60 = 210.
//   - 300 ×3: all on one device, 100 lost.
//   - 700, 700: no share fits beside another, 600 lost.
func TestBoundShareWasteWorked(t *testing.T) {
	for _, tc := range []struct {
		name     string
		held     map[int64]int
		optional []int64
		want     int64
	}{
		{"600 600 400", map[int64]int{600: 2, 400: 1}, nil, 400},
		{"600 600 400 + 400 pending", map[int64]int{600: 2, 400: 1}, []int64{400}, 0},
		{"810×3 470×4 + 160 pending", map[int64]int{810: 3, 470: 4}, []int64{160}, 210},
		{"300×3", map[int64]int{300: 3}, nil, 100},
		{"700 700", map[int64]int{700: 2}, nil, 600},
		{"nothing held", nil, []int64{500}, 0},
	} {
		got, err := shareWaste(1000, tc.held, tc.optional)
		if err != nil || got != tc.want {
			t.Errorf("%s: %d, %v; want %d", tc.name, got, err, tc.want)
		}
	}
}

// The bound from a cluster: whole devices and whole-device pending tasks
// count for nothing, a pod's shares once per device it takes.
func TestBoundShareWasteReadsTheCluster(t *testing.T) {
	table := resource.NewTable(gpuSchema(t), 1)
	devices, err := resource.NewDevices("nvidia.com/gpu", 1000)
	if err != nil {
		t.Fatal(err)
	}
	share := func(name string, count int, each int64) *scoring.Task {
		return &scoring.Task{Name: name, Requests: resource.Vector{1000, 1 << 30, int64(count) * each}, Devices: resource.DeviceRequest{Count: count, Each: each}}
	}
	c := &Cluster{Table: table, Devices: devices, Pods: []Pod{
		{Task: share("two-700s", 2, 700)},
		{Task: share("whole", 1, 1000)},
		{Task: &scoring.Task{Name: "cpu", Requests: resource.Vector{1000, 1 << 30, 0}}},
	}}
	if got, err := BoundShareWaste(c, []*scoring.Task{share("whole pending", 2, 1000)}); err != nil || got != 600 {
		t.Errorf("two 700s: %d, %v; want 600", got, err)
	}
	if got, err := BoundShareWaste(c, []*scoring.Task{share("300 pending", 1, 300)}); err != nil || got != 0 {
		t.Errorf("two 700s, a 300 pending: %d, %v; want 0", got, err)
	}
	for name, err := range map[string]error{
		"no view":     func() error { _, err := BoundShareWaste(&Cluster{Table: table}, nil); return err }(),
		"nil pending": func() error { _, err := BoundShareWaste(c, []*scoring.Task{nil}); return err }(),
		"pending over a device": func() error {
			_, err := BoundShareWaste(c, []*scoring.Task{share("big", 1, 2000)})
			return err
		}(),
		"pod without task": func() error {
			_, err := BoundShareWaste(&Cluster{Table: table, Devices: devices, Pods: []Pod{{}}}, nil)
			return err
		}(),
		"pod over a device": func() error {
			_, err := BoundShareWaste(&Cluster{Table: table, Devices: devices, Pods: []Pod{{Task: share("big", 1, 1500)}}}, nil)
			return err
		}(),
		"grid too fine": func() error { _, err := shareWaste(1<<20, map[int64]int{1: 1}, nil); return err }(),
		"pod of a negative count": func() error {
			_, err := BoundShareWaste(&Cluster{Table: table, Devices: devices, Pods: []Pod{{Task: share("minus", -1, 500)}}}, nil)
			return err
		}(),
		"pending of a negative count": func() error {
			_, err := BoundShareWaste(c, []*scoring.Task{share("minus", -2, 500)})
			return err
		}(),
	} {
		if err == nil || !strings.HasPrefix(err.Error(), "defrag: ") {
			t.Errorf("%s: %v, want an error", name, err)
		}
	}
}

// On random small cases the bound is never above the least waste of any
// packing (every partition of the held shares into devices, each gap
// filled as best the pending sizes can, any number of each), and it is
// the linear relaxation's value: the arc-flow program solved directly,
// rounded up to the grid.
func TestBoundShareWasteIsTheRelaxation(t *testing.T) {
	tight := 0
	rapid.Check(t, func(t *rapid.T) {
		capacity := int64(rapid.IntRange(4, 24).Draw(t, "capacity"))
		step := int64(rapid.SampledFrom([]int{1, 5, 10}).Draw(t, "step"))
		size := rapid.Custom(func(t *rapid.T) int64 { return step * int64(rapid.IntRange(1, int(capacity)-1).Draw(t, "size")) })
		items := rapid.SliceOfN(size, 1, 7).Draw(t, "held")
		optional := rapid.SliceOfN(size, 0, 2).Draw(t, "optional")
		held := map[int64]int{}
		for _, s := range items {
			held[s]++
		}
		got, err := shareWaste(step*capacity, held, optional)
		if err != nil {
			t.Fatal(err)
		}
		least := leastWaste(items, optional, step*capacity)
		if got > least {
			t.Fatalf("bound %d above a packing's waste %d", got, least)
		}
		if got == least {
			tight++
		}
		relaxed := arcFlowWaste(t, held, optional, step, capacity)
		grid := step * capacity // a waste is a whole number of the amounts' divisor
		for _, s := range append(items, optional...) {
			grid = gcd(grid, s)
		}
		if want := grid * int64(math.Ceil(relaxed/float64(grid)-1e-7)); got != want {
			t.Fatalf("bound %d; the arc-flow relaxation is %.6f, %d on the grid", got, relaxed, want)
		}
		// Whatever values the linear program hands it, certify scales them
		// back until no set is overpriced: the bound stays sound.
		w := newWastePacking(int(step*capacity/grid), held, optional, grid)
		extra := make([]float64, w.held)
		for i := range extra {
			extra[i] = rapid.Float64Range(0, float64(capacity)).Draw(t, "extra")
		}
		if any := grid * w.certify(extra); any > least {
			t.Fatalf("certified at values %v: %d, above a packing's waste %d", extra, any, least)
		}
	})
	if tight == 0 {
		t.Error("the bound never met a packing's waste")
	}
}

// leastWaste is the least waste over every partition of the held sizes
// into devices of capacity, each device's gap filled by the optional sizes
// as much as they can.
func leastWaste(items, optional []int64, capacity int64) int64 {
	fill := make([]int64, capacity+1) // the most the optional sizes fill of a gap
	for f := int64(1); f <= capacity; f++ {
		fill[f] = fill[f-1]
		for _, s := range optional {
			if s <= f {
				fill[f] = max(fill[f], fill[f-s]+s)
			}
		}
	}
	best := int64(math.MaxInt64)
	var bins []int64
	var place func(i int, waste int64)
	place = func(i int, waste int64) {
		if i == len(items) {
			total := waste
			for _, used := range bins {
				gap := capacity - used
				total += gap - fill[gap]
			}
			best = min(best, total)
			return
		}
		for b := range bins {
			if bins[b]+items[i] <= capacity {
				bins[b] += items[i]
				place(i+1, waste)
				bins[b] -= items[i]
			}
		}
		bins = append(bins, items[i])
		place(i+1, waste)
		bins = bins[:len(bins)-1]
	}
	place(0, 0)
	return best
}

// arcFlowWaste solves the arc-flow program (Valério de Carvalho) with
// gonum's simplex: a path of arcs from 0 to the capacity per device, an
// arc per share and loss arcs to the end; every held share covered, the
// optional ones as often as wanted; the loss minimised. Amounts in steps
// of the grid, the result in amounts.
func arcFlowWaste(t *rapid.T, held map[int64]int, optional []int64, step, capacity int64) float64 {
	c := int(capacity)
	var sizes []int
	for s := range held {
		sizes = append(sizes, int(s/step))
	}
	for _, s := range optional {
		if !slices.Contains(sizes, int(s/step)) {
			sizes = append(sizes, int(s/step))
		}
	}
	isOptional := func(s int) bool { return slices.Contains(optional, int64(s)*step) }
	type arc struct{ from, to, size int }
	var arcs []arc
	for u := range c {
		for _, s := range sizes {
			if u+s <= c {
				arcs = append(arcs, arc{u, u + s, s})
			}
		}
		arcs = append(arcs, arc{u, c, 0}) // loss
	}
	// rows: conservation at nodes 0..c-1 (out − in − back = 0 at 0), then a
	// row per size; columns: arcs, the flow back from c to 0, a surplus per
	// optional size.
	var surplus []int
	for i, s := range sizes {
		if isOptional(s) {
			surplus = append(surplus, i)
		}
	}
	rows, cols := c+len(sizes), len(arcs)+1+len(surplus)
	a := mat.NewDense(rows, cols, nil)
	b := make([]float64, rows)
	cost := make([]float64, cols)
	for j, x := range arcs {
		a.Set(x.from, j, a.At(x.from, j)+1)
		if x.to < c {
			a.Set(x.to, j, a.At(x.to, j)-1)
		}
		if x.size == 0 {
			cost[j] = float64(c - x.from)
			continue
		}
		i := slices.Index(sizes, x.size)
		a.Set(c+i, j, 1)
	}
	a.Set(0, len(arcs), -1)
	for i, s := range sizes {
		b[c+i] = float64(held[int64(s)*step])
	}
	for k, i := range surplus {
		a.Set(c+i, len(arcs)+1+k, -1)
	}
	f, _, err := lp.Simplex(cost, a, b, 1e-10, nil)
	if err != nil {
		t.Fatalf("arc flow: %v", err)
	}
	return f * float64(step)
}

// Whatever the amounts, the bound is an error that says what is wrong, or
// a waste between 0 and what the shares leave with a device each.
func TestBoundShareWasteOnAnyAmounts(t *testing.T) {
	bounded := 0
	rapid.Check(t, func(t *rapid.T) {
		per := rapid.OneOf(rapid.Int64Range(1, MaxWasteGrid), rapid.Int64Range(1, 1<<40)).Draw(t, "per")
		amount := rapid.Custom(func(t *rapid.T) int64 {
			return rapid.OneOf(rapid.Int64Range(1, per), rapid.Int64Range(1, min(per, 64))).Draw(t, "amount")
		})
		held := map[int64]int{}
		for _, s := range rapid.SliceOfN(amount, 0, 6).Draw(t, "held") {
			held[s] += rapid.IntRange(1, 1<<22).Draw(t, "count")
		}
		alone := 0.0
		for s, n := range held {
			alone += float64(n) * float64(per-s)
		}
		optional := rapid.SliceOfN(amount, 0, 3).Draw(t, "optional")
		got, err := shareWaste(per, held, optional)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "defrag: ") {
				t.Fatalf("error %q", err)
			}
			return
		}
		if got < 0 || float64(got) > alone {
			t.Fatalf("waste %d of shares that leave %v alone", got, alone)
		}
		bounded++
	})
	if bounded == 0 {
		t.Error("every case was refused")
	}
	t.Logf("%d cases bounded", bounded)
}
