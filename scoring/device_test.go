package scoring_test

import (
	"strings"
	"testing"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
	"github.com/resfit/resfit/sra"
)

// Two nodes with 1000 milli-GPU free each: one as a whole GPU, one as
// 4 × 250. NodeResourcesFit passes both for a pod sharing 300 of one GPU;
// the device filter keeps only the whole GPU.
func TestDeviceFilterSeesDevicesNotTotals(t *testing.T) {
	schema, _ := resource.NewSchema("cpu", gpu)
	nodes := resource.NewTable(schema, 2)
	devs, _ := resource.NewDevices(gpu, 1000)
	nodes.Add("whole", resource.Vector{8000, 4000}, resource.Vector{0, 3000})
	devs.AddNode(4)
	nodes.Add("split", resource.Vector{8000, 4000}, resource.Vector{0, 3000})
	devs.AddNode(4)
	for j := range 3 {
		devs.Take(0, j, 1000)
	}
	for j := range 4 {
		devs.Take(1, j, 750)
	}
	df, err := scoring.NewDeviceFilter(devs)
	if err != nil {
		t.Fatal(err)
	}
	p, err := scoring.NewPipeline(schema, []scoring.Filter{scoring.NewFitFilter(nil, nil), df}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := p.NewBatch(2)
	task := &scoring.Task{Name: "share", Requests: resource.Vector{1000, 300}, Devices: resource.DeviceRequest{Count: 1, Each: 300}}
	if err := p.Score(task, nodes, b); err != nil {
		t.Fatal(err)
	}
	if !b.Feasible(0) || b.Feasible(1) || b.RejectedBy(1) != "DeviceShare" {
		t.Fatalf("feasible %v %v, rejected by %q", b.Feasible(0), b.Feasible(1), b.RejectedBy(1))
	}
	if got, want := b.Reason(1), "Insufficient nvidia.com/gpu devices: 0 of 4 have 300m free, 1 needed"; got != want {
		t.Errorf("reason %q, want %q", got, want)
	}
	// Without the device request both nodes pass: the task asks nothing
	// of individual devices.
	task.Devices = resource.DeviceRequest{}
	if err := p.Score(task, nodes, b); err != nil || !b.Feasible(1) {
		t.Fatalf("err %v, feasible %v", err, b.Feasible(1))
	}
	// Bad requests and a view that does not match the table are errors.
	for _, d := range []resource.DeviceRequest{{Count: 1}, {Count: -1, Each: 5}, {Count: 1, Each: 2000}} {
		task.Devices = d
		if err := p.Score(task, nodes, b); err == nil {
			t.Errorf("device request %v accepted", d)
		}
	}
	devs.AddNode(1)
	task.Devices = resource.DeviceRequest{Count: 1, Each: 300}
	if err := p.Score(task, nodes, b); err == nil || !strings.Contains(err.Error(), "3 nodes, the table 2") {
		t.Errorf("mismatched view: %v", err)
	}
	if _, err := scoring.NewDeviceFilter(nil); err == nil {
		t.Error("nil view accepted")
	}
}

// A pipeline assembled in code: the proportional filter keeps 8 cores per
// idle GPU: a 10-core CPU pod may go to an idle 8-GPU node with c free
// cores only if c − 10 ≥ 8 × 8.
func TestAssembledPipelineWithProportionalFilter(t *testing.T) {
	schema, _ := resource.NewSchema("cpu", gpu)
	p, err := sra.NewProportional(schema, []sra.Ratio{{Resource: gpu, CPU: 8}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := scoring.NewProportionalFilter(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := scoring.NewProportionalFilter(nil); err == nil {
		t.Error("nil accepted")
	}
	nodes := resource.NewTable(schema, 2)
	nodes.Add("gpu-73", resource.Vector{80000, 8000}, resource.Vector{7000, 0})
	nodes.Add("gpu-80", resource.Vector{80000, 8000}, nil)
	pipe, err := scoring.NewPipeline(schema, []scoring.Filter{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := pipe.NewBatch(2)
	if err := pipe.Score(&scoring.Task{Requests: resource.Vector{10000, 0}}, nodes, b); err != nil {
		t.Fatal(err)
	}
	if b.Feasible(0) || !b.Feasible(1) {
		t.Errorf("feasible %v %v: 73 − 10 < 64 must fail, 80 − 10 ≥ 64 pass", b.Feasible(0), b.Feasible(1))
	}
	// Scorers hands out a copy of the list.
	withScorer, _ := scoring.NewPipeline(schema, nil, []scoring.WeightedScorer{{Scorer: mustKubeScorer(t, schema), Weight: 2}})
	list := withScorer.Scorers()
	list[0].Weight = 99
	if withScorer.Scorers()[0].Weight != 2 {
		t.Error("Scorers exposed the pipeline's own list")
	}
}

func mustKubeScorer(t *testing.T, schema *resource.Schema) scoring.Scorer {
	t.Helper()
	cfg, err := config.Load([]byte("plugins:\n- name: NodeResourcesFit\n"), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := cfg.Build(schema)
	if err != nil {
		t.Fatal(err)
	}
	return p.Scorers()[0].Scorer
}
