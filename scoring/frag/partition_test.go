package frag

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// a100 is an A100 80GB as a layout, in NVIDIA's dynamic MIG terms (the
// counters multiprocessors, memory in GiB, copy engines, decoders and
// memory slices 0–7; a part per profile and placement, in the order its
// driver lists them): 1g.10gb at slices 0–6, 2g.20gb at 0, 2, 4, 3g.40gb at
// 0 and 4, 4g.40gb and 7g.80gb at 0.
func a100(t testing.TB) *resource.Layout {
	t.Helper()
	profiles := []struct {
		name                     string
		sm, memory, copies, decs int64
		slices                   int
		starts                   []int
	}{
		{"1g.10gb", 14, 10, 1, 0, 1, []int{0, 1, 2, 3, 4, 5, 6}},
		{"2g.20gb", 28, 20, 2, 1, 2, []int{0, 2, 4}},
		{"3g.40gb", 42, 40, 3, 2, 4, []int{0, 4}},
		{"4g.40gb", 56, 40, 4, 2, 4, []int{0}},
		{"7g.80gb", 98, 80, 7, 5, 8, []int{0}},
	}
	var parts []resource.Part
	for _, p := range profiles {
		for _, start := range p.starts {
			c := []int64{p.sm, p.memory, p.copies, p.decs, 0, 0, 0, 0, 0, 0, 0, 0}
			for s := start; s < start+p.slices; s++ {
				c[4+s] = 1
			}
			parts = append(parts, resource.Part{Type: p.name, Consumes: c})
		}
	}
	l, err := resource.NewLayout([]int64{98, 80, 7, 5, 1, 1, 1, 1, 1, 1, 1, 1}, parts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// taking is what is left of an A100 once the profiles are taken, each at
// the placement starting at its memory slice ("1g.10gb@4").
func taking(t testing.TB, l *resource.Layout, placed ...string) []int64 {
	t.Helper()
	left := l.Counters()
next:
	for _, p := range placed {
		for k := range l.Parts() {
			part := l.Part(k)
			start := slices.Index(part.Consumes[4:], 1)
			if fmt.Sprintf("%s@%d", part.Type, start) == p {
				if !l.PartFits(k, left) {
					t.Fatalf("%s does not fit %v", p, left)
				}
				left = l.Take(k, left)
				continue next
			}
		}
		t.Fatalf("no part %s", p)
	}
	return left
}

// migNodes are nodes of one A100 each, 16 cores free, with the profiles
// placed on them.
func migNodes(t testing.TB, l *resource.Layout, nodes ...[]string) (*resource.Table, *resource.Devices) {
	t.Helper()
	schema, _ := resource.NewSchema("cpu", gpu)
	tab := resource.NewTable(schema, len(nodes))
	devs, _ := resource.NewDevices(gpu, 1000)
	for i, placed := range nodes {
		tab.Add(fmt.Sprint("mig-", i), resource.Vector{16000, 1000}, nil)
		devs.AddNode(1)
		if err := devs.SetPartitioned(i, []resource.Partitioned{{Device: 0, Layout: l, Left: taking(t, l, placed...)}}); err != nil {
			t.Fatal(err)
		}
	}
	return tab, devs
}

// migClass is a class of one MIG profile, its share of an A100 in memory.
func migClass(profile string, each int64, weight float64) Class {
	return Class{Devices: resource.DeviceRequest{Count: 1, Each: each}, Partition: profile, Weight: weight}
}

func migTask(profile string, each int64) *scoring.Task {
	return &scoring.Task{Requests: resource.Vector{0, each}, Devices: resource.DeviceRequest{Count: 1, Each: each}, Partition: profile}
}

// FGD over MIG partitions, worked by hand. Classes 7g.80gb 0.25, 3g.40gb
// 0.25, 1g.10gb 0.5; mig-0's A100 is whole, mig-1's holds a 1g.10gb at
// slice 0 (875 of 1000 free: 70 of 80 GiB). A 3g.40gb on mig-0 (at slice
// 0, first fit) leaves 500 where no 7g.80gb fits: fragmentation 0 → 0.25 ×
// 500 = 125, Δ −125, int(sigmoid(−0.125) × 100) = 46. On mig-1 (at slice 4)
// it leaves 375: no 7g.80gb before or after (0.25 × 875 → 0.25 × 375) and
// no 3g.40gb after (0 → 0.25 × 375), 218.75 → 187.5, Δ 31.25, 50. FGD puts
// the 3g.40gb beside the 1g.10gb, and mig-0 keeps its 7g.80gb.
//
// Then a 1g.10gb, classes 3g.40gb and 1g.10gb 0.5 each: mig-0 whole,
// mig-1 with 1g.10gb at slices 0 and 4 (750 free, and no 3g.40gb: each
// half has a slice taken). On mig-0 (slice 0) a 3g.40gb still fits at 4:
// Δ 0, 50. On mig-1 (slice 1) 0.5 × 750 → 0.5 × 625, Δ 62.5, 51. Counted
// by free amounts alone the two tie at 50 (750 and 625 are both at least
// a 3g.40gb's 500): the partitions decide.
func TestFGDOverPartitionsByHand(t *testing.T) {
	l := a100(t)
	for _, c := range []struct {
		name    string
		classes []Class
		nodes   [][]string
		task    *scoring.Task
		want    []float64
		scalar  []float64 // the same classes without their partitions
	}{
		{"3g.40gb beside a 1g.10gb", []Class{migClass("7g.80gb", 1000, 0.25), migClass("3g.40gb", 500, 0.25), migClass("1g.10gb", 125, 0.5)},
			[][]string{nil, {"1g.10gb@0"}}, migTask("3g.40gb", 500), []float64{46, 50}, []float64{46, 50}},
		{"1g.10gb where no 3g.40gb fits", []Class{migClass("3g.40gb", 500, 0.5), migClass("1g.10gb", 125, 0.5)},
			[][]string{nil, {"1g.10gb@0", "1g.10gb@4"}}, migTask("1g.10gb", 125), []float64{50, 51}, []float64{50, 50}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, scratch := range []bool{false, true} {
				tab, devs := migNodes(t, l, c.nodes...)
				m, err := NewMeasure(c.classes, 1000)
				if err != nil {
					t.Fatal(err)
				}
				s, _ := NewScorer(tab.Schema(), devs, m, Options{FromScratch: scratch})
				out := make([]float64, tab.Len())
				if err := s.ScoreNodes(c.task, scoring.NewSpan(tab, 0, tab.Len()), out); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(out, c.want) {
					t.Errorf("scratch %v: scores %v, want %v", scratch, out, c.want)
				}
			}
			// By free amounts: the classes and the task without partitions.
			tab, devs := migNodes(t, l, c.nodes...)
			scalar := slices.Clone(c.classes)
			for i := range scalar {
				scalar[i].Partition = ""
			}
			m, _ := NewMeasure(scalar, 1000)
			s, _ := NewScorer(tab.Schema(), devs, m, Options{})
			task := *c.task
			task.Partition = ""
			out := make([]float64, tab.Len())
			s.ScoreNodes(&task, scoring.NewSpan(tab, 0, tab.Len()), out)
			if !slices.Equal(out, c.scalar) {
				t.Errorf("by free amounts: %v, want %v", out, c.scalar)
			}
		})
	}
}

// A node a task of parts cannot take (no device with a fitting part, a
// device without a layout) scores 0, and the device filter rejects it; a
// placer binds it to a part first fit.
func TestPartsThatDoNotFit(t *testing.T) {
	l := a100(t)
	tab, devs := migNodes(t, l, []string{"1g.10gb@0", "1g.10gb@4"}, nil)
	tab.Add("plain", resource.Vector{16000, 1000}, nil)
	devs.AddNode(1)
	m, _ := NewMeasure([]Class{migClass("3g.40gb", 500, 1)}, 1000)
	s, _ := NewScorer(tab.Schema(), devs, m, Options{})
	out := make([]float64, 3)
	if err := s.ScoreNodes(migTask("3g.40gb", 500), scoring.NewSpan(tab, 0, 3), out); err != nil {
		t.Fatal(err)
	}
	if out[0] != 0 || out[1] == 0 || out[2] != 0 {
		t.Errorf("scores %v, want 0 where no 3g.40gb fits", out)
	}
	// A placer with the device filter: the same nodes feasible; binding
	// takes the first 3g.40gb that fits on mig-1 (slices 0–3), and a second
	// one takes the other half; a third fits nowhere.
	f, _ := scoring.NewDeviceFilter(devs)
	if got, want := f.Explain(migTask("3g.40gb", 500), tab, 0, 0), "Insufficient nvidia.com/gpu devices: 0 of 1 can take a 3g.40gb part, 1 needed"; got != want {
		t.Errorf("explain %q, want %q", got, want)
	}
	pipe, err := scoring.NewPipeline(tab.Schema(), []scoring.Filter{f}, []scoring.WeightedScorer{{Scorer: s, Weight: 1}})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := scoring.NewPlacer(pipe, tab, scoring.PlacerOptions{Devices: devs})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{1, 1, -1} {
		row, err := pl.Place(migTask("3g.40gb", 500))
		if err != nil || row != want {
			t.Fatalf("3g.40gb %d: row %d (%v), want %d", i, row, err, want)
		}
	}
	if got := devs.Free(1); got[0] != 0 || devs.FitsPart(1, "1g.10gb", 1) {
		t.Errorf("mig-1 after two 3g.40gb: free %v, %v", got, devs.Partitioned(1)[0].Left)
	}
}

// referenceParts is NodeParts by its definition, class by class: a class
// of parts can use a device with a part of its type whose consumption the
// counters left cover (every part looked at), the others a device with
// Each free.
func referenceParts(classes []Class, freeCPU int64, free []int64, parts []resource.Partitioned) float64 {
	var idle int64
	for _, f := range free {
		idle += f
	}
	if idle == 0 {
		return 0
	}
	total := 0.0
	for _, c := range classes {
		if c.Devices.Count == 0 || freeCPU < c.CPU {
			total += c.Weight * float64(idle)
			continue
		}
		usable := make([]bool, len(free))
		if c.Partition == "" {
			for j, f := range free {
				usable[j] = f >= c.Devices.Each
			}
		} else {
			for _, p := range parts {
				for k := range p.Layout.Parts() {
					part := p.Layout.Part(k)
					fits := part.Type == c.Partition
					for x := range part.Consumes {
						fits = fits && part.Consumes[x] <= p.Left[x]
					}
					usable[p.Device] = usable[p.Device] || fits
				}
			}
		}
		n, frag := 0, int64(0)
		for j, u := range usable {
			if u {
				n++
			} else {
				frag += free[j]
			}
		}
		if n < c.Devices.Count {
			frag = idle
		}
		total += c.Weight * float64(frag)
	}
	return total
}

// NodeParts agrees with its definition on random A100 states beside plain
// devices, and equals NodeModel for classes without partitions; a task of
// parts scores in [0, 100] the same with memory and from scratch.
func TestNodePartsAgreesWithItsDefinition(t *testing.T) {
	l := a100(t)
	profiles := []string{"1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"}
	rapid.Check(t, func(t *rapid.T) {
		var classes []Class
		for range rapid.IntRange(1, 5).Draw(t, "classes") {
			c := Class{CPU: rapid.Int64Range(0, 4000).Draw(t, "cpu"), Weight: float64(rapid.IntRange(0, 4).Draw(t, "weight"))}
			switch rapid.IntRange(0, 2).Draw(t, "kind") {
			case 1:
				c.Devices = resource.DeviceRequest{Count: rapid.IntRange(1, 2).Draw(t, "count"), Each: rapid.Int64Range(1, 1000).Draw(t, "each")}
			case 2:
				c.Devices = resource.DeviceRequest{Count: rapid.IntRange(1, 2).Draw(t, "count"), Each: 125}
				c.Partition = rapid.SampledFrom(profiles).Draw(t, "partition")
			}
			classes = append(classes, c)
		}
		classes[0].Weight++
		m, err := NewMeasure(classes, 1000)
		if err != nil {
			t.Fatal(err)
		}
		n := rapid.IntRange(0, 4).Draw(t, "devices")
		devs, _ := resource.NewDevices(gpu, 1000)
		devs.AddNode(n)
		for j := range n {
			devs.Take(0, j, rapid.Int64Range(0, 1000).Draw(t, "taken"))
		}
		var units []resource.Partitioned
		for j := range n {
			if !rapid.Bool().Draw(t, "partitioned") {
				continue
			}
			left := l.Counters()
			for range rapid.IntRange(0, 4).Draw(t, "placed") {
				if k := rapid.IntRange(0, l.Parts()-1).Draw(t, "part"); l.PartFits(k, left) {
					left = l.Take(k, left)
				}
			}
			units = append(units, resource.Partitioned{Device: j, Layout: l, Left: left})
		}
		if err := devs.SetPartitioned(0, units); err != nil {
			t.Fatal(err)
		}
		freeCPU := rapid.Int64Range(0, 8000).Draw(t, "freeCPU")
		free, parts := devs.Free(0), devs.Partitioned(0)
		got, want := m.NodeParts(freeCPU, free, parts, ""), referenceParts(classes, freeCPU, free, parts)
		if got != want {
			t.Fatalf("NodeParts %v, definition %v", got, want)
		}
		if byClass := m.partsByClass(freeCPU, free, parts, "", devs.FreeTotal(0)); devs.FreeTotal(0) > 0 && m.partitioned && len(parts) > 0 && byClass != got {
			t.Fatalf("NodeParts %v, class by class %v", got, byClass)
		}
		if !m.partitioned && got != m.NodeModel(freeCPU, free, "") {
			t.Fatalf("NodeParts %v, NodeModel %v", got, m.NodeModel(freeCPU, free, ""))
		}
		schema, _ := resource.NewSchema("cpu", gpu)
		tab := resource.NewTable(schema, 1)
		tab.Add("n", resource.Vector{8000, 4000}, resource.Vector{8000 - freeCPU, 0})
		task := migTask(rapid.SampledFrom(profiles).Draw(t, "task"), 125)
		var scores [2]float64
		for k, scratch := range []bool{false, true} {
			s, _ := NewScorer(schema, devs, m, Options{FromScratch: scratch})
			out := make([]float64, 1)
			if err := s.ScoreNodes(task, scoring.NewSpan(tab, 0, 1), out); err != nil {
				t.Fatal(err)
			}
			scores[k] = out[0]
		}
		if scores[0] != scores[1] || !(scores[0] >= 0 && scores[0] <= 100) {
			t.Fatalf("scores %v", scores)
		}
		if (scores[0] > 0) != devs.FitsPart(0, task.Partition, 1) && scores[0] > 0 {
			t.Fatalf("scored %v where no %s fits", scores[0], task.Partition)
		}
	})
}

// A learning FGD counts a task of parts as a class of that partition: it
// learns the MIG profiles the pods it sees ask for, and scores by them
// (the second case of TestFGDOverPartitionsByHand, learned).
func TestLearningFGDLearnsPartitions(t *testing.T) {
	l := a100(t)
	tab, devs := migNodes(t, l, nil, []string{"1g.10gb@0", "1g.10gb@4"})
	h, err := NewHistogram(8, 1000)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewLearningScorer(tab.Schema(), devs, h, 2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Observe(migTask("3g.40gb", 500))
	s.Observe(migTask("1g.10gb", 125))
	classes := h.Classes()
	if len(classes) != 2 || classes[0].Partition == "" || classes[1].Partition == "" {
		t.Fatalf("learned %+v", classes)
	}
	out := make([]float64, 2)
	if err := s.ScoreNodes(migTask("1g.10gb", 125), scoring.NewSpan(tab, 0, 2), out); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out, []float64{50, 51}) {
		t.Errorf("scores %v, want [50 51]", out)
	}
}

// A GPU whose memory claims share, 5 of its 80 GiB left: free 62 of 1000
// (5/80 rounded down). A class of 5 GiB shares (63 of 1000, rounded up)
// can use it, as its capacity says: nothing of it is fragment. By free
// amounts it could not (62 < 63), and all 62 would be.
func TestFGDOverSharesToTheUnit(t *testing.T) {
	shares, err := resource.NewShareLayout([]int64{80}, func(typ string) ([]int64, bool) {
		var n int64
		_, err := fmt.Sscanf(typ, "memory=%d", &n)
		return []int64{n}, err == nil
	})
	if err != nil {
		t.Fatal(err)
	}
	devs, _ := resource.NewDevices(gpu, 1000)
	devs.AddNode(1)
	if err := devs.SetPartitioned(0, []resource.Partitioned{{Device: 0, Layout: shares, Left: []int64{5}}}); err != nil {
		t.Fatal(err)
	}
	class := Class{Devices: resource.DeviceRequest{Count: 1, Each: 63}, Partition: "memory=5", Weight: 1}
	m, _ := NewMeasure([]Class{class}, 1000)
	if got := m.NodeParts(0, devs.Free(0), devs.Partitioned(0), ""); got != 0 {
		t.Errorf("by capacity: %v, want 0", got)
	}
	class.Partition = ""
	scalar, _ := NewMeasure([]Class{class}, 1000)
	if got := scalar.NodeParts(0, devs.Free(0), devs.Partitioned(0), ""); got != 62 {
		t.Errorf("by free amounts: %v, want 62", got)
	}
}
