package config

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/frag"
	"github.com/resfit/resfit/scoring/lifetime"
	"github.com/resfit/resfit/sra"
	"github.com/resfit/resfit/strategy"
)

// fragClasses are a workload's typical pods as every form writes them:
// a whole GPU, a shared GPU of the V100s, a CPU pod.
const fragClasses = `[{cpu: 8, gpus: 1, weight: 0.5}, {cpu: "4", gpus: 1, gpuShare: 300, models: "V100M32|V100M16", weight: 0.3}, {cpu: 500m, weight: 0.2}]`

var wantFragClasses = []FragClass{
	{MilliCPU: 8000, GPUs: 1, GPUShare: 1000, Weight: 0.5},
	{MilliCPU: 4000, GPUs: 1, GPUShare: 300, Models: "V100M16|V100M32", Weight: 0.3},
	{MilliCPU: 500, Weight: 0.2},
}

// The fragmentation plugins read alike in every form: resfit's own, a
// KubeSchedulerConfiguration's score plugins and pluginConfig, a
// volcano-scheduler.conf's tiers (fgd, resfit-frag); defaults filled in
// (the device, the share unit, a class's whole device and weight 1, the
// tie-breaker over cpu and the device, the reserve from the classes).
func TestFragPlugins(t *testing.T) {
	fgd := ScorerConfig{Name: FGD, Weight: 1, Args: FGDArgs{Device: resource.GPU, ShareUnit: 1000, Classes: wantFragClasses}}
	// Cores per device, in float64 as the decoder sums them: (0.5 × 8 +
	// 0.3 × 4) / (0.5 × 1 + 0.3 × 0.3), about 5.2 / 0.59.
	w := []float64{0.5, 0.3}
	perDevice := (w[0]*8 + w[1]*4) / (w[0]*1 + w[1]*0.3)
	rf := ScorerConfig{Name: ResfitFrag, Weight: 2, Args: ResfitFragArgs{FGDArgs: fgd.Args.(FGDArgs),
		TieBreak: PackLeastUsed, TieBreaker: []string{"cpu", resource.GPU}, UntilEndsKnown: NodeResourcesBalancedAllocation, CoresPerIdleGPU: perDevice,
		LifetimeWeight: DefaultLifetimeWeight, LearnedLifetimeWeight: DefaultLearnedLifetimeWeight, NodeSizeWeight: DefaultNodeSizeWeight}}
	// FGD enabled at score alone: its filters left out, as kube-scheduler
	// leaves them.
	kubeFGD := kubeScorer(fgd)
	kubeFGD.FiltersOff = true
	runLoadCases(t, []loadCase{
		{name: "resfit's form", doc: `
plugins:
- {name: FGD, args: {classes: ` + fragClasses + `}}
- {name: ResfitFrag, weight: 2, args: {classes: ` + fragClasses + `}}`,
			filters: []string{NodeResourcesFit}, scorers: []ScorerConfig{fgd, rf}},
		{name: "KubeSchedulerConfiguration", doc: `
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    score:
      disabled: [{name: "*"}]
      enabled: [{name: FGD}, {name: ResfitFrag, weight: 2}]
  pluginConfig:
  - {name: FGD, args: {classes: ` + fragClasses + `}}
  - {name: ResfitFrag, args: {classes: ` + fragClasses + `}}`,
			filters: []string{NodeResourcesFit}, scorers: []ScorerConfig{kubeFGD, rf},
			warns: []string{"FGD scores but is not enabled at filter"}},
		{name: "volcano-scheduler.conf", doc: `
tiers:
- plugins:
  - {name: gang}
  - {name: resfit-fgd, arguments: {classes: ` + fragClasses + `}}`,
			filters: []string{NodeResourcesFit}, scorers: []ScorerConfig{fgd}, warns: []string{`"gang"`}},
		{name: "every argument", doc: `
plugins:
- name: ResfitFrag
  args:
    device: example.com/gpu
    shareUnit: 100
    classes: [{cpu: 2, gpus: 2, gpuShare: 50, weight: 3}]
    tieBreaker: {resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}], untilEndsKnown: PackLeastUsed}
    coresPerIdleGPU: 0
    lifetime: {weight: 5}
    nodeSize: {weight: 2}`,
			filters: []string{NodeResourcesFit}, scorers: []ScorerConfig{{Name: ResfitFrag, Weight: 1, Args: ResfitFragArgs{
				FGDArgs:  FGDArgs{Device: "example.com/gpu", ShareUnit: 100, Classes: []FragClass{{MilliCPU: 2000, GPUs: 2, GPUShare: 50, Weight: 3}}},
				TieBreak: PackLeastUsed, TieBreaker: []string{"cpu", "memory"}, UntilEndsKnown: PackLeastUsed, LifetimeWeight: 5, LearnedLifetimeWeight: 5, NodeSizeWeight: 2}}}},
		{name: "the balanced tie-breaker", doc: `
plugins:
- {name: ResfitFrag, args: {classes: [{cpu: 2}], tieBreaker: {type: NodeResourcesBalancedAllocation}, coresPerIdleGPU: 0}}`,
			filters: []string{NodeResourcesFit}, scorers: []ScorerConfig{{Name: ResfitFrag, Weight: 1, Args: ResfitFragArgs{
				FGDArgs:  FGDArgs{Device: resource.GPU, ShareUnit: 1000, Classes: []FragClass{{MilliCPU: 2000, Weight: 1}}},
				TieBreak: NodeResourcesBalancedAllocation, TieBreaker: []string{"cpu", resource.GPU}, UntilEndsKnown: NodeResourcesBalancedAllocation,
				LifetimeWeight: DefaultLifetimeWeight, LearnedLifetimeWeight: DefaultLearnedLifetimeWeight, NodeSizeWeight: DefaultNodeSizeWeight}}}},
		{name: "tie-breaker errors", doc: `
plugins:
- {name: ResfitFrag, args: {classes: [{cpu: 2}], tieBreaker: {type: MostAllocated, weight: 2, resources: [{name: cpu, weight: 2}]}}}
- {name: ResfitFrag, args: {classes: [{cpu: 2}], tieBreaker: {untilEndsKnown: LeastAllocated}}}
- {name: ResfitFrag, args: {classes: [{cpu: 2}], tieBreaker: {untilEndsKnown: [PackLeastUsed]}}}
- {name: PackLeastUsed, args: {untilEndsKnown: balanced}}`,
			errs: []string{
				`plugins[0].args.tieBreaker.type: must be one of PackLeastUsed, NodeResourcesBalancedAllocation, got "MostAllocated"`,
				`plugins[0].args.tieBreaker["weight"]: unknown field; known are resources, type, untilEndsKnown, got 2`,
				`plugins[0].args.tieBreaker.resources[0].weight: must be 1, got 2`,
				`plugins[1].args.tieBreaker.untilEndsKnown: must be one of PackLeastUsed, NodeResourcesBalancedAllocation, got "LeastAllocated"`,
				`plugins[2].args.tieBreaker.untilEndsKnown: must be a string, got a list`,
				`plugins[3].args.untilEndsKnown: must be one of PackLeastUsed, NodeResourcesBalancedAllocation, got "balanced"`,
			}},
		{name: "MIG profiles", doc: `
plugins:
- {name: FGD, args: {classes: [{cpu: 8, gpus: 1, partition: 7g.80gb}, {cpu: 4, gpus: 1, gpuShare: 500, partition: 3g.40gb, weight: 2}]}}`,
			filters: []string{NodeResourcesFit}, scorers: []ScorerConfig{{Name: FGD, Weight: 1, Args: FGDArgs{Device: resource.GPU, ShareUnit: 1000, Classes: []FragClass{
				{MilliCPU: 8000, GPUs: 1, GPUShare: 1000, Partition: "7g.80gb", Weight: 1},
				{MilliCPU: 4000, GPUs: 1, GPUShare: 500, Partition: "3g.40gb", Weight: 2}}}}}},
		{name: "learning", doc: `
plugins:
- {name: FGD, args: {learn: {}}}
- {name: FGD, args: {classes: [{cpu: 4}], learn: {maxClasses: 8, halfLife: 50, refresh: 10}}}`,
			filters: []string{NodeResourcesFit}, scorers: []ScorerConfig{
				{Name: FGD, Weight: 1, Args: FGDArgs{Device: resource.GPU, ShareUnit: 1000, Learn: &LearnArgs{MaxClasses: 64, HalfLife: 1000, Refresh: 100}}},
				{Name: FGD, Weight: 1, Args: FGDArgs{Device: resource.GPU, ShareUnit: 1000, Classes: []FragClass{{MilliCPU: 4000, Weight: 1}},
					Learn: &LearnArgs{MaxClasses: 8, HalfLife: 50, Refresh: 10}}}}},
		{name: "learning errors", doc: `
plugins:
- {name: FGD, args: {learn: {maxClasses: 0, halfLife: 1.5, refresh: -1, pace: 1}}}
- {name: FGD, args: {learn: 3}}`,
			errs: []string{
				`plugins[0].args.learn.maxClasses: must be in [1, 4096], got 0`,
				`plugins[0].args.learn.halfLife: must be a whole number, got 1.5`,
				`plugins[0].args.learn.refresh: must be in [1, 2147483647], got -1`,
				`plugins[0].args.learn["pace"]: unknown field`,
				`plugins[1].args.learn: must be an object, got 3`,
			}},
		{name: "errors", doc: `
plugins:
- name: FGD
  args:
    device: Bad Name
    shareUnit: 0
    classes:
    - {cpu: lots, gpus: 1}
    - {gpuShare: 500}
    - {gpus: 1, gpuShare: 1001}
    - {gpus: 1, gpuShare: 300, models: "A 100"}
    - {gpus: 2000, weight: -1}
    - {gpu: 1}
    - {partition: 1g.10gb}
    - {gpus: 1, partition: "1g 10gb"}
    - {gpus: 1, partition: ""}
    - {gpus: 1, partition: 3}
- {name: FGD, args: {shareUnit: 300, classes: [{gpus: 1, gpuShare: 1}]}}
- {name: FGD}
- {name: FGD, args: {classes: [{weight: 0}]}}
- {name: FGD, args: {classes: []}}
- {name: ResfitFrag, args: {classes: [{cpu: 1}], coresPerIdleGPU: -1, tieBreaker: {resources: [{name: cpu, weight: 2}]}}}
- {name: ResfitFrag, args: {classes: [{cpu: 2001, gpus: 1, gpuShare: 1}]}}`,
			errs: []string{
				`plugins[0].args.device: not a valid resource name`,
				`plugins[0].args.shareUnit: must be in [1, 1000000], got 0`,
				`plugins[0].args.classes[0].cpu: `,
				`plugins[0].args.classes[1].gpuShare: a share of a device needs gpus ≥ 1, got 500`,
				`plugins[0].args.classes[2].gpuShare: must be in [1, 1000] (shareUnit: a whole device), got 1001`,
				`plugins[0].args.classes[3].models: `,
				`plugins[0].args.classes[4].gpus: must be in [0, 1024], got 2000`,
				`plugins[0].args.classes[4].weight: must be in [0, 1000000], got -1`,
				`plugins[0].args.classes[5]["gpu"]: unknown field`,
				`plugins[0].args.classes[6].partition: a part of a device needs gpus ≥ 1, got "1g.10gb"`,
				`plugins[0].args.classes[7].partition: must be a type of part of 1 to 64 printable characters without spaces, such as a MIG profile (3g.40gb), got "1g 10gb"`,
				`plugins[0].args.classes[8].partition: must be a type of part`,
				`plugins[0].args.classes[9].partition: must be a string, got 3`,
				`plugins[1].args.classes[0].gpuShare: must be a whole thousandth of a device`,
				`plugins[2].args.classes: FGD needs the workload's typical pods`,
				`plugins[3].args.classes: the classes' weights must sum to more than 0`,
				`plugins[4].args.classes: at least one class is needed`,
				`plugins[5].args.coresPerIdleGPU: must be in [0, 1000000] (0 turns the filter off), got -1`,
				`plugins[5].args.tieBreaker.resources[0].weight: must be 1, got 2`,
				// Found by FuzzFrag: 2001 cores per thousandth of a GPU.
				`plugins[6].args.coresPerIdleGPU: the classes' cores per device, the default, must be in [0, 1000000]; set coresPerIdleGPU (0 turns the filter off), got 2.001e+06`,
			}},
	})
}

