package scoring_test

import (
	"fmt"
	"os"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// Scoring one GPU task on a GPU node and a CPU node with Volcano's
// resource-strategy-fit arguments.
func ExamplePipeline_Score() {
	cfg, err := scoring.Load([]byte(`
plugins:
- name: resource-strategy-fit
  args:
    resources:
      nvidia.com/gpu: {type: MostAllocated, weight: 2}
      cpu: {type: LeastAllocated, weight: 1}
`), scoring.Options{})
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
	pipe.Explain(os.Stdout, task, nodes, batch, 3)
	// Output:
	// | # | Pod | Node | Score | resource-strategy-fit |
	// | 0 | train-0 | gpu-a | 875 | 875 |
	// rejected cpu-a by NodeResourcesFit: insufficient nvidia.com/gpu: requested 2, free 0
}

// A bad value is reported with its field path.
func ExampleDecodeArgs() {
	_, _, err := scoring.DecodeArgs("resource-strategy-fit", map[string]any{
		"resources": map[string]any{"nvidia.com/gpu": map[string]any{"type": "MostAllocated", "weight": -1}},
	}, scoring.Options{})
	fmt.Println(err)
	// Output:
	// resources["nvidia.com/gpu"].weight: must be > 0, got -1
}
