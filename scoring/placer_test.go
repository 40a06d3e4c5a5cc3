package scoring_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
	"github.com/resfit/resfit/scoring/frag"
	"github.com/resfit/resfit/scoring/lifetime"
)

// placerConfigs cover every built-in scorer and filter a configuration
// builds; FGD and DeviceShare are added per cluster.
var placerConfigs = map[string]string{
	// Every filter Monotone (NodeResourcesFit, DeviceShare); with a
	// random scorer alone, a lazy placer.
	"least": `
plugins:
- name: NodeResourcesFit
  args:
    scoringStrategy:
      type: LeastAllocated
      resources: [{name: cpu, weight: 1}, {name: nvidia.com/gpu, weight: 2}]
`,
	"rsf": `tiers:
- plugins:
  - name: resource-strategy-fit
    arguments:
      resources:
        nvidia.com/gpu: {type: MostAllocated, weight: 2}
        cpu: {type: LeastAllocated, weight: 1}
      sra:
        enable: true
        resources: nvidia.com/gpu
        weight: 3
      proportional:
        enable: true
        resources: nvidia.com/gpu
        resourceProportion: {nvidia.com/gpu.cpu: 4}
  - name: binpack
    arguments: {binpack.resources: nvidia.com/gpu}
  - name: nodeorder
    arguments: {mostrequested.weight: 1}
`,
	"kube": `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
        resources: [{name: cpu, weight: 1}, {name: nvidia.com/gpu, weight: 3}]
        requestedToCapacityRatio:
          shape: [{utilization: 0, score: 0}, {utilization: 60, score: 10}, {utilization: 100, score: 4}]
  - name: NodeResourcesBalancedAllocation
    args: {resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]}
`,
	"koordinator": `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    score:
      enabled: [{name: NodeResourcesFitPlus, weight: 2}, {name: ScarceResourceAvoidance, weight: 1}]
  pluginConfig:
  - name: NodeResourcesFitPlus
    args:
      resources:
        nvidia.com/gpu: {type: MostAllocated, weight: 2}
        cpu: {type: LeastAllocated, weight: 1}
        memory: {type: LeastAllocated, weight: 1}
  - name: ScarceResourceAvoidance
    args: {resources: [nvidia.com/gpu]}
`,
}

// placerCluster is one copy of a random cluster: its table, device view
// and pipeline (the configuration's, with DeviceShare, and FGD when asked).
type placerCluster struct {
	table   *resource.Table
	devices *resource.Devices
	pipe    *scoring.Pipeline
}

// volatileParts, when seed is not 0, puts a volatile scorer at position
// at among the scorers (of the kind: random, random but indifferent to a
// task without an end, or phased) and a random filter after the others.
type volatileParts struct {
	seed   uint64
	kind   volatileKind
	at     int
	weight float64
	filter bool
	alone  bool // the volatile scorer is the pipeline's only scorer
	// phase is the phased scorer's state apart from the table, which the
	// test changes between tasks.
	phase *bool
}

// volatileKind is which volatile scorer volatileParts puts in.
type volatileKind int

const (
	randomKind volatileKind = iota
	indifferentKind
	phasedKind
	// scaledPhasedKind: two phased scorers (one state) in a pipeline a
	// ScaledScorer scores with, as a kube-scheduler plugin wraps one.
	scaledPhasedKind
	// largestSizeKind: the node size beside the table's largest node,
	// whose phase is that node (a node grows between tasks).
	largestSizeKind
	// onceKnownSizeKind: the same, counted once an end is known (a task
	// with an end) and, no pod having ended, half of the GPUs are in use,
	// as ResfitFrag has it in a host that follows ends: the fill turns it
	// on between tasks.
	onceKnownSizeKind
)