// What Canonical writes of the fragmentation plugins loads back to the
// same configuration, every default written out.
func TestFragPluginsCanonical(t *testing.T) {
	c, err := Load([]byte(`plugins: [{name: ResfitFrag, args: {classes: `+fragClasses+`}}, {name: FGD, args: {shareUnit: 100, classes: [{gpus: 1, gpuShare: 25}, {gpus: 1, gpuShare: 50, partition: 3g.40gb}]}}]`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	text := c.Canonical()
	for _, want := range []string{"device: nvidia.com/gpu  # default", "shareUnit: 1000  # default", "classes:  # plugins[0].args.classes",
		"gpuShare: 300\n", `models: "V100M16|V100M32"`, `partition: "3g.40gb"`, "coresPerIdleGPU: 8.8135593220339  # default", "- name: nvidia.com/gpu"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("canonical lacks %q:\n%s", want, text)
		}
	}
	back, err := Load(text, Options{})
	if err != nil {
		t.Fatalf("%s\ndoes not load back: %v", text, err)
	}
	for i := range c.Scorers {
		if diff := cmp.Diff(c.Scorers[i].Args, back.Scorers[i].Args); diff != "" {
			t.Errorf("plugins[%d] loaded back (-first +again):\n%s", i, diff)
		}
	}
}

// Built for a host's device view, ResfitFrag is the pipeline the replay
// assembled by hand: NodeResourcesFit, DeviceShare and the proportional
// filter; FGD at 101, the packing tie-breaker at 1 and, in a host that
// does not follow ends, the node size beside the table's largest node at
// 1. Its totals are the hand-made pipeline's to the bit. Without a device view, or with one of
// another resource, it does not build, and says why.
func TestResfitFragBuildsThePolicy(t *testing.T) {
	schema, _ := resource.NewSchema("cpu", "memory", resource.GPU)
	table := resource.NewTable(schema, 3)
	devices, _ := resource.NewDevices(resource.GPU, 1000)
	for i, n := range []struct {
		cpu, used int64
		gpus      int
	}{{64000, 8000, 8}, {96000, 90000, 8}, {32000, 0, 2}} {
		table.Add(string(rune('a'+i)), resource.Vector{n.cpu, 256 << 30, int64(n.gpus) * 1000}, resource.Vector{n.used, 0, 0})
		devices.AddNode(n.gpus)
	}
	devices.Take(0, 0, 700) // a's first GPU is shared
	table.SetUsed(0, resource.Vector{8000, 0, 700})
	c, err := Load([]byte(`plugins: [{name: ResfitFrag, args: {classes: `+fragClasses+`, coresPerIdleGPU: 4}}]`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	pipe, err := c.BuildFor(schema, Host{Devices: devices})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(append(pipe.FilterNames(), pipe.ScorerNames()...), ", "); got != "NodeResourcesFit, DeviceShare, sra.proportional, FGD, PackLeastUsed, sra.size" {
		t.Errorf("parts %s", got)
	}
	// A host that asks for scores and filters apart leaves DeviceShare out.
	if apart, err := c.BuildFor(schema, Host{Devices: devices, NoDeviceShare: true}); err != nil ||
		strings.Join(append(apart.FilterNames(), apart.ScorerNames()...), ", ") != "NodeResourcesFit, sra.proportional, FGD, PackLeastUsed, sra.size" {
		t.Errorf("without DeviceShare: %v, %v", apart.FilterNames(), err)
	}
	// By hand, as bench/replay assembled it.
	m, _ := frag.NewMeasure([]frag.Class{
		{CPU: 8000, Devices: resource.DeviceRequest{Count: 1, Each: 1000}, Weight: 0.5},
		{CPU: 4000, Devices: resource.DeviceRequest{Count: 1, Each: 300}, Models: "V100M16|V100M32", Weight: 0.3},
		{CPU: 500, Weight: 0.2}}, 1000)
	fgd, _ := frag.NewScorer(schema, devices, m, frag.Options{})
	packing, _ := strategy.NewPackLeastUsed(schema, []string{"cpu", resource.GPU})
	df, _ := scoring.NewDeviceFilter(devices)
	p, _ := sra.NewProportional(schema, []sra.Ratio{{Resource: resource.GPU, CPU: 4}})
	pf, _ := scoring.NewProportionalFilter(p)
	size, _ := sra.NewSize(schema, resource.Vector{96000, 256 << 30, 8000})
	byHand, err := scoring.NewPipeline(schema, []scoring.Filter{scoring.NewFitFilter(nil, nil), df, pf},
		[]scoring.WeightedScorer{{Scorer: fgd, Weight: 101}, {Scorer: scoring.NewStrategyScorer("packing", packing, true), Weight: 1},
			{Scorer: scoring.NewSizeScorer(size), Weight: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range []*scoring.Task{
		{Requests: resource.Vector{4000, 1 << 30, 1000}, Devices: resource.DeviceRequest{Count: 1, Each: 1000}},
		{Requests: resource.Vector{2000, 1 << 30, 300}, Devices: resource.DeviceRequest{Count: 1, Each: 300}},
		{Requests: resource.Vector{2000, 1 << 30, 0}},
	} {
		got, want := pipe.NewBatch(3), byHand.NewBatch(3)
		if err := pipe.Score(task, table, got); err != nil {
			t.Fatal(err)
		}
		if err := byHand.Score(task, table, want); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if got.Feasible(i) != want.Feasible(i) || got.Total(i) != want.Total(i) {
				t.Errorf("%v on %s: %v %v, by hand %v %v", task.Requests, table.Name(i), got.Feasible(i), got.Total(i), want.Feasible(i), want.Total(i))
			}
		}
	}
	if _, err := c.Build(schema); err == nil || !strings.Contains(err.Error(), "scorers[0] (ResfitFrag): needs the host's device view of nvidia.com/gpu") {
		t.Errorf("without a device view: %v", err)
	}
	other, _ := resource.NewDevices("example.com/gpu", 1000)
	for range 3 {
		other.AddNode(0)
	}
	if _, err := c.BuildFor(schema, Host{Devices: other}); err == nil || !strings.Contains(err.Error(), "the host's device view is of example.com/gpu, not nvidia.com/gpu") {
		t.Errorf("another device view: %v", err)
	}
}

func FuzzFrag(f *testing.F) {
	fuzzConfig(f,
		`plugins: [{name: ResfitFrag, args: {classes: `+fragClasses+`}}]`,
		`plugins: [{name: FGD, args: {shareUnit: 100, classes: [{cpu: 1, gpus: 2, gpuShare: 50, weight: 2}, {cpu: 2}]}}]`,
		`tiers: [{plugins: [{name: resfit-frag, arguments: {classes: [{gpus: 1}], coresPerIdleGPU: 8}}]}]`,
		`plugins: [{name: ResfitFrag, args: {classes: [{cpu: 2, gpus: 1}], lifetime: {weight: 0.5}}}]`,
		`plugins: [{name: ResfitLifetime}, {name: ResfitLifetime, weight: 2, args: {}}]`,
		`plugins: [{name: ResfitFrag, args: {classes: [{gpus: 1}], nodeSize: {weight: 2, largest: {cpu: 128, nvidia.com/gpu: 8}}}}]`,
		`plugins: [{name: ResfitNodeSize}, {name: ResfitNodeSize, args: {largest: {memory: 768Gi}}}]`)
}

// FGD weighs a class by its share, its weight over the classes' sum: pods
// counted (3 and 1) score as their shares (0.75 and 0.25) do.
func TestFGDWeighsClassesByTheirShare(t *testing.T) {
	schema, _ := resource.NewSchema("cpu", "memory", resource.GPU)
	table := resource.NewTable(schema, 2)
	devices, _ := resource.NewDevices(resource.GPU, 1000)
	for range 2 {
		table.Add("n", resource.Vector{32000, 64 << 30, 8000}, nil)
		devices.AddNode(8)
	}
	devices.Take(0, 0, 1000)
	devices.Take(0, 1, 500)
	table.SetUsed(0, resource.Vector{0, 0, 1500})
	task := &scoring.Task{Requests: resource.Vector{2000, 0, 500}, Devices: resource.DeviceRequest{Count: 1, Each: 500}}
	var totals [][]float64
	for _, weights := range [][2]string{{"3", "1"}, {"0.75", "0.25"}} {
		c, err := Load([]byte(`plugins: [{name: FGD, args: {classes: [{cpu: 2, gpus: 1, gpuShare: 500, weight: `+weights[0]+`}, {cpu: 8, gpus: 4, weight: `+weights[1]+`}]}}]`), Options{})
		if err != nil {
			t.Fatal(err)
		}
		pipe, err := c.BuildFor(schema, Host{Devices: devices})
		if err != nil {
			t.Fatal(err)
		}
		b := pipe.NewBatch(2)
		if err := pipe.Score(task, table, b); err != nil {
			t.Fatal(err)
		}
		totals = append(totals, []float64{b.Total(0), b.Total(1)})
	}
	if !cmp.Equal(totals[0], totals[1]) || totals[0][0] == totals[0][1] {
		t.Errorf("counts give %v, shares %v", totals[0], totals[1])
	}
}

// A configuration that learns FGD's classes builds a volatile pipeline
// that learns from the tasks the host shows it (Pipeline.Observe): its
// scores then are those of FGD given the classes learned.
func TestLearningFGDLearnsThroughThePipeline(t *testing.T) {
	schema, _ := resource.NewSchema("cpu", "memory", resource.GPU)
	table := resource.NewTable(schema, 2)
	devices, _ := resource.NewDevices(resource.GPU, 1000)
	for range 2 {
		table.Add("n", resource.Vector{32000, 64 << 30, 4000}, nil)
		devices.AddNode(4)
	}
	devices.Take(0, 0, 1000)
	devices.Take(0, 1, 1000)
	devices.Take(0, 2, 1000)
	table.SetUsed(0, resource.Vector{0, 0, 3000})
	c, err := Load([]byte(`plugins: [{name: FGD, args: {learn: {refresh: 1}}}]`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	pipe, err := c.BuildFor(schema, Host{Devices: devices})
	if err != nil {
		t.Fatal(err)
	}
	if !pipe.Volatile() {
		t.Error("a learning FGD is not volatile")
	}
	one := &scoring.Task{Requests: resource.Vector{1000, 0, 1000}, Devices: resource.DeviceRequest{Count: 1, Each: 1000}}
	b := pipe.NewBatch(2)
	pipe.Score(one, table, b)
	if b.Total(0) != 50 || b.Total(1) != 50 {
		t.Errorf("before learning: %v %v, want 50 50", b.Total(0), b.Total(1))
	}
	// The workload is 2-GPU pods: node 0's one idle GPU is a fragment they
	// cannot use, which a 1-GPU pod removes (Δ = 1000: ⌊100σ(1)⌋ = 73).
	pipe.Observe(&scoring.Task{Requests: resource.Vector{1000, 0, 2000}, Devices: resource.DeviceRequest{Count: 2, Each: 1000}})
	pipe.Score(one, table, b)
	if b.Total(0) != 73 || b.Total(1) != 50 {
		t.Errorf("after learning 2-GPU pods: %v %v, want 73 50", b.Total(0), b.Total(1))
	}
}

// TestResfitFragLifetimeTerm: lifetime.weight adds the lifetime term, at
// that weight, for a host that follows when pods end, and only for one;
// a bad weight is refused with its path.
func TestResfitFragLifetimeTerm(t *testing.T) {
	schema, _ := resource.NewSchema("cpu", "memory", resource.GPU)
	devices, _ := resource.NewDevices(resource.GPU, 1000)
	cfg, err := Load([]byte(`plugins: [{name: ResfitFrag, args: {classes: `+fragClasses+`, lifetime: {weight: 7}}}]`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ends := lifetime.NewNodes(0)
	for _, c := range []struct {
		host Host
		want string
	}{
		{Host{Devices: devices, Lifetimes: ends}, "FGD ×101, PackLeastUsed ×1, Lifetime ×7, sra.size ×1"},
		{Host{Devices: devices}, "FGD ×101, PackLeastUsed ×1, sra.size ×1"},
	} {
		pipe, err := cfg.BuildFor(schema, c.host)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range pipe.Scorers() {
			got = append(got, fmt.Sprintf("%s ×%g", s.Scorer.Name(), s.Weight))
		}
		if strings.Join(got, ", ") != c.want {
			t.Errorf("with lifetimes %v: %s, want %s", c.host.Lifetimes != nil, strings.Join(got, ", "), c.want)
		}
	}
	// Declared and learned ends weighed apart: a term for each source, or
	// for one alone where the other weighs 0; written out, the weights
	// load back.
	for _, c := range []struct{ lifetime, want string }{
		{`{weight: 10, learnedWeight: 1000}`, "FGD ×101, PackLeastUsed ×1, Lifetime ×10, LearnedLifetime ×1000, sra.size ×1"},
		{`{weight: 10, learnedWeight: 0}`, "FGD ×101, PackLeastUsed ×1, Lifetime ×10, sra.size ×1"},
		{`{weight: 0, learnedWeight: 1000}`, "FGD ×101, PackLeastUsed ×1, LearnedLifetime ×1000, sra.size ×1"},
		{`{learnedWeight: 300}`, "FGD ×101, PackLeastUsed ×1, Lifetime ×10, LearnedLifetime ×300, sra.size ×1"},
		{`{weight: 300}`, "FGD ×101, PackLeastUsed ×1, Lifetime ×300, sra.size ×1"},
		{`{}`, "FGD ×101, PackLeastUsed ×1, Lifetime ×10, LearnedLifetime ×1000, sra.size ×1"},
	} {
		apart, err := Load([]byte(`plugins: [{name: ResfitFrag, args: {classes: `+fragClasses+`, lifetime: `+c.lifetime+`}}]`), Options{})
		if err != nil {
			t.Fatal(err)
		}
		pipe, err := apart.BuildFor(schema, Host{Devices: devices, Lifetimes: ends})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range pipe.Scorers() {
			got = append(got, fmt.Sprintf("%s ×%g", s.Scorer.Name(), s.Weight))
		}
		again, err := Load(apart.Canonical(), Options{})
		if strings.Join(got, ", ") != c.want || err != nil || !cmp.Equal(again.Scorers[0].Args, apart.Scorers[0].Args) {
			t.Errorf("lifetime %s: %s, want %s; written out and read back %v (%v)", c.lifetime, strings.Join(got, ", "), c.want, again, err)
		}
	}
	for _, bad := range []string{`{weight: -1}`, `{weight: .nan}`, `{wieght: 1}`, `7`, `{learnedWeight: -1}`, `{learnedweight: 1000}`} {
		_, err := Load([]byte(`plugins: [{name: ResfitFrag, args: {classes: `+fragClasses+`, lifetime: `+bad+`}}]`), Options{})
		if err == nil || !strings.Contains(err.Error(), "plugins[0].args.lifetime") {
			t.Errorf("lifetime %s: %v, want an error naming plugins[0].args.lifetime", bad, err)
		}
	}
	if !cfg.ReadsLifetimes() {
		t.Error("ResfitFrag with a lifetime weight does not read lifetimes")
	}
	for doc, want := range map[string]bool{
		// The tie-breaker still waits for an end to be known, and so
		// does the node size.
		`{classes: ` + fragClasses + `, lifetime: {weight: 0}, nodeSize: {weight: 0}}`:                                                                true,
		`{classes: ` + fragClasses + `, lifetime: {weight: 0}, nodeSize: {weight: 0}, tieBreaker: {untilEndsKnown: PackLeastUsed}}`:                   false,
		`{classes: ` + fragClasses + `, lifetime: {weight: 0}, nodeSize: {weight: 0}, tieBreaker: {type: NodeResourcesBalancedAllocation}}`:           false,
		`{classes: ` + fragClasses + `, lifetime: {weight: 0}, nodeSize: {weight: 0}, tieBreaker: {untilEndsKnown: NodeResourcesBalancedAllocation}}`: true,
		`{classes: ` + fragClasses + `, lifetime: {weight: 0}, tieBreaker: {untilEndsKnown: PackLeastUsed}}`:                                          true,
	} {
		off, err := Load([]byte(`plugins: [{name: ResfitFrag, args: `+doc+`}, {name: FGD, args: {learn: {}}}]`), Options{})
		if err != nil || off.ReadsLifetimes() != want {
			t.Errorf("ResfitFrag %s beside FGD: reads lifetimes %v (%v), want %v", doc, off != nil && off.ReadsLifetimes(), err, want)
		}
	}
}

// twoNodesOneBusy are two nodes, a empty and b running a pod that
// declares it ends at 300 s, and the view that follows them.
func twoNodesOneBusy(t *testing.T) (*resource.Schema, *resource.Table, *lifetime.Tracker[string]) {
	t.Helper()
	schema, _ := resource.NewSchema("cpu", "memory", resource.GPU)
	table := resource.NewTable(schema, 2)
	for _, name := range []string{"a", "b"} {
		if _, err := table.Add(name, resource.Vector{8000, 1 << 30, 8}, nil); err != nil {
			t.Fatal(err)
		}
	}
	model, _ := lifetime.NewModel(lifetime.ModelOptions{})
	tr := lifetime.NewTracker[string](model, 2)
	tr.Start("long", lifetime.Pod{Row: 1, Started: 0, Declared: 300}, 0)
	return schema, table, tr
}

// TestLifetimePlugin: ResfitLifetime alone is the lifetime scorer, over
// the host's view or, for a host without one, scoring every node alike;
// it reads lifetimes, loads as a kube-scheduler plugin, and refuses
// arguments with their path.
func TestLifetimePlugin(t *testing.T) {
	schema, table, tr := twoNodesOneBusy(t)
	for _, c := range []struct {
		doc  string
		load func([]byte) (*Config, error)
	}{
		{`plugins: [{name: ResfitLifetime}]`, func(b []byte) (*Config, error) { return Load(b, Options{}) }},
		{`{}`, func([]byte) (*Config, error) { return KubePlugin(Lifetime, map[string]any{}, Options{}) }},
	} {
		cfg, err := c.load([]byte(c.doc))
		if err != nil {
			t.Fatalf("%s: %v", c.doc, err)
		}
		if !cfg.ReadsLifetimes() {
			t.Errorf("%s does not read lifetimes", c.doc)
		}
		for _, host := range []Host{{Lifetimes: tr.Nodes()}, {}} {
			pipe, err := cfg.BuildFor(schema, host)
			if err != nil {
				t.Fatal(err)
			}
			b := pipe.NewBatch(2)
			if err := pipe.Score(&scoring.Task{Requests: resource.Vector{1000, 0, 1}, Ends: 100}, table, b); err != nil {
				t.Fatal(err)
			}
			want := []float64{0, 75} // empty; 300 left against 100: 300/400
			if host.Lifetimes == nil {
				want = []float64{0, 0}
			}
			if got := []float64{b.Total(0), b.Total(1)}; !slices.Equal(got, want) {
				t.Errorf("%s, with a view %v: %v, want %v", c.doc, host.Lifetimes != nil, got, want)
			}
		}
	}
	for doc, want := range map[string]string{
		`plugins: [{name: ResfitLifetime, args: {weight: 3}}]`:        `plugins[0].args["weight"]: ResfitLifetime takes the arguments ends, model`,
		`plugins: [{name: ResfitLifetime, args: {ends: learned}}]`:    `plugins[0].args.ends: must be all or declared (the learned ones are ResfitLearnedLifetime's)`,
		`plugins: [{name: ResfitLearnedLifetime, args: {ends: all}}]`: `plugins[0].args["ends"]: ResfitLearnedLifetime takes one argument, model`,
	} {
		if _, err := Load([]byte(doc), Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %s", doc, err, want)
		}
	}
}

// TestLifetimePluginsBySource: a profile weighs declared and learned ends
// apart as ResfitFrag's lifetime: {weight, learnedWeight} does, with
// ResfitLifetime following the declared ones (ends: declared) and
// ResfitLearnedLifetime the learned ones; each scores the other's pods
// 0 everywhere. Written out, each loads back as it was.
func TestLifetimePluginsBySource(t *testing.T) {
	schema, table, tr := twoNodesOneBusy(t)
	for _, c := range []struct {
		doc, name         string
		declared, learned []float64
	}{
		{`plugins: [{name: ResfitLifetime}]`, "Lifetime", []float64{0, 75}, []float64{0, 75}},
		{`plugins: [{name: ResfitLifetime, args: {ends: all}}]`, "Lifetime", []float64{0, 75}, []float64{0, 75}},
		{`plugins: [{name: ResfitLifetime, args: {ends: declared}}]`, "Lifetime", []float64{0, 75}, []float64{0, 0}},
		{`plugins: [{name: ResfitLearnedLifetime}]`, "LearnedLifetime", []float64{0, 0}, []float64{0, 75}},
	} {
		cfg, err := Load([]byte(c.doc), Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.doc, err)
		}
		again, err := Load(cfg.Canonical(), Options{})
		if err != nil || !cmp.Equal(again.Scorers[0].Args, cfg.Scorers[0].Args) {
			t.Errorf("%s written out and read back: %v (%v)", c.doc, again, err)
		}
		if strings.Contains(c.doc, "ends: declared") && !strings.Contains(string(cfg.Canonical()), "ends: declared  # plugins[0].args.ends") {
			t.Errorf("%s written out does not say where ends came from:\n%s", c.doc, cfg.Canonical())
		}
		pipe, err := cfg.BuildFor(schema, Host{Lifetimes: tr.Nodes()})
		if err != nil {
			t.Fatal(err)
		}
		if pipe.Scorers()[0].Scorer.Name() != c.name {
			t.Errorf("%s: scorer %s, want %s", c.doc, pipe.Scorers()[0].Scorer.Name(), c.name)
		}
		for learned, want := range map[bool][]float64{false: c.declared, true: c.learned} {
			b := pipe.NewBatch(2)
			if err := pipe.Score(&scoring.Task{Requests: resource.Vector{1000, 0, 1}, Ends: 100, EndsLearned: learned}, table, b); err != nil {
				t.Fatal(err)
			}
			if got := []float64{b.Total(0), b.Total(1)}; !slices.Equal(got, want) {
				t.Errorf("%s, a pod whose end is learned %v: %v, want %v", c.doc, learned, got, want)
			}
		}
	}
	if _, err := KubePlugin(LearnedLifetime, map[string]any{}, Options{}); err != nil {
		t.Errorf("ResfitLearnedLifetime as a kube-scheduler plugin: %v", err)
	}
}

// A kube-scheduler profile that enables the lifetime plugins at score
// alone is warned of nothing: they bring no filters to leave out (FGD,
// which does, still is).
func TestLifetimePluginsNeedNoFilterPoint(t *testing.T) {
	doc := func(enabled string) []byte {
		return []byte(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    score:
      disabled: [{name: "*"}]
      enabled: [` + enabled + `]
  pluginConfig:
  - {name: FGD, args: {classes: ` + fragClasses + `}}
  - {name: ResfitLifetime, args: {ends: declared}}`)
	}
	cfg, err := Load(doc(`{name: ResfitLifetime, weight: 10}, {name: ResfitLearnedLifetime, weight: 1000}`), Options{})
	if err != nil || len(cfg.Warnings) > 0 {
		t.Errorf("the lifetime plugins at score alone: %v, warnings %q", err, cfg.Warnings)
	}
	cfg, err = Load(doc(`{name: FGD}, {name: ResfitLifetime, weight: 10}`), Options{})
	if err != nil || len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "FGD scores but is not enabled at filter") {
		t.Errorf("FGD at score alone: %v, warnings %q", err, cfg.Warnings)
	}
}

// TestResfitFragTieBreakWaitsForEnds: on random nodes and pods, ResfitFrag
// as configured by default, built for a host that follows when pods end,
// totals every node as ResfitFrag with the balanced tie-breaker does
// while nothing is known of any end (a pod that has run no time and
// declares nothing) and less than lifetime.FillShare of the GPUs are in
// use, and as ResfitFrag packing from the start does once the task's end,
// or a running pod's, is known or that many are; without a view it packs.
// The same holds for PackLeastUsed with untilEndsKnown beside
// NodeResourcesBalancedAllocation and PackLeastUsed alone.
func TestResfitFragTieBreakWaitsForEnds(t *testing.T) {
	load := func(doc string) *Config {
		c, err := Load([]byte(doc), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// The lifetime term and the node size off, so that the totals differ
	// by the tie-breaker alone.
	const frag = `plugins: [{name: ResfitFrag, args: {classes: ` + fragClasses + `, lifetime: {weight: 0}, nodeSize: {weight: 0}%s}}]`
	pairs := []struct{ waits, balanced, packing *Config }{
		{load(fmt.Sprintf(frag, "")), load(fmt.Sprintf(frag, ", tieBreaker: {type: NodeResourcesBalancedAllocation}")),
			load(fmt.Sprintf(frag, ", tieBreaker: {untilEndsKnown: PackLeastUsed}"))},
		{load(`plugins: [{name: PackLeastUsed, args: {untilEndsKnown: NodeResourcesBalancedAllocation}}]`),
			load(`plugins: [{name: NodeResourcesBalancedAllocation, args: {resources: [{name: cpu, weight: 1}, {name: nvidia.com/gpu, weight: 1}]}}]`),
			load(`plugins: [{name: PackLeastUsed}]`)},
	}
	schema, _ := resource.NewSchema("cpu", "memory", resource.GPU)
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 6).Draw(rt, "nodes")
		table := resource.NewTable(schema, n)
		devices, _ := resource.NewDevices(resource.GPU, 1000)
		var inUse, all int64
		for i := range n {
			gpus := rapid.SampledFrom([]int64{0, 1, 2, 4, 8}).Draw(rt, "gpus")
			row, err := table.Add(fmt.Sprintf("n%d", i), resource.Vector{rapid.Int64Range(1, 64).Draw(rt, "cores") * 1000, 1 << 36, gpus}, nil)
			if err != nil {
				rt.Fatal(err)
			}
			if _, err := devices.AddNode(int(gpus)); err != nil {
				rt.Fatal(err)
			}
			used := rapid.Int64Range(0, gpus).Draw(rt, "used gpus")
			inUse, all = inUse+used, all+gpus
			if err := table.SetUsed(row, resource.Vector{rapid.Int64Range(0, 1000).Draw(rt, "used cpu"), 0, used}); err != nil {
				rt.Fatal(err)
			}
			for g := range used {
				if err := devices.Take(row, int(g), 1000); err != nil {
					rt.Fatal(err)
				}
			}
		}
		model, _ := lifetime.NewModel(lifetime.ModelOptions{})
		tr := lifetime.NewTracker[int](model, n)
		tr.Advance(100)
		// Pods that have run no time and declare nothing: nothing known.
		for id := range rapid.IntRange(0, 3).Draw(rt, "pods of no age") {
			tr.Start(id, lifetime.Pod{Row: rapid.IntRange(0, n-1).Draw(rt, "row"), Started: 100}, 100)
		}
		task := &scoring.Task{Requests: resource.Vector{rapid.Int64Range(0, 8000).Draw(rt, "cpu"), 0, rapid.Int64Range(0, 2).Draw(rt, "gpus")}}
		known := false
		switch rapid.IntRange(0, 2).Draw(rt, "what is known") {
		case 1:
			task.Ends = 100 + rapid.Float64Range(1, 1000).Draw(rt, "task's end")
			known = true
		case 2:
			age := rapid.SampledFrom([]float64{0, 30}).Draw(rt, "age")
			tr.Start(99, lifetime.Pod{Row: rapid.IntRange(0, n-1).Draw(rt, "row"), Started: 100 - age, Declared: 100 + 50*(1-age/30)}, 100)
			known = true // declared, or guessed from its age
		}
		for i, p := range pairs {
			totals := func(c *Config, host Host) []float64 {
				pipe, err := c.BuildFor(schema, host)
				if err != nil {
					rt.Fatal(err)
				}
				b := pipe.NewBatch(n)
				if err := pipe.Score(task, table, b); err != nil {
					rt.Fatal(err)
				}
				out := make([]float64, n)
				for r := range n {
					out[r] = b.Total(r)
				}
				return out
			}
			want := p.balanced
			if known || (all > 0 && float64(inUse)/float64(all) >= lifetime.FillShare) {
				want = p.packing
			}
			if got, w := totals(p.waits, Host{Devices: devices, Lifetimes: tr.Nodes()}), totals(want, Host{Devices: devices}); !slices.Equal(got, w) {
				rt.Fatalf("pair %d, known %v: %v, want %v", i, known, got, w)
			}
			if got, w := totals(p.waits, Host{Devices: devices}), totals(p.packing, Host{Devices: devices}); !slices.Equal(got, w) {
				rt.Fatalf("pair %d without a view: %v, packing %v", i, got, w)
			}
		}
	})
}

// sizeOf is sra.Size's score of a node with these shares of the largest
// node's amounts, summed in float64 in order as Size sums them.
func sizeOf(shares ...float64) float64 {
	var sum float64
	for _, x := range shares {
		sum += x
	}
	return 100 * (1 - sum/float64(len(shares)))
}

// TestResfitFragNodeSize: nodeSize adds sra.Size at its weight, 1 by
// default, scoring the smaller of two nodes higher beside the largest node
// given or, without one, the table's own largest node, which follows the
// nodes; written out, it loads back; weight 0 leaves it out; a bad
// document is refused with the path.
func TestResfitFragNodeSize(t *testing.T) {
	schema, _ := resource.NewSchema("cpu", "memory", resource.GPU)
	devices, _ := resource.NewDevices(resource.GPU, 1000)
	table := resource.NewTable(schema, 3)
	for _, alloc := range []resource.Vector{{128000, 768 << 30, 8000}, {96000, 384 << 30, 8000}} {
		table.Add("n", alloc, nil)
		devices.AddNode(8)
	}
	for _, c := range []struct{ nodeSize, want string }{
		{``, "FGD ×101, PackLeastUsed ×1, sra.size ×1"},
		{`, nodeSize: {}`, "FGD ×101, PackLeastUsed ×1, sra.size ×1"},
		{`, nodeSize: {weight: 0}`, "FGD ×101, PackLeastUsed ×1"},
		{`, nodeSize: {weight: 0, largest: {cpu: 128}}`, "FGD ×101, PackLeastUsed ×1"},
		{`, nodeSize: {weight: 2}`, "FGD ×101, PackLeastUsed ×1, sra.size ×2"},
		{`, nodeSize: {weight: 1, largest: {cpu: 128, memory: 768Gi, nvidia.com/gpu: 8}}`, "FGD ×101, PackLeastUsed ×1, sra.size ×1"},
		{`, nodeSize: {weight: 3, largest: {cpu: "128", memory: 768Gi, example.com/foo: 1}}`, "FGD ×101, PackLeastUsed ×1, sra.size ×3"},
		{`, nodeSize: {largest: {cpu: 256, memory: 768Gi, nvidia.com/gpu: 8}}`, "FGD ×101, PackLeastUsed ×1, sra.size ×1"},
	} {
		cfg, err := Load([]byte(`plugins: [{name: ResfitFrag, args: {classes: `+fragClasses+c.nodeSize+`}}]`), Options{})
		if err != nil {
			t.Fatal(err)
		}
		pipe, err := cfg.BuildFor(schema, Host{Devices: devices})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		var size scoring.Scorer
		for _, s := range pipe.Scorers() {
			got = append(got, fmt.Sprintf("%s ×%g", s.Scorer.Name(), s.Weight))
			if s.Scorer.Name() == scoring.SRASize {
				size = s.Scorer
			}
		}
		again, err := Load(cfg.Canonical(), Options{})
		if strings.Join(got, ", ") != c.want || err != nil || !cmp.Equal(again.Scorers[0].Args, cfg.Scorers[0].Args) {
			t.Errorf("nodeSize %q: %s, want %s; written out and read back %v (%v)", c.nodeSize, strings.Join(got, ", "), c.want, again, err)
		}
		if size == nil {
			continue
		}
		out := make([]float64, 2)
		if err := size.ScoreNodes(&scoring.Task{}, scoring.NewSpan(table, 0, 2), out); err != nil {
			t.Fatal(err)
		}
		// The largest node scores 0 by the resources the schema has; the
		// other has three quarters of its cpu, half its memory and all
		// its GPUs (example.com/foo is on no node of this schema). Beside
		// a reference of 256 cores: a half and three eighths of the cpu.
		want := []float64{0, 25}
		switch {
		case strings.Contains(c.nodeSize, "example.com"):
			want = []float64{0, 100 * (1 - (0.75+0.5)/2)}
		case strings.Contains(c.nodeSize, "256"):
			want = []float64{sizeOf(0.5, 1, 1), sizeOf(0.375, 0.5, 1)}
		}
		if !cmp.Equal(out, want) {
			t.Errorf("nodeSize %q: scores %v, want %v", c.nodeSize, out, want)
		}
	}
	// Without a largest node given, the reference is the table's: a node
	// larger in cpu joins, and the others score beside it.
	cfg, err := Load([]byte(`plugins: [{name: ResfitFrag, args: {classes: `+fragClasses+`}}]`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	pipe, err := cfg.BuildFor(schema, Host{Devices: devices})
	if err != nil {
		t.Fatal(err)
	}
	size := pipe.Scorers()[2].Scorer
	table.Add("larger", resource.Vector{256000, 768 << 30, 8000}, nil)
	out := make([]float64, 3)
	if err := size.ScoreNodes(&scoring.Task{}, scoring.NewSpan(table, 0, 3), out); err != nil {
		t.Fatal(err)
	}
	if want := []float64{sizeOf(0.5, 1, 1), sizeOf(0.375, 0.5, 1), 0}; !cmp.Equal(out, want) {
		t.Errorf("beside the table's largest node once a larger one joined: %v, want %v", out, want)
	}
	if _, err := table.Remove(2); err != nil {
		t.Fatal(err)
	}
	// In a host that follows when pods end, the part counts only once an
	// end is known and, while no pod has ended, half of the GPUs are in
	// use (lifetime.OnceKnownFillShare): 0 on every node until then, the
	// sizes after.
	model, err := lifetime.NewModel(lifetime.ModelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tracker := lifetime.NewTracker[int](model, table.Len())
	followed, err := cfg.BuildFor(schema, Host{Devices: devices, Lifetimes: tracker.Nodes()})
	if err != nil {
		t.Fatal(err)
	}
	gated := followed.Scorers()[len(followed.Scorers())-1]
	check := func(when string, ends float64, want []float64) {
		t.Helper()
		out := make([]float64, 2)
		if err := gated.Scorer.ScoreNodes(&scoring.Task{Ends: ends}, scoring.NewSpan(table, 0, 2), out); err != nil {
			t.Fatal(err)
		}
		if gated.Scorer.Name() != scoring.SRASize || !cmp.Equal(out, want) {
			t.Errorf("followed, %s, a task ending at %v: %s scores %v, want %s %v", when, ends, gated.Scorer.Name(), out, scoring.SRASize, want)
		}
	}
	check("no pod ended, no GPU in use", 0, []float64{0, 0})
	check("no pod ended, no GPU in use", 3600, []float64{0, 0})
	for j := range 7 { // 7 of the 16 GPUs: 44%
		if err := devices.Take(0, j, 1000); err != nil {
			t.Fatal(err)
		}
	}
	check("no pod ended, 44% of the GPUs in use", 3600, []float64{0, 0})
	if err := devices.Take(1, 0, 1000); err != nil {
		t.Fatal(err)
	}
	check("no pod ended, 50% of the GPUs in use", 0, []float64{0, 0})
	check("no pod ended, 50% of the GPUs in use", 3600, []float64{0, 25})
	for j := range 7 {
		if err := devices.Return(0, j, 1000); err != nil {
			t.Fatal(err)
		}
	}
	model.Observe([]string{"a pod"}, 60)
	check("a pod ended, 6% of the GPUs in use", 0, []float64{0, 0})
	check("a pod ended, 6% of the GPUs in use", 3600, []float64{0, 25})
	for bad, path := range map[string]string{
		`{weight: 1, largest: {cpu: 0}}`:         "plugins[0].args.nodeSize.largest",
		`{weight: 1, largest: {cpu: -1}}`:        "plugins[0].args.nodeSize.largest.cpu",
		`{weight: 1, largest: {cpu: 2x}}`:        "plugins[0].args.nodeSize.largest.cpu",
		`{weight: 1, largest: {"bad name!": 1}}`: "plugins[0].args.nodeSize.largest",
		`{weight: 1, largest: [cpu]}`:            "plugins[0].args.nodeSize.largest",
		`{weight: -1, largest: {cpu: 1}}`:        "plugins[0].args.nodeSize.weight",
		`{weight: .nan, largest: {cpu: 1}}`:      "plugins[0].args.nodeSize.weight",
		`{wieght: 1, largest: {cpu: 1}}`:         "plugins[0].args.nodeSize",
		`1`:                                      "plugins[0].args.nodeSize",
	} {
		_, err := Load([]byte(`plugins: [{name: ResfitFrag, args: {classes: `+fragClasses+`, nodeSize: `+bad+`}}]`), Options{})
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("nodeSize %s: %v, want an error naming %s", bad, err, path)
		}
	}
	// A largest node of no resource the schema has prefers no node: 100
	// on every one.
	cfg, err = Load([]byte(`plugins: [{name: ResfitFrag, args: {classes: `+fragClasses+`, nodeSize: {weight: 1, largest: {example.com/foo: 1}}}}]`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := cfg.BuildFor(schema, Host{Devices: devices})
	if err != nil {
		t.Fatal(err)
	}
	if err := foreign.Scorers()[2].Scorer.ScoreNodes(&scoring.Task{}, scoring.NewSpan(table, 0, 2), out[:2]); err != nil || !cmp.Equal(out[:2], []float64{100, 100}) {
		t.Errorf("a largest node outside the schema: %v (%v), want 100 on every node", out[:2], err)
	}
}
