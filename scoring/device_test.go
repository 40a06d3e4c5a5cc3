package scoring_test

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

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

// A task that accepts some GPU models is kept off nodes of other models
// and off nodes whose model is unknown, and the reason names them.
func TestDeviceFilterModels(t *testing.T) {
	schema, _ := resource.NewSchema("cpu", gpu)
	table := resource.NewTable(schema, 3)
	devices, _ := resource.NewDevices(gpu, 1000)
	for i, model := range []string{"P100", "V100M32", ""} {
		table.Add(model+"-node", resource.Vector{32000, 8000}, nil)
		devices.AddNode(8)
		devices.SetModel(i, model)
	}
	df, _ := scoring.NewDeviceFilter(devices)
	pipe, _ := scoring.NewPipeline(schema, []scoring.Filter{df}, nil)
	models, _ := resource.ParseModelSet("V100M16|V100M32")
	task := &scoring.Task{Requests: resource.Vector{1000, 1000}, Devices: resource.DeviceRequest{Count: 1, Each: 1000}, Models: models}
	batch := pipe.NewBatch(3)
	if err := pipe.Score(task, table, batch); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"nvidia.com/gpu model P100 is not one the task accepts (V100M16, V100M32)",
		"",
		"nvidia.com/gpu model unknown; the task accepts only V100M16, V100M32",
	}
	for i, w := range want {
		if batch.Reason(i) != w || batch.Feasible(i) != (w == "") {
			t.Errorf("row %d: feasible %v, %q; want %q", i, batch.Feasible(i), batch.Reason(i), w)
		}
	}
	// Any model for a task that names none; none checked for a task that
	// asks for no device.
	for _, task := range []*scoring.Task{
		{Requests: resource.Vector{1000, 1000}, Devices: resource.DeviceRequest{Count: 1, Each: 1000}},
		{Requests: resource.Vector{1000, 0}, Models: models},
	} {
		pipe.Score(task, table, batch)
		for i := range 3 {
			if !batch.Feasible(i) {
				t.Errorf("task %+v rejected on row %d: %s", task, i, batch.Reason(i))
			}
		}
	}
}

// The filter agrees with a slow reference on random nodes, models and
// requests: a node passes when enough of its devices have enough free and
// its model is one the task accepts (or the task accepts any).
func TestDeviceFilterMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		schema, _ := resource.NewSchema("cpu", gpu)
		n := rapid.IntRange(1, 12).Draw(t, "nodes")
		table := resource.NewTable(schema, n)
		devices, _ := resource.NewDevices(gpu, 1000)
		for i := range n {
			count := rapid.IntRange(0, 8).Draw(t, "gpus")
			table.Add(fmt.Sprint("n", i), resource.Vector{64000, int64(count) * 1000}, nil)
			devices.AddNode(count)
			devices.SetModel(i, rapid.SampledFrom([]string{"", "A10", "T4", "V100M32"}).Draw(t, "model"))
			for j := range count {
				devices.Take(i, j, rapid.Int64Range(0, 1000).Draw(t, "taken"))
			}
		}
		models, _ := resource.ParseModelSet(rapid.SampledFrom([]string{"", "A10", "T4|V100M32", "P100"}).Draw(t, "accepts"))
		req := resource.DeviceRequest{Count: rapid.IntRange(0, 3).Draw(t, "count")}
		if req.Count > 0 {
			req.Each = rapid.Int64Range(1, 1000).Draw(t, "each")
		}
		task := &scoring.Task{Requests: resource.Vector{0, req.Total()}, Devices: req, Models: models}
		df, _ := scoring.NewDeviceFilter(devices)
		pipe, _ := scoring.NewPipeline(schema, []scoring.Filter{df}, nil)
		batch := pipe.NewBatch(n)
		if err := pipe.Score(task, table, batch); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			enough := 0
			for _, f := range devices.Free(i) {
				if f >= req.Each {
					enough++
				}
			}
			modelOK := models == ""
			for _, m := range strings.Split(string(models), "|") {
				modelOK = modelOK || m == devices.Model(i)
			}
			want := req.Count == 0 || enough >= req.Count && modelOK
			if batch.Feasible(i) != want {
				t.Fatalf("row %d (model %q, free %v): feasible %v, reference %v", i, devices.Model(i), devices.Free(i), batch.Feasible(i), want)
			}
		}
	})
}