func newPlacerCluster(t *rapid.T, cfg *config.Config, schema *resource.Schema, alloc, used []resource.Vector, models []string, withFGD bool, vol volatileParts) *placerCluster {
	c := &placerCluster{table: resource.NewTable(schema, len(alloc))}
	c.devices, _ = resource.NewDevices(gpu, 1000)
	for i := range alloc {
		if _, err := c.table.Add(fmt.Sprint("n", i), alloc[i], used[i]); err != nil {
			t.Fatal(err)
		}
		c.devices.AddNode(int(alloc[i][2] / 1000))
		c.devices.SetModel(i, models[i])
		// Half-devices taken round the node's devices, so that some nodes
		// have room in total but no whole device free.
		for k := range int(used[i][2] / 500) {
			c.devices.Take(i, k%int(alloc[i][2]/1000), 500)
		}
	}
	pipe, err := cfg.Build(schema)
	if err != nil {
		t.Fatal(err)
	}
	df, _ := scoring.NewDeviceFilter(c.devices)
	if pipe, err = pipe.WithFilters(df); err != nil {
		t.Fatal(err)
	}
	if withFGD {
		m, _ := frag.NewMeasure([]frag.Class{{CPU: 4000, Devices: resource.DeviceRequest{Count: 1, Each: 500}, Weight: 0.5}, {CPU: 8000, Devices: resource.DeviceRequest{Count: 2, Each: 1000}, Weight: 0.5}}, 1000)
		fgd, _ := frag.NewScorer(schema, c.devices, m, frag.Options{})
		ws := append(pipe.Scorers(), scoring.WeightedScorer{Scorer: fgd, Weight: 1})
		filters := []scoring.Filter{scoring.NewFitFilter(nil, nil), df}
		if pipe, err = scoring.NewPipeline(schema, filters, ws); err != nil {
			t.Fatal(err)
		}
	}
	if vol.seed != 0 {
		ws := pipe.Scorers()
		if vol.alone {
			ws = nil
		}
		at := min(vol.at, len(ws))
		var v scoring.Scorer = &randomScorer{rand.New(rand.NewPCG(vol.seed, 1))}
		switch vol.kind {
		case indifferentKind:
			v = &endsScorer{randomScorer{rand.New(rand.NewPCG(vol.seed, 1))}}
		case phasedKind:
			v = &phasedScorer{state: vol.phase}
		case largestSizeKind:
			v = scoring.NewLargestSizeScorer()
		case onceKnownSizeKind:
			var err error
			if v, err = lifetime.NewOnceKnown(lifetime.NewNodes(len(alloc)), c.devices, scoring.NewLargestSizeScorer()); err != nil {
				t.Fatal(err)
			}
		case scaledPhasedKind:
			inner, err := scoring.NewPipeline(schema, nil, []scoring.WeightedScorer{{Scorer: &phasedScorer{state: vol.phase}, Weight: 1}, {Scorer: &phasedScorer{state: vol.phase}, Weight: 2}})
			if err != nil {
				t.Fatal(err)
			}
			if v, err = scoring.NewScaledScorer("scaled", inner, 100); err != nil {
				t.Fatal(err)
			}
		}
		ws = slices.Insert(ws, at, scoring.WeightedScorer{Scorer: v, Weight: vol.weight})
		filters := []scoring.Filter{scoring.NewFitFilter(nil, nil), df}
		if vol.filter {
			filters = append(filters, &randomFilter{rand.New(rand.NewPCG(vol.seed, 2))})
		}
		if pipe, err = scoring.NewPipeline(schema, filters, ws); err != nil {
			t.Fatal(err)
		}
	}
	c.pipe = pipe
	return c
}

// randomFilter rejects one node in four at random: volatile.
type randomFilter struct{ rng *rand.Rand }

func (f *randomFilter) Name() string   { return "random" }
func (f *randomFilter) Volatile() bool { return true }
func (f *randomFilter) FilterNodes(_ *scoring.Task, nodes scoring.Span, v *scoring.Verdicts) error {
	for i := range nodes.Len() {
		if f.rng.IntN(4) == 0 {
			v.Reject(i, -1)
		}
	}
	return nil
}
func (f *randomFilter) Explain(*scoring.Task, *resource.Table, int, int) string { return "drawn" }

// lockFilter keeps every task but those of job "target" off the rows it
// locks, which the test changes between tasks: an Excluder.
type lockFilter struct{ rows []int }

func (f *lockFilter) Name() string   { return "lock" }
func (f *lockFilter) Volatile() bool { return true }
func (f *lockFilter) Excluded(task *scoring.Task, dst []int) []int {
	if task.Job == "target" {
		return dst
	}
	return append(dst, f.rows...)
}
func (f *lockFilter) FilterNodes(task *scoring.Task, nodes scoring.Span, v *scoring.Verdicts) error {
	for i := range nodes.Len() {
		if task.Job != "target" && slices.Contains(f.rows, nodes.Row(i)) {
			v.Reject(i, -1)
		}
	}
	return nil
}
func (f *lockFilter) Explain(*scoring.Task, *resource.Table, int, int) string { return "locked" }

// spanFilter rejects nothing: it checks that every span it is given,
// contiguous or scattered, holds each node's amounts as its table row has
// them, plain and non-zero.
type spanFilter struct{}

func (spanFilter) Name() string  { return "span" }
func (spanFilter) Freed() uint64 { return 0 }
func (spanFilter) FilterNodes(_ *scoring.Task, nodes scoring.Span, _ *scoring.Verdicts) error {
	t := nodes.Table()
	plain, nonZero := nodes.Rows(), nodes.NonZeroRows()
	k := plain.Stride
	for i := range nodes.Len() {
		r := nodes.Row(i)
		if !slices.Equal(plain.Allocatable[i*k:i*k+k], t.Allocatable(r)) || !slices.Equal(plain.Used[i*k:i*k+k], t.Used(r)) ||
			!slices.Equal(nonZero.Used[i*k:i*k+k], t.NonZeroUsed(r)) {
			return fmt.Errorf("node %d of the span does not hold row %d's amounts", i, r)
		}
	}
	return nil
}
func (spanFilter) Explain(*scoring.Task, *resource.Table, int, int) string { return "" }

