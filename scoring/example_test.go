package scoring_test

import (
	"fmt"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
	"github.com/resfit/resfit/strategy"
)

// A pipeline built in code, without a configuration file: the fit filter
// and Volcano's resource-strategy-fit score, scoring one GPU task on a GPU
// node and a CPU node.
func ExamplePipeline_Score() {
	schema, _ := resource.NewSchema("cpu", "memory", "nvidia.com/gpu")
	fit, err := strategy.NewVolcanoFit(schema, []strategy.Resource{
		{Name: "nvidia.com/gpu", Type: strategy.MostAllocated, Weight: 2},
		{Name: "cpu", Type: strategy.LeastAllocated, Weight: 1},
	}, strategy.DefaultVolcanoPluginWeight)
	if err != nil {
		fmt.Println(err)
		return
	}
	pipe, err := scoring.NewPipeline(schema,
		[]scoring.Filter{scoring.NewFitFilter(nil, nil)},
		[]scoring.WeightedScorer{{Scorer: scoring.NewVolcanoScorer("rsf", fit), Weight: 1}})
	if err != nil {
		fmt.Println(err)
		return
	}
	nodes := resource.NewTable(schema, 2)
	nodes.Add("gpu-a", resource.Vector{64000, 512 << 30, 8000}, resource.Vector{16000, 0, 6000})
	nodes.Add("cpu-a", resource.Vector{32000, 128 << 30, 0}, nil)

	task := &scoring.Task{Name: "train-0", Requests: resource.Vector{8000, 0, 2000}}
	batch := pipe.NewBatch(nodes.Len())
	if err := pipe.Score(task, nodes, batch); err != nil {
		fmt.Println(err)
		return
	}
	for _, i := range batch.Top(2, nil) {
		fmt.Println(nodes.Name(i), batch.Total(i))
	}
	fmt.Println(nodes.Name(1)+":", batch.Reason(1))
	// Output:
	// gpu-a 875
	// cpu-a: insufficient nvidia.com/gpu: requested 2, free 0
}

// A bad value is reported with its field path.
func ExampleDecodeArgs() {
	_, _, err := config.DecodeArgs("resource-strategy-fit", map[string]any{
		"resources": map[string]any{"nvidia.com/gpu": map[string]any{"type": "MostAllocated", "weight": -1}},
	}, config.Options{})
	fmt.Println(err)
	// Output:
	// resources["nvidia.com/gpu"].weight: must be > 0, got -1
}

// GPU sharing: two nodes with the same GPU total but different devices.
// A pod asking for 600 milli of one GPU passes NodeResourcesFit on both;
// the DeviceFilter sees that only one has a GPU with that much free.
func ExampleDeviceFilter() {
	schema, _ := resource.NewSchema("cpu", "nvidia.com/gpu")
	nodes := resource.NewTable(schema, 2)
	gpus, _ := resource.NewDevices("nvidia.com/gpu", 1000)
	for _, name := range []string{"halves", "one-whole"} {
		nodes.Add(name, resource.Vector{16000, 2000}, resource.Vector{0, 1000})
		gpus.AddNode(2)
	}
	gpus.Take(0, 0, 500) // halves: 500 + 500 free
	gpus.Take(0, 1, 500)
	gpus.Take(1, 1, 1000) // one-whole: 1000 + 0 free
	filter, _ := scoring.NewDeviceFilter(gpus)
	cfg, _ := config.Load([]byte("plugins:\n- name: NodeResourcesFit\n  args: {scoringStrategy: {type: MostAllocated}}\n"), config.Options{})
	pipe, _ := cfg.Build(schema)
	pipe, _ = pipe.WithFilters(filter)

	task := &scoring.Task{Name: "share-600", Requests: resource.Vector{2000, 600},
		Devices: resource.DeviceRequest{Count: 1, Each: 600}}
	batch := pipe.NewBatch(nodes.Len())
	if err := pipe.Score(task, nodes, batch); err != nil {
		fmt.Println(err)
		return
	}
	best := batch.Top(1, nil)[0]
	fmt.Println(nodes.Name(best), "GPU", gpus.Tightest(best, 600))
	fmt.Println(nodes.Name(0)+":", batch.Reason(0))
	// Output:
	// one-whole GPU 0
	// halves: Insufficient nvidia.com/gpu devices: 0 of 2 have 600m free, 1 needed
}

// A training job's workers placed one after another through a Placer:
// GPUs packed (MostAllocated weight 2), cpu spread (LeastAllocated weight
// 1). The first worker scores every node; each later one only the node
// the worker before it changed. On gpu-a the first worker scores
// 1000·(2·7/8 + 40/64)/3 = 791.67; the third no longer fits there and
// goes to gpu-b, 1000·(2·1/8 + 56/64)/3 = 375. A gang of eight needs eight
// GPUs, gpu-b has seven free: it places nothing, and gpu-b is as it was.
func ExamplePlacer() {
	schema, _ := resource.NewSchema("cpu", "memory", "nvidia.com/gpu")
	cfg, err := config.Load([]byte(`
tiers:
- plugins:
  - name: resource-strategy-fit
    arguments:
      resources:
        nvidia.com/gpu: {type: MostAllocated, weight: 2}
        cpu: {type: LeastAllocated, weight: 1}
`), config.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	pipe, err := cfg.Build(schema)
	if err != nil {
		fmt.Println(err)
		return
	}
	nodes := resource.NewTable(schema, 3)
	nodes.Add("gpu-a", resource.Vector{64000, 512 << 30, 8000}, resource.Vector{16000, 0, 6000})
	nodes.Add("gpu-b", resource.Vector{64000, 512 << 30, 8000}, nil)
	nodes.Add("cpu-a", resource.Vector{32000, 128 << 30, 0}, nil)

	placer, err := scoring.NewPlacer(pipe, nodes, scoring.PlacerOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	worker := &scoring.Task{Name: "worker", Requests: resource.Vector{8000, 32 << 30, 1000}}
	for i := range 3 {
		row, err := placer.Place(worker)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("worker-%d → %s (%.2f)\n", i, nodes.Name(row), placer.Total())
	}
	gang := []*scoring.Task{worker, worker, worker, worker, worker, worker, worker, worker}
	rows, err := placer.PlaceGang(gang, len(gang))
	fmt.Println("gang of 8:", rows, err, "— gpu-b still uses", nodes.Used(1)[2]/1000, "GPU")
	// Output:
	// worker-0 → gpu-a (791.67)
	// worker-1 → gpu-a (833.33)
	// worker-2 → gpu-b (375.00)
	// gang of 8: [] <nil> — gpu-b still uses 1 GPU
}
