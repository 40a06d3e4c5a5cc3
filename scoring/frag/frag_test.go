package frag

import (
	"math"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

const gpu = "nvidia.com/gpu"

// The hand-worked classes: CPU-only 0.2, a 500-milli shared class 0.5, a
// two-whole-GPU class 0.3.
var hand = []Class{
	{CPU: 4000, Weight: 0.2},
	{CPU: 2000, Devices: resource.DeviceRequest{Count: 1, Each: 500}, Weight: 0.5},
	{CPU: 8000, Devices: resource.DeviceRequest{Count: 2, Each: 1000}, Weight: 0.3},
}

// Idle 1900 milli on GPUs with 0, 300, 600 and 1000 free. CPU-only:
// 0.2 × 1900 = 380. The 500-milli class fits (600 and 1000); it cannot use
// 0 + 300: 0.5 × 300 = 150. The 2-GPU class does not fit: 0.3 × 1900 =
// 570. Total 1100. Short of cpu every class counts all 1900.
func TestMeasureByHand(t *testing.T) {
	m, err := NewMeasure(hand, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cpu  int64
		free []int64
		want float64
	}{
		{10000, []int64{0, 300, 600, 1000}, 1100},
		{1500, []int64{0, 300, 600, 1000}, 1900},
		{10000, []int64{0, 0}, 0},
		{64000, []int64{1000, 1000, 1000}, 600}, // only the CPU-only share
		{64000, nil, 0},
	} {
		if got := m.Node(c.cpu, c.free); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Node(%d, %v) = %v, want %v", c.cpu, c.free, got, c.want)
		}
	}
}

func TestMeasureRejects(t *testing.T) {
	for _, c := range []struct {
		classes []Class
		want    string
	}{
		{nil, "no classes"},
		{[]Class{{CPU: 1, Weight: 0}}, "every class has weight 0"},
		{[]Class{{CPU: 1, Weight: math.NaN()}}, "classes[0].weight: must be in [0, 1000000], got NaN"},
		// A weight of 1e306 made a node's fragmentation +Inf, and a drop
		// Inf − Inf = NaN.
		{[]Class{{CPU: 1, Weight: 1}, {CPU: 1, Weight: 1e306}}, "classes[1].weight: must be in [0, 1000000], got 1e+306"},
		{[]Class{{CPU: 1, Weight: 1}, {CPU: -5, Weight: 1}}, "classes[1].cpu"},
		{[]Class{{Devices: resource.DeviceRequest{Count: 1, Each: 1500}, Weight: 1}}, "classes[0].devices.each: must be in [1, 1000], got 1500"},
		{[]Class{{Devices: resource.DeviceRequest{Count: -1}, Weight: 1}}, "classes[0].devices.count"},
		{[]Class{{Devices: resource.DeviceRequest{Each: 5}, Weight: 1}}, "but no device"},
	} {
		if _, err := NewMeasure(c.classes, 1000); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.classes, err, c.want)
		}
	}
}

// handNodes: row 0 has 16 cores with 6 used and GPUs with 0, 300, 600 and
// 1000 free; row 1 is an idle 4-GPU, 16-core node.
func handNodes(t *testing.T) (*resource.Table, *resource.Devices) {
	t.Helper()
	schema, _ := resource.NewSchema("cpu", gpu)
	tab := resource.NewTable(schema, 2)
	devs, _ := resource.NewDevices(gpu, 1000)
	tab.Add("worked", resource.Vector{16000, 4000}, resource.Vector{6000, 2100})
	devs.AddNode(4)
	tab.Add("idle", resource.Vector{16000, 4000}, nil)
	devs.AddNode(4)
	devs.Take(0, 0, 1000)
	devs.Take(0, 1, 700)
	devs.Take(0, 2, 400)
	return tab, devs
}