// bind is what a placement does to a cluster: requests onto the row's used
// amounts, devices tightest first.
func (c *placerCluster) bind(t *rapid.T, task *scoring.Task, row int) {
	if err := c.table.AddUsed(row, task.Requests, task.NonZeroRequests, false); err != nil {
		t.Fatal(err)
	}
	if task.Devices.Count > 0 {
		if _, err := c.devices.Allocate(row, task.Devices); err != nil {
			t.Fatal(err)
		}
	}
}

// Placing through a Placer gives exactly the placements of scoring every
// node for every task, for every built-in scorer and filter, with rows or
// a random rank breaking ties, while others change the table between
// tasks, with fewer remembered classes than there are, with volatile
// scorers and filters among the others, and with a filter that excludes
// rows (an Excluder) whose rows change between tasks, alone among the
// volatile parts or not.
func TestPlacerMatchesFullRescoring(t *testing.T) {
	schema, _ := resource.NewSchema("cpu", "memory", gpu)
	cfgs := map[string]*config.Config{}
	for name, text := range placerConfigs {
		cfg, err := config.Load([]byte(text), config.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cfgs[name] = cfg
	}
	rapid.Check(t, func(t *rapid.T) {
		cfg := cfgs[rapid.SampledFrom([]string{"rsf", "kube", "koordinator", "least", "least"}).Draw(t, "config")]
		withFGD := rapid.Bool().Draw(t, "fgd")
		n := rapid.IntRange(1, 70).Draw(t, "nodes")
		var alloc, used []resource.Vector
		var models []string
		for range n {
			models = append(models, rapid.SampledFrom([]string{"", "A10", "T4"}).Draw(t, "model"))
			gpus := rapid.SampledFrom([]int64{0, 0, 4000, 8000}).Draw(t, "gpus")
			a := resource.Vector{rapid.Int64Range(1, 64).Draw(t, "cpu") * 1000, rapid.Int64Range(1, 256).Draw(t, "mem") << 30, gpus}
			u := resource.Vector{rapid.Int64Range(0, a[0]).Draw(t, "used cpu"), rapid.Int64Range(0, a[1]>>30).Draw(t, "used mem") << 30, rapid.Int64Range(0, gpus/500).Draw(t, "used half gpus") * 500}
			alloc, used = append(alloc, a), append(used, u)
		}
		var vol volatileParts
		if rapid.IntRange(0, 3).Draw(t, "volatile") == 0 {
			vol = volatileParts{seed: rapid.Uint64Range(1, 1<<40).Draw(t, "volatile seed"),
				kind: volatileKind(rapid.IntRange(0, int(onceKnownSizeKind)).Draw(t, "volatile kind")), at: rapid.IntRange(0, 5).Draw(t, "at"),
				weight: float64(rapid.IntRange(0, 7).Draw(t, "weight")) / 3, filter: rapid.Bool().Draw(t, "volatile filter"),
				alone: rapid.Bool().Draw(t, "volatile alone"), phase: new(bool)}
		}
		full := newPlacerCluster(t, cfg, schema, alloc, used, models, withFGD, vol)
		inc := newPlacerCluster(t, cfg, schema, alloc, used, models, withFGD, vol)
		if rapid.Bool().Draw(t, "span check") {
			// A filter that checks the amounts of every span it is given.
			for _, c := range []*placerCluster{full, inc} {
				var err error
				if c.pipe, err = c.pipe.WithFilters(spanFilter{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		var lock *lockFilter
		if rapid.IntRange(0, 2).Draw(t, "lock") == 0 {
			// The same locks on both sides, changed between tasks.
			lock = &lockFilter{}
			for _, c := range []*placerCluster{full, inc} {
				var err error
				if c.pipe, err = c.pipe.WithFilters(lock); err != nil {
					t.Fatal(err)
				}
			}
		}
		var rank []int
		if rapid.Bool().Draw(t, "ranked") {
			rank = rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "rank seed"), 1)).Perm(n)
		}
		placer, err := scoring.NewPlacer(inc.pipe, inc.table, scoring.PlacerOptions{Devices: inc.devices, Rank: rank, MaxClasses: rapid.IntRange(0, 3).Draw(t, "max classes"), Workers: rapid.IntRange(0, 3).Draw(t, "workers")})
		if err != nil {
			t.Fatal(err)
		}
		// A few shapes, so that classes repeat.
		shapes := []scoring.Task{
			{Requests: resource.Vector{4000, 16 << 30, 1000}, Devices: resource.DeviceRequest{Count: 1, Each: 1000}},
			{Requests: resource.Vector{4000, 16 << 30, 1000}, Devices: resource.DeviceRequest{Count: 1, Each: 1000}, Models: "A10"},
			{Requests: resource.Vector{2000, 4 << 30, 500}, Devices: resource.DeviceRequest{Count: 1, Each: 500}},
			{Requests: resource.Vector{8000, 32 << 30, 2000}, Devices: resource.DeviceRequest{Count: 2, Each: 1000}},
			{Requests: resource.Vector{1000, 2 << 30, 0}},
			{Requests: resource.Vector{0, 0, 0}, NonZeroRequests: resource.Vector{100, 200 << 20, 0}},
		}
		batch := full.pipe.NewBatch(n)
		steps := rapid.IntRange(1, 40).Draw(t, "tasks")
		for step := range steps {
			switch rapid.IntRange(0, 19).Draw(t, "outside change") {
			case 0, 1:
				// Someone else frees a node's cpu: both copies.
				row := rapid.IntRange(0, n-1).Draw(t, "changed row")
				u := slices.Clone(full.table.Used(row))
				u[0] /= 2
				full.table.SetUsed(row, u)
				inc.table.SetUsed(row, u)
			case 2:
				// A node grows: more cpu allocatable.
				row := rapid.IntRange(0, n-1).Draw(t, "grown row")
				a := slices.Clone(full.table.Allocatable(row))
				a[0] += 8000
				full.table.SetAllocatable(row, a)
				inc.table.SetAllocatable(row, a)
			case 3:
				// Someone gives a node's devices back, with a table change
				// that frees nothing there (the device view's Freed tells).
				row := rapid.IntRange(0, n-1).Draw(t, "devices row")
				free := slices.Clone(full.devices.Free(row))
				for j := range free {
					free[j] = 1000
				}
				for _, c := range []*placerCluster{full, inc} {
					c.devices.SetFree(row, free)
					c.table.AddUsed(row, resource.Vector{0, 0, 0}, nil, false)
				}
			}
			task := shapes[rapid.IntRange(0, len(shapes)-1).Draw(t, "shape")]
			if vol.seed != 0 {
				// Some tasks have an end (the indifferent scorer then
				// draws, the phased one may change phase), and the phased
				// scorer's state changes now and then, for both sides.
				task.Ends = float64(rapid.IntRange(0, 1).Draw(t, "ends"))
				if rapid.IntRange(0, 4).Draw(t, "phase change") == 0 {
					*vol.phase = !*vol.phase
				}
			}
			if lock != nil {
				lock.rows = rapid.SliceOfN(rapid.IntRange(0, n-1), 0, 3).Draw(t, "locked rows")
				task.Job = rapid.SampledFrom([]string{"", "", "target"}).Draw(t, "job")
			}
			if err := full.pipe.Score(&task, full.table, batch); err != nil {
				t.Fatal(err)
			}
			want := -1
			for i := range n {
				if !batch.Feasible(i) {
					continue
				}
				if want < 0 || batch.Total(i) > batch.Total(want) || batch.Total(i) == batch.Total(want) && rank != nil && rank[i] < rank[want] {
					want = i
				}
			}
			if rapid.IntRange(0, 2).Draw(t, "scores") == 0 {
				// Every node's result, as kube-scheduler's Score asks,
				// in place of placing the task (a volatile scorer gives
				// each call new numbers, so both sides make one call).
				scores, err := placer.Scores(&task)
				if err != nil {
					t.Fatal(err)
				}
				if scores.Len() != n {
					t.Fatalf("task %d: Scores has %d nodes, the table %d", step, scores.Len(), n)
				}
				for i := range n {
					if scores.Feasible(i) != batch.Feasible(i) || scores.Total(i) != batch.Total(i) {
						t.Fatalf("task %d node %d: Scores says feasible %v total %v, full rescoring %v %v",
							step, i, scores.Feasible(i), scores.Total(i), batch.Feasible(i), batch.Total(i))
					}
					if vol.seed != 0 && vol.filter {
						continue // Reason would draw again
					}
					reason, err := inc.pipe.Reason(&task, inc.table, i)
					if err != nil {
						t.Fatal(err)
					}
					if want := batch.Reason(i); reason != want {
						t.Fatalf("task %d node %d: Reason %q, the batch's %q", step, i, reason, want)
					}
				}
				continue
			}
			got, err := placer.Place(&task)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("task %d (%v): placer chose %d, full rescoring %d (total %v)", step, task.Requests, got, want, batch.Total(max(want, 0)))
			}
			if want >= 0 && placer.Total() != batch.Total(want) {
				t.Fatalf("task %d: the placer's total %v, the batch's %v", step, placer.Total(), batch.Total(want))
			}
			if want >= 0 {
				full.bind(t, &task, want)
			}
			for i := range n {
				if !slices.Equal(full.table.Used(i), inc.table.Used(i)) || !slices.Equal(full.table.NonZeroUsed(i), inc.table.NonZeroUsed(i)) || !slices.Equal(full.devices.Free(i), inc.devices.Free(i)) {
					t.Fatalf("after task %d node %d differs: used %v/%v devices %v/%v", step, i, inc.table.Used(i), full.table.Used(i), inc.devices.Free(i), full.devices.Free(i))
				}
			}
		}
	})
}

// gangCluster is four nodes of 8 cores and 2 GPUs, one GPU used on each.
func gangCluster(t *testing.T) (*resource.Table, *resource.Devices, *scoring.Placer) {
	t.Helper()
	schema, _ := resource.NewSchema("cpu", "memory", gpu)
	table := resource.NewTable(schema, 4)
	devices, _ := resource.NewDevices(gpu, 1000)
	for i := range 4 {
		table.Add(fmt.Sprint("n", i), resource.Vector{8000, 64 << 30, 2000}, resource.Vector{2000, 8 << 30, 1000})
		devices.AddNode(2)
		devices.Take(i, 0, 1000)
	}
	cfg, err := config.Load([]byte(placerConfigs["rsf"]), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pipe, _ := cfg.Build(schema)
	df, _ := scoring.NewDeviceFilter(devices)
	pipe, _ = pipe.WithFilters(df)
	placer, err := scoring.NewPlacer(pipe, table, scoring.PlacerOptions{Devices: devices})
	if err != nil {
		t.Fatal(err)
	}
	return table, devices, placer
}

// state is a table's and device view's amounts, to compare before and after.
func state(table *resource.Table, devices *resource.Devices) string {
	s := ""
	for i := range table.Len() {
		s += fmt.Sprint(table.Used(i), table.NonZeroUsed(i), devices.Free(i), ";")
	}
	return s
}

// A job whose minimum does not fit places nothing and leaves the table and
// the devices as they were; one that fits places its tasks, each on a GPU.
func TestPlaceGangAllOrNothing(t *testing.T) {
	table, devices, placer := gangCluster(t)
	before := state(table, devices)
	worker := &scoring.Task{Name: "w", Requests: resource.Vector{2000, 8 << 30, 1000}, Devices: resource.DeviceRequest{Count: 1, Each: 1000}}
	job := []*scoring.Task{worker, worker, worker, worker, worker}
	rows, err := placer.PlaceGang(job, 5) // 4 free GPUs for 5 workers
	if err != nil || rows != nil {
		t.Fatalf("rows %v, err %v; want nil, nil", rows, err)
	}
	if after := state(table, devices); after != before {
		t.Errorf("the table changed:\nbefore %s\nafter  %s", before, after)
	}
	rows, err = placer.PlaceGang(job, 4) // 4 of 5 is enough
	if err != nil {
		t.Fatal(err)
	}
	if placed := slices.DeleteFunc(slices.Clone(rows), func(r int) bool { return r < 0 }); len(placed) != 4 || rows[4] != -1 {
		t.Errorf("rows %v, want four nodes and a pending fifth", rows)
	}
	for i := range 4 {
		if devices.FreeTotal(i) != 0 || table.Used(i)[0] != 4000 {
			t.Errorf("node %d: %v free GPU, %v cpu used; want 0 and 4000", i, devices.FreeTotal(i), table.Used(i)[0])
		}
	}
}

// Nodes added and removed by others are seen: a removed node is never
// chosen, an added one is.
func TestPlacerSeesAddedAndRemovedNodes(t *testing.T) {
	schema, _ := resource.NewSchema("cpu", "memory", gpu)
	table := resource.NewTable(schema, 4)
	for i := range 4 {
		table.Add(fmt.Sprint("n", i), resource.Vector{8000, 64 << 30, 0}, resource.Vector{int64(i) * 1000, 0, 0})
	}
	cfg, _ := config.Load([]byte(placerConfigs["kube"]), config.Options{})
	pipe, _ := cfg.Build(schema)
	placer, err := scoring.NewPlacer(pipe, table, scoring.PlacerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cpuTask := &scoring.Task{Name: "c", Requests: resource.Vector{1000, 1 << 30, 0}}
	// RequestedToCapacityRatio rises to 60% use: the fullest node, n3.
	if row, err := placer.Best(cpuTask); err != nil || table.Name(row) != "n3" {
		t.Fatalf("best %v, %v; want n3", row, err)
	}
	if _, err := table.Remove(3); err != nil {
		t.Fatal(err)
	}
	if row, err := placer.Best(cpuTask); err != nil || table.Name(row) != "n2" {
		t.Fatalf("after removing n3: %v, %v; want n2", row, err)
	}
	if _, err := table.Remove(0); err != nil { // n2 moves into row 0
		t.Fatal(err)
	}
	if row, err := placer.Best(cpuTask); err != nil || row != 0 || table.Name(row) != "n2" {
		t.Fatalf("after removing n0: %v, %v; want n2 in row 0", row, err)
	}
	table.Add("fuller", resource.Vector{8000, 64 << 30, 0}, resource.Vector{3500, 0, 0})
	if row, err := placer.Best(cpuTask); err != nil || table.Name(row) != "fuller" {
		t.Errorf("after adding fuller: %v, %v", row, err)
	}
	// Forgotten classes are made again.
	if placer.Classes() != 1 {
		t.Errorf("%d classes remembered, want 1", placer.Classes())
	}
	placer.Forget()
	if row, err := placer.Best(cpuTask); placer.Classes() != 1 || err != nil || table.Name(row) != "fuller" {
		t.Errorf("after Forget: %v, %v, %d classes", row, err, placer.Classes())
	}
}

// randomScorer draws a score per node: volatile.
type randomScorer struct{ rng *rand.Rand }

func (s *randomScorer) Name() string      { return "random" }
func (s *randomScorer) MaxScore() float64 { return 100 }
func (s *randomScorer) Volatile() bool    { return true }
func (s *randomScorer) ScoreNodes(_ *scoring.Task, _ scoring.Span, out []float64) error {
	for i := range out {
		out[i] = float64(s.rng.IntN(100))
	}
	return nil
}

// endsScorer draws a score per node for a task with an end, and scores a
// task without one 0 everywhere, drawing nothing: volatile, and
// Indifferent to a task without an end.
type endsScorer struct{ randomScorer }

func (s *endsScorer) Indifferent(task *scoring.Task) bool { return task.Ends == 0 }
func (s *endsScorer) ScoreNodes(task *scoring.Task, nodes scoring.Span, out []float64) error {
	if task.Ends == 0 {
		clear(out)
		return nil
	}
	return s.randomScorer.ScoreNodes(task, nodes, out)
}

// phasedScorer scores the share of a node's cpu that is free, or in its
// other phase the share of its GPUs in use (×100): Phased, its phase the
// state it shares with the test, flipped for a task with an end.
type phasedScorer struct{ state *bool }

func (s *phasedScorer) Name() string      { return "phased" }
func (s *phasedScorer) MaxScore() float64 { return 100 }
func (s *phasedScorer) Volatile() bool    { return true }
func (s *phasedScorer) Phased() bool      { return true }
func (s *phasedScorer) phase(task *scoring.Task) bool {
	return *s.state != (task.Ends != 0)
}
func (s *phasedScorer) AppendPhase(key []byte, task *scoring.Task, _ *resource.Table) []byte {
	if s.phase(task) {
		return append(key, 1)
	}
	return append(key, 0)
}
func (s *phasedScorer) ScoreNodes(task *scoring.Task, nodes scoring.Span, out []float64) error {
	t := nodes.Table()
	for i := range out {
		a, u := t.Allocatable(nodes.Row(i)), t.Used(nodes.Row(i))
		out[i] = 0
		switch {
		case !s.phase(task) && a[0] > 0:
			out[i] = 100 * float64(max(a[0]-u[0], 0)) / float64(a[0])
		case s.phase(task) && a[2] > 0:
			out[i] = 100 * float64(min(u[2], a[2])) / float64(a[2])
		}
	}
	return nil
}

// A volatile scorer is scored on every node for every task: the placer
// picks what full scoring with the same draws picks.
func TestPlacerRescoresVolatileScorers(t *testing.T) {
	schema, table := cpuTable(50, 64000)
	mk := func() *scoring.Pipeline {
		p, _ := scoring.NewPipeline(schema, nil, []scoring.WeightedScorer{{Scorer: &randomScorer{rand.New(rand.NewPCG(7, 7))}, Weight: 1}})
		return p
	}
	full, inc := mk(), mk()
	if !inc.Volatile() || full.Volatile() != true {
		t.Fatal("a pipeline with a volatile scorer is not volatile")
	}
	placer, _ := scoring.NewPlacer(inc, table, scoring.PlacerOptions{})
	batch := full.NewBatch(50)
	task := &scoring.Task{Requests: resource.Vector{1000}}
	for k := range 20 {
		full.Score(task, table, batch)
		want := batch.Top(1, nil)[0]
		got, err := placer.Best(task)
		if err != nil || got != want {
			t.Fatalf("task %d: placer %d (%v), full %d", k, got, err, want)
		}
	}
}

// After the first task of its class, placing a task allocates nothing.
func TestPlacerDoesNotAllocateAfterTheFirstTaskOfAClass(t *testing.T) {
	schema, _ := resource.NewSchema("cpu", "memory", gpu)
	table := resource.NewTable(schema, 1000)
	for i := range 1000 {
		table.Add(fmt.Sprint("n", i), resource.Vector{1 << 40, 1 << 50, 1 << 40}, nil)
	}
	cfg, _ := config.Load([]byte(placerConfigs["rsf"]), config.Options{})
	pipe, _ := cfg.Build(schema)
	placer, _ := scoring.NewPlacer(pipe, table, scoring.PlacerOptions{})
	tasks := []*scoring.Task{
		{Requests: resource.Vector{4000, 16 << 30, 1000}},
		{Requests: resource.Vector{1000, 1 << 30, 0}, Override: nil},
	}
	for _, task := range tasks {
		if _, err := placer.Place(task); err != nil {
			t.Fatal(err)
		}
	}
	k := 0
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := placer.Place(tasks[k%2]); err != nil {
			t.Fatal(err)
		}
		k++
	})
	if allocs != 0 {
		t.Errorf("%v allocations per task", allocs)
	}
}

// NewPlacer says which option is wrong.
func TestNewPlacerRejectsBadOptions(t *testing.T) {
	schema, _ := resource.NewSchema("cpu", "memory", gpu)
	table := resource.NewTable(schema, 2)
	table.Add("a", resource.Vector{8000, 64 << 30, 2000}, nil)
	table.Add("b", resource.Vector{8000, 64 << 30, 2000}, nil)
	cfg, err := config.Load([]byte(placerConfigs["rsf"]), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pipe, _ := cfg.Build(schema)
	for _, c := range []struct {
		opts scoring.PlacerOptions
		want string
	}{
		{scoring.PlacerOptions{MaxClasses: -1}, "placer: MaxClasses must be ≥ 0, got -1"},
		{scoring.PlacerOptions{Workers: -2}, "placer: Workers must be ≥ 0, got -2"},
		{scoring.PlacerOptions{Rank: []int{0}}, "placer: Rank has 1 entries, the table 2 rows"},
		{scoring.PlacerOptions{Rank: []int{3, 3}}, "placer: Rank[1] = 3 is not distinct"},
	} {
		if _, err := scoring.NewPlacer(pipe, table, c.opts); err == nil || err.Error() != c.want {
			t.Errorf("%+v: error %v, want %q", c.opts, err, c.want)
		}
	}
}

// cpuTable is n nodes of one resource, cpu, with milliCPU allocatable
// each and none used.
func cpuTable(n int, milliCPU int64) (*resource.Schema, *resource.Table) {
	schema, _ := resource.NewSchema("cpu")
	table := resource.NewTable(schema, n)
	for i := range n {
		table.Add(fmt.Sprint("n", i), resource.Vector{milliCPU}, nil)
	}
	return schema, table
}

// negativeZeroScorer scores row 1 −0 and every other row +0.
type negativeZeroScorer struct{}

func (negativeZeroScorer) Name() string      { return "negative zero" }
func (negativeZeroScorer) MaxScore() float64 { return 1 }
func (negativeZeroScorer) ScoreNodes(_ *scoring.Task, nodes scoring.Span, out []float64) error {
	for i := range out {
		out[i] = 0
		if nodes.Row(i) == 1 {
			out[i] = math.Copysign(0, -1)
		}
	}
	return nil
}

// A score of −0 is a score of 0: the nodes tie, and the lower row wins, as
// Batch.Top has it (the placer orders totals by their bits).
func TestPlacerTakesNegativeZeroForZero(t *testing.T) {
	schema, table := cpuTable(3, 8000)
	pipe, err := scoring.NewPipeline(schema, []scoring.Filter{scoring.NewFitFilter(nil, nil)}, []scoring.WeightedScorer{{Scorer: negativeZeroScorer{}, Weight: 1}})
	if err != nil {
		t.Fatal(err)
	}
	batch := pipe.NewBatch(3)
	task := &scoring.Task{Requests: resource.Vector{1000}}
	if err := pipe.Score(task, table, batch); err != nil {
		t.Fatal(err)
	}
	if top := batch.Top(1, nil); len(top) != 1 || top[0] != 0 || math.Signbit(batch.Total(1)) {
		t.Fatalf("Top %v, node 1's total %v", top, batch.Total(1))
	}
	placer, err := scoring.NewPlacer(pipe, table, scoring.PlacerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k := range 3 {
		// Node 0 takes a task each time and stays best (its score does not
		// change); the placer rescores it every time.
		if row, err := placer.Place(task); err != nil || row != 0 {
			t.Fatalf("task %d: row %d, %v; want 0", k, row, err)
		}
	}
}

// countingScorer scores every node 0 and counts the nodes it was asked to
// score.
type countingScorer struct{ rows *int }

func (countingScorer) Name() string      { return "counting" }
func (countingScorer) MaxScore() float64 { return 1 }
func (s countingScorer) ScoreNodes(_ *scoring.Task, nodes scoring.Span, out []float64) error {
	*s.rows += nodes.Len()
	clear(out)
	return nil
}

// countingPlacer is a placer over n nodes of milliCPU each, its pipeline
// the fit filter and a countingScorer counting into scored.
func countingPlacer(t *testing.T, n int, milliCPU int64, scored *int) *scoring.Placer {
	t.Helper()
	schema, table := cpuTable(n, milliCPU)
	pipe, err := scoring.NewPipeline(schema, []scoring.Filter{scoring.NewFitFilter(nil, nil)},
		[]scoring.WeightedScorer{{Scorer: countingScorer{scored}, Weight: 1}})
	if err != nil {
		t.Fatal(err)
	}
	placer, err := scoring.NewPlacer(pipe, table, scoring.PlacerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return placer
}

// A Placer scores a class on every node once, then only the rows that
// changed: none when nothing did, one after a bind.
func TestPlacerScoresOnlyChangedRows(t *testing.T) {
	scored := 0
	placer := countingPlacer(t, 100, 4000, &scored)
	task := &scoring.Task{Requests: resource.Vector{1000}}
	for step, want := range []int{100, 0, 0} {
		scored = 0
		if _, err := placer.Scores(task); err != nil {
			t.Fatal(err)
		}
		if scored != want {
			t.Errorf("step %d: %d rows scored, want %d", step, scored, want)
		}
	}
	scored = 0
	if _, err := placer.Place(task); err != nil || scored != 0 {
		t.Fatalf("place: %d rows scored, %v", scored, err)
	}
	if _, err := placer.Scores(task); err != nil || scored != 1 {
		t.Errorf("after a bind: %d rows scored, want 1 (%v)", scored, err)
	}
}

// A clone of a placer's scores keeps what they said when taken, while the
// view it was taken from follows the placer: after a bind fills node 0,
// the view says it is infeasible and the clone that it is not.
func TestScoresCloneKeepsItsResults(t *testing.T) {
	scored := 0
	placer := countingPlacer(t, 3, 1000, &scored)
	task := &scoring.Task{Requests: resource.Vector{1000}}
	view, err := placer.Scores(task)
	if err != nil {
		t.Fatal(err)
	}
	clone := view.Clone()
	before := clone.Total(0)
	if err := placer.Bind(task, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := placer.Scores(task); err != nil {
		t.Fatal(err)
	}
	if view.Feasible(0) || !clone.Feasible(0) || clone.Total(0) != before || clone.Len() != 3 {
		t.Errorf("after the bind: view feasible %v, clone feasible %v total %v (was %v), len %d", view.Feasible(0), clone.Feasible(0), clone.Total(0), before, clone.Len())
	}
}

// A placer under the node size (ResfitNodeSize, beside the table's
// largest node; alone, and behind the wait for an end in a host that
// follows ends, with a task whose end is known), over FGD-less packing so
// that nodes tie, follows the largest node as rows grow, shrink and leave
// the lead between tasks of a few repeating shapes: its best node and
// every node's total are those of scoring the pipeline afresh. It fails
// within the default number of cases when the size's phase leaves out
// the largest node, or the wait leaves out the size's phase.
func TestPlacerFollowsTheLargestNode(t *testing.T) {
	schema, _ := resource.NewSchema("cpu", "memory", gpu)
	cfg, err := config.Load([]byte(`plugins: [{name: ResfitNodeSize, weight: 3}, {name: PackLeastUsed}]`), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 12).Draw(t, "nodes")
		table := resource.NewTable(schema, n)
		for i := range n {
			a := resource.Vector{rapid.Int64Range(1, 8).Draw(t, "cpu") * 8000, rapid.Int64Range(1, 4).Draw(t, "mem") << 34, rapid.SampledFrom([]int64{0, 2000, 8000}).Draw(t, "gpus")}
			if _, err := table.Add(fmt.Sprintf("n%d", i), a, nil); err != nil {
				t.Fatal(err)
			}
		}
		host := config.Host{}
		task := scoring.Task{Requests: resource.Vector{1000, 1 << 30, 0}}
		if rapid.Bool().Draw(t, "follows ends") {
			// The size counts behind the wait once a pod has ended.
			model, err := lifetime.NewModel(lifetime.ModelOptions{})
			if err != nil {
				t.Fatal(err)
			}
			host.Lifetimes = lifetime.NewTracker[int](model, n).Nodes()
			if rapid.Bool().Draw(t, "a pod ended") {
				model.Observe([]string{"a pod"}, 60)
			}
			task.Ends = 60
		}
		pipe, err := cfg.BuildFor(schema, host)
		if err != nil {
			t.Fatal(err)
		}
		placer, err := scoring.NewPlacer(pipe, table, scoring.PlacerOptions{MaxClasses: rapid.IntRange(0, 2).Draw(t, "max classes")})
		if err != nil {
			t.Fatal(err)
		}
		batch := pipe.NewBatch(n)
		for step := range rapid.IntRange(1, 12).Draw(t, "tasks") {
			row := rapid.IntRange(0, n-1).Draw(t, "changed row")
			a := slices.Clone(table.Allocatable(row))
			slot := rapid.IntRange(0, 2).Draw(t, "resource")
			a[slot] = max(a[slot]+rapid.SampledFrom([]int64{-2, -1, 1, 2}).Draw(t, "change")*a[slot]/2, 0)
			table.SetAllocatable(row, a)
			task.Requests[0] = rapid.SampledFrom([]int64{1000, 2000}).Draw(t, "shape")
			if err := pipe.Score(&task, table, batch); err != nil {
				t.Fatal(err)
			}
			scores, err := placer.Scores(&task)
			if err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if scores.Feasible(i) != batch.Feasible(i) || scores.Total(i) != batch.Total(i) {
					t.Fatalf("task %d node %d (largest %v): the placer says feasible %v total %v, full rescoring %v %v",
						step, i, table.Largest(), scores.Feasible(i), scores.Total(i), batch.Feasible(i), batch.Total(i))
				}
			}
		}
	})
}
