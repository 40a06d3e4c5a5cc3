package scoring_test

import (
	"fmt"
	"os"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
)

// Scoring one GPU task on a GPU node and a CPU node with Volcano's
// resource-strategy-fit arguments.
func ExamplePipeline_Score() {
	cfg, err := config.Load([]byte(`
plugins:
- name: resource-strategy-fit
  args:
    resources:
      nvidia.com/gpu: {type: MostAllocated, weight: 2}
      cpu: {type: LeastAllocated, weight: 1}
`), config.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	schema, _ := resource.NewSchema("cpu", "memory", "nvidia.com/gpu")
	pipe, _ := cfg.Build(schema)
	nodes := resource.NewTable(schema, 2)
	alloc, _ := schema.Parse(map[string]string{"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8"})
	used, _ := schema.Parse(map[string]string{"cpu": "16", "nvidia.com/gpu": "6"})
	nodes.Add("gpu-a", alloc, used)
	alloc, _ = schema.Parse(map[string]string{"cpu": "32", "memory": "128Gi"})
	nodes.Add("cpu-a", alloc, nil)

	req, _ := schema.Parse(map[string]string{"cpu": "8", "nvidia.com/gpu": "2"})
	task := &scoring.Task{Name: "train-0", Requests: req}
	batch := pipe.NewBatch(nodes.Len())
	if err := pipe.Score(task, nodes, batch); err != nil {
		fmt.Println(err)
		return
	}
	batch.Explain(os.Stdout, 3)
	// Output:
	// | # | Pod | Node | Score | resource-strategy-fit |
	// | 0 | train-0 | gpu-a | 875 | 875 |
	// rejected cpu-a by NodeResourcesFit: insufficient nvidia.com/gpu: requested 2, free 0
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