// On the worked node a 2-core 500-milli pod on the whole GPU takes the
// fragmentation 1100 → 850 (idle 1400: 280 + 0.5 × 300 + 0.3 × 1400), Δ 250,
// int(sigmoid(0.25) × 100) = 56; on the 600-milli GPU 1100 → 900, Δ 200, 54:
// FGD takes the whole GPU (device 3), where best fit would take the 600.
// On the idle node: 800 → 850, Δ −50, 48.
func TestScorerByHand(t *testing.T) {
	for _, scratch := range []bool{false, true} {
		tab, devs := handNodes(t)
		m, _ := NewMeasure(hand, 1000)
		s, err := NewScorer(tab.Schema(), devs, m, Options{FromScratch: scratch})
		if err != nil {
			t.Fatal(err)
		}
		task := &scoring.Task{Requests: resource.Vector{2000, 500}, Devices: resource.DeviceRequest{Count: 1, Each: 500}}
		out := make([]float64, 2)
		for range 2 { // the second time from memory, unless scratch
			if err := s.ScoreNodes(task, scoring.NewSpan(tab, 0, 2), out); err != nil {
				t.Fatal(err)
			}
			if out[0] != 56 || out[1] != 48 {
				t.Errorf("scratch %v: scores %v, want [56 48]", scratch, out)
			}
		}
		if d := s.Device(task, tab, 0); d != 3 {
			t.Errorf("device %d, want 3", d)
		}
		want := int64(2)
		if scratch {
			want = 5
		}
		if s.Evaluations() != want {
			t.Errorf("scratch %v: %d evaluations, want %d", scratch, s.Evaluations(), want)
		}
		// A change to the node is seen: with 1.5 cores left the pod does
		// not fit and scores 0.
		tab.SetUsed(0, resource.Vector{14500, 2100})
		s.ScoreNodes(task, scoring.NewSpan(tab, 0, 2), out)
		if out[0] != 0 || s.Device(task, tab, 0) != -1 {
			t.Errorf("after the change: %v", out)
		}
	}
	if Score(250, 1000) != 56 || Score(1e9, 1000) != 100 || Score(-1e9, 1000) != 0 {
		t.Error("Score")
	}
}

func TestScorerRejects(t *testing.T) {
	tab, devs := handNodes(t)
	m, _ := NewMeasure(hand, 1000)
	if _, err := NewScorer(nil, devs, m, Options{}); err == nil {
		t.Error("nil schema accepted")
	}
	noCPU, _ := resource.NewSchema(gpu)
	if _, err := NewScorer(noCPU, devs, m, Options{}); err == nil || !strings.Contains(err.Error(), `no "cpu" slot`) {
		t.Errorf("schema without cpu: %v", err)
	}
	s, _ := NewScorer(tab.Schema(), devs, m, Options{Name: "frag"})
	if s.Name() != "frag" || s.MaxScore() != 100 {
		t.Error("name or max")
	}
	out := make([]float64, 2)
	bad := &scoring.Task{Requests: resource.Vector{1, 0}, Devices: resource.DeviceRequest{Count: 1, Each: 2000}}
	if err := s.ScoreNodes(bad, scoring.NewSpan(tab, 0, 2), out); err == nil {
		t.Error("a request beyond a device accepted")
	}
	devs.AddNode(1)
	ok := &scoring.Task{Requests: resource.Vector{1, 0}}
	if err := s.ScoreNodes(ok, scoring.NewSpan(tab, 0, 2), out); err == nil || !strings.Contains(err.Error(), "3 nodes, the table 2") {
		t.Errorf("mismatched view: %v", err)
	}
}

