// Command quickstart scores a CPU pod and a GPU pod on a small mixed
// GPU/CPU cluster with the AI-scenario configuration of Volcano's
// resource-strategy-fit (GPU MostAllocated weight 2, cpu LeastAllocated
// weight 1), and prints the explain table for each.
//
//	go run ./examples/quickstart
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// config is the plugin configuration from the resource-strategy-fit design,
// in Volcano's own volcano-scheduler.conf form.
const config = `
actions: "enqueue, allocate, backfill, reclaim, preempt"
tiers:
- plugins:
  - name: resource-strategy-fit
    arguments:
      resourceStrategyFitWeight: 10
      resources:
        nvidia.com/gpu:
          type: MostAllocated
          weight: 2
        cpu:
          type: LeastAllocated
          weight: 1
`

type node struct {
	name        string
	allocatable map[string]string
	used        map[string]string
}

// cluster is a GPU node group (8 GPUs each, some in use) and a CPU node
// group.
var cluster = []node{
	{"gpu-0", map[string]string{"cpu": "96", "memory": "768Gi", "nvidia.com/gpu": "8"}, map[string]string{"cpu": "48", "memory": "256Gi", "nvidia.com/gpu": "6"}},
	{"gpu-1", map[string]string{"cpu": "96", "memory": "768Gi", "nvidia.com/gpu": "8"}, map[string]string{"cpu": "12", "memory": "64Gi", "nvidia.com/gpu": "2"}},
	{"gpu-2", map[string]string{"cpu": "96", "memory": "768Gi", "nvidia.com/gpu": "8"}, nil},
	{"cpu-0", map[string]string{"cpu": "64", "memory": "256Gi"}, map[string]string{"cpu": "40", "memory": "128Gi"}},
	{"cpu-1", map[string]string{"cpu": "64", "memory": "256Gi"}, map[string]string{"cpu": "8", "memory": "32Gi"}},
	{"cpu-2", map[string]string{"cpu": "64", "memory": "256Gi"}, map[string]string{"cpu": "60", "memory": "200Gi"}},
}

var pods = []struct {
	name     string
	requests map[string]string
}{
	{"cpu-pod", map[string]string{"cpu": "8", "memory": "16Gi"}},
	{"gpu-pod", map[string]string{"cpu": "16", "memory": "64Gi", "nvidia.com/gpu": "2"}},
}

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	cfg, err := scoring.Load([]byte(config), scoring.Options{})
	if err != nil {
		return err
	}
	schema, err := resource.NewSchema(resource.CPU, resource.Memory, "nvidia.com/gpu")
	if err != nil {
		return err
	}
	pipe, err := cfg.Build(schema)
	if err != nil {
		return err
	}
	nodes := resource.NewTable(schema, len(cluster))
	for _, n := range cluster {
		alloc, err := schema.Parse(n.allocatable)
		if err != nil {
			return fmt.Errorf("node %s: %w", n.name, err)
		}
		used, err := schema.Parse(n.used)
		if err != nil {
			return fmt.Errorf("node %s: %w", n.name, err)
		}
		if _, err := nodes.Add(n.name, alloc, used); err != nil {
			return err
		}
	}
	batch := pipe.NewBatch(nodes.Len())
	for _, p := range pods {
		req, err := schema.Parse(p.requests)
		if err != nil {
			return fmt.Errorf("pod %s: %w", p.name, err)
		}
		task := &scoring.Task{Name: p.name, Requests: req}
		if err := pipe.Score(task, nodes, batch); err != nil {
			return err
		}
		fmt.Fprintf(w, "Top scores for %s %v:\n", p.name, p.requests)
		if err := pipe.Explain(w, task, nodes, batch, 10); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "The GPU pod packs onto the fullest GPU node. Spreading cpu alone sends the CPU pod to\n"+
		"the emptiest node, here a GPU node: scarce-resource avoidance (sra) is what keeps it off.")
	return nil
}