// reference is a slow, direct FGD: copy the node's devices for every
// candidate and sum the classes' fragments by the definition.
func reference(classes []Class, freeCPU int64, free []int64, cpu int64, req resource.DeviceRequest, model string, accepts resource.ModelSet) (float64, int) {
	accepted := func(set resource.ModelSet) bool {
		if set == "" {
			return true
		}
		for _, m := range strings.Split(string(set), "|") {
			if m == model {
				return true
			}
		}
		return false
	}
	fragOf := func(cpuLeft int64, fr []int64) float64 {
		total := 0.0
		for _, c := range classes {
			idle, small, fits := int64(0), int64(0), 0
			for _, g := range fr {
				idle += g
				if g >= c.Devices.Each {
					fits++
				} else {
					small += g
				}
			}
			switch {
			case idle == 0:
			case c.Devices.Count == 0, cpuLeft < c.CPU, fits < c.Devices.Count, !accepted(c.Models):
				total += c.Weight * float64(idle)
			default:
				total += c.Weight * float64(small)
			}
		}
		return total
	}
	fits := 0
	for _, g := range free {
		if g >= req.Each {
			fits++
		}
	}
	if freeCPU < cpu || fits < req.Count || req.Count > 0 && !accepted(accepts) {
		return 0, -1
	}
	before := fragOf(freeCPU, free)
	if req.Count == 1 && req.Each < 1000 {
		best, device := 0.0, -1
		for j, g := range free {
			if g < req.Each {
				continue
			}
			after := append([]int64(nil), free...)
			after[j] -= req.Each
			if s := Score(before-fragOf(freeCPU-cpu, after), 1000); device < 0 || s > best {
				best, device = s, j
			}
		}
		return best, device
	}
	after := append([]int64(nil), free...)
	for range req.Count {
		j := -1
		for k, g := range after {
			if g >= req.Each && g == free[k] && (j < 0 || g < after[j]) {
				j = k
			}
		}
		after[j] -= req.Each
	}
	return Score(before-fragOf(freeCPU-cpu, after), 1000), -1
}

// The scorer agrees with the reference on random nodes and tasks, in its
// remembering and its from-scratch modes, while the nodes change between
// tasks; scores stay in [0, 100].
func TestScorerProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var classes []Class
		for range rapid.IntRange(1, 5).Draw(t, "classes") {
			c := Class{CPU: rapid.Int64Range(0, 16000).Draw(t, "cpu"), Weight: rapid.Float64Range(0, 1).Draw(t, "w"),
				Models: resource.ModelSet(rapid.SampledFrom([]string{"", "", "A10", "A10|T4", "T4"}).Draw(t, "class models"))}
			if n := rapid.IntRange(0, 3).Draw(t, "count"); n > 0 {
				c.Devices = resource.DeviceRequest{Count: n, Each: 1000}
				if n == 1 {
					c.Devices.Each = rapid.Int64Range(1, 1000).Draw(t, "each")
				}
			}
			classes = append(classes, c)
		}
		classes[0].Weight += 0.1
		m, err := NewMeasure(classes, 1000)
		if err != nil {
			t.Fatal(err)
		}
		schema, _ := resource.NewSchema("cpu", gpu)
		tab := resource.NewTable(schema, 4)
		devs, _ := resource.NewDevices(gpu, 1000)
		for i := range 4 {
			n := rapid.IntRange(0, 8).Draw(t, "gpus")
			tab.Add(string(rune('a'+i)), resource.Vector{32000, int64(n) * 1000}, nil)
			devs.AddNode(n)
			devs.SetModel(i, rapid.SampledFrom([]string{"", "A10", "T4", "P100"}).Draw(t, "node model"))
		}
		remember, _ := NewScorer(schema, devs, m, Options{})
		scratch, _ := NewScorer(schema, devs, m, Options{FromScratch: true})
		out, out2 := make([]float64, 4), make([]float64, 4)
		for range rapid.IntRange(1, 12).Draw(t, "tasks") {
			req := resource.DeviceRequest{Count: rapid.IntRange(0, 2).Draw(t, "tcount")}
			if req.Count > 0 {
				req.Each = 1000
				if req.Count == 1 {
					req.Each = rapid.SampledFrom([]int64{100, 250, 500, 810, 1000}).Draw(t, "teach")
				}
			}
			task := &scoring.Task{Requests: resource.Vector{rapid.Int64Range(0, 12000).Draw(t, "tcpu"), req.Total()}, Devices: req,
				Models: resource.ModelSet(rapid.SampledFrom([]string{"", "", "A10", "T4|V100M32"}).Draw(t, "task models"))}
			span := scoring.NewSpan(tab, 0, 4)
			if err := remember.ScoreNodes(task, span, out); err != nil {
				t.Fatal(err)
			}
			if err := scratch.ScoreNodes(task, span, out2); err != nil {
				t.Fatal(err)
			}
			for i := range out {
				used := tab.Used(i)
				want, wantDev := reference(classes, 32000-used[0], devs.Free(i), task.Requests[0], req, devs.Model(i), task.Models)
				if out[i] != want || out2[i] != want || out[i] < 0 || out[i] > 100 {
					t.Fatalf("row %d: remembered %v, scratch %v, reference %v", i, out[i], out2[i], want)
				}
				if d := remember.Device(task, tab, i); d != wantDev {
					t.Fatalf("row %d: device %d, reference %d", i, d, wantDev)
				}
			}
			// Place the task on a random node it fits, changing it.
			row := rapid.IntRange(0, 3).Draw(t, "row")
			if 32000-tab.Used(row)[0] >= task.Requests[0] && devs.Fits(row, req) && (req.Count == 0 || task.Models.Accepts(devs.Model(row))) {
				if req.Count == 1 && req.Each < 1000 {
					devs.Take(row, remember.Device(task, tab, row), req.Each)
				} else {
					devs.Allocate(row, req)
				}
				u := tab.Used(row)
				tab.SetUsed(row, resource.Vector{u[0] + task.Requests[0], u[1] + req.Total()})
			}
		}
	})
}

// The memory is about one table: a new table with the same rows (and so
// the same version counters) is scored afresh, not from memory.
func TestScorerForgetsAnotherTable(t *testing.T) {
	tab, devs := handNodes(t)
	m, _ := NewMeasure(hand, 1000)
	s, _ := NewScorer(tab.Schema(), devs, m, Options{})
	task := &scoring.Task{Requests: resource.Vector{2000, 500}, Devices: resource.DeviceRequest{Count: 1, Each: 500}}
	out := make([]float64, 2)
	s.ScoreNodes(task, scoring.NewSpan(tab, 0, 2), out)
	if out[0] != 56 {
		t.Fatalf("score %v", out[0])
	}
	// The same node with 1.5 cores free, in a new table: the pod does
	// not fit.
	other := resource.NewTable(tab.Schema(), 2)
	other.Add("worked", resource.Vector{16000, 4000}, resource.Vector{14500, 2100})
	other.Add("idle", resource.Vector{16000, 4000}, nil)
	s.ScoreNodes(task, scoring.NewSpan(other, 0, 2), out)
	if out[0] != 0 || out[1] != 48 {
		t.Errorf("scores on the new table %v, want [0 48]", out)
	}
}

// Score is defined everywhere: NaN scores 0, infinite drops the ends of the
// range, and the whole steps are int(sigmoid × 100).
func TestScoreIsDefinedEverywhere(t *testing.T) {
	for _, c := range []struct {
		delta, perDevice, want float64
	}{
		{0, 1000, 50},
		{1000, 1000, 73},
		{-1000, 1000, 26},
		{math.Inf(1), 1000, 100},
		{math.Inf(-1), 1000, 0},
		{math.NaN(), 1000, 0},
		{0, 0, 0}, // 0/0
		{math.Inf(1), math.Inf(1), 0},
	} {
		if got := Score(c.delta, c.perDevice); got != c.want {
			t.Errorf("Score(%v, %v) = %v, want %v", c.delta, c.perDevice, got, c.want)
		}
	}
}

// A class restricted to other models counts all of a node's idle GPU as
// fragment, as one that does not fit: a P100 node with four idle GPUs is
// half fragmented for a workload half of which accepts only V100M32.
func TestMeasureModels(t *testing.T) {
	v100, _ := resource.ParseModelSet("V100M32")
	m, err := NewMeasure([]Class{
		{CPU: 1000, Devices: resource.DeviceRequest{Count: 1, Each: 1000}, Models: v100, Weight: 0.5},
		{CPU: 1000, Devices: resource.DeviceRequest{Count: 1, Each: 1000}, Weight: 0.5},
	}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	free := []int64{1000, 1000, 1000, 1000}
	for model, want := range map[string]float64{"P100": 2000, "": 2000, "V100M32": 0} {
		if got := m.NodeModel(32000, free, model); got != want {
			t.Errorf("model %q: %v, want %v", model, got, want)
		}
	}
	if got := m.Node(32000, free); got != 2000 {
		t.Errorf("Node (model unknown): %v, want 2000", got)
	}
	if _, err := NewMeasure([]Class{{Weight: 1, Models: "T4|A10"}}, 1000); err == nil || !strings.Contains(err.Error(), `classes[0].models: "T4|A10" is not a canonical model set`) {
		t.Errorf("a non-canonical set: %v", err)
	}
}

// NodeModel's one pass over the devices, counting them against every
// distinct amount per device at once, gives what counting them once per
// class gives (partsByClass, FGD's definition), to the bit. The classes'
// amounts per device come from a pool of 1 to maxThresholds distinct ones,
// so that every draw takes the one pass (past maxThresholds NodeModel
// counts per class itself, and there is nothing to compare), and a good
// share of the draws uses the pass at or near its capacity.
func TestNodeModelAgreesWithCountingPerClass(t *testing.T) {
	draws, nearCapacity := 0, 0
	rapid.Check(t, func(t *rapid.T) {
		models := []resource.ModelSet{"", "A10", "T4", "A10|T4"}
		distinct := rapid.IntRange(1, maxThresholds).Draw(t, "distinct amounts per device")
		if rapid.Bool().Draw(t, "at capacity") {
			distinct = maxThresholds
		}
		pool := rapid.SliceOfNDistinct(rapid.Int64Range(1, 1000), distinct, distinct, rapid.ID[int64]).Draw(t, "amounts per device")
		var classes []Class
		class := func(each int64) Class {
			c := Class{CPU: rapid.Int64Range(0, 16).Draw(t, "cpu") * 1000, Weight: float64(rapid.IntRange(1, 100).Draw(t, "weight")) / 37}
			if each > 0 {
				c.Devices = resource.DeviceRequest{Count: rapid.IntRange(1, 4).Draw(t, "count"), Each: each}
				c.Models = rapid.SampledFrom(models).Draw(t, "models")
			}
			return c
		}
		for _, each := range pool { // every amount of the pool, then more classes
			classes = append(classes, class(each))
		}
		for range rapid.IntRange(0, 2*distinct).Draw(t, "more classes") {
			each := int64(0) // a class of cpu only
			if rapid.IntRange(0, 4).Draw(t, "cpu only") > 0 {
				each = rapid.SampledFrom(pool).Draw(t, "each")
			}
			classes = append(classes, class(each))
		}
		m, err := NewMeasure(classes, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.thresholds) != distinct {
			t.Fatalf("%d distinct amounts per device from a pool of %d", len(m.thresholds), distinct)
		}
		draws++
		if len(m.thresholds) >= 3*maxThresholds/4 {
			nearCapacity++
		}
		free := rapid.SliceOfN(rapid.Int64Range(0, 1000), 0, 12).Draw(t, "free")
		freeCPU := rapid.Int64Range(0, 20).Draw(t, "free cpu") * 1000
		model := rapid.SampledFrom([]string{"", "A10", "T4", "V100"}).Draw(t, "model")
		var idle int64
		for _, g := range free {
			idle += g
		}
		want := 0.0
		if idle > 0 {
			want = m.partsByClass(freeCPU, free, nil, model, idle)
		}
		if got := m.NodeModel(freeCPU, free, model); got != want {
			t.Fatalf("NodeModel %v, counting per class %v", got, want)
		}
	})
	if nearCapacity*5 < draws {
		t.Errorf("%d of %d draws counted against at least %d amounts at once; want a fifth", nearCapacity, draws, 3*maxThresholds/4)
	}
}
