// Package demo runs the examples: it loads a configuration, builds a small
// cluster, scores each pod on it and prints the explain tables.
package demo

import (
	"fmt"
	"io"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	resfitconfig "github.com/resfit/resfit/scoring/config"
)

// Node is one node as quantities by name.
type Node struct {
	Name              string
	Allocatable, Used map[string]string
}

// Pod is one pod's requests as quantities by name.
type Pod struct {
	Name     string
	Requests map[string]string
}

// Resources are the resources of MixedCluster and Pods.
var Resources = []string{"cpu", "memory", "nvidia.com/gpu"}

// MixedCluster is a GPU node group (8 GPUs each, some in use) and a CPU
// node group.
var MixedCluster = []Node{
	{Name: "gpu-0", Allocatable: map[string]string{"cpu": "96", "memory": "768Gi", "nvidia.com/gpu": "8"}, Used: map[string]string{"cpu": "48", "memory": "256Gi", "nvidia.com/gpu": "6"}},
	{Name: "gpu-1", Allocatable: map[string]string{"cpu": "96", "memory": "768Gi", "nvidia.com/gpu": "8"}, Used: map[string]string{"cpu": "12", "memory": "64Gi", "nvidia.com/gpu": "2"}},
	{Name: "gpu-2", Allocatable: map[string]string{"cpu": "96", "memory": "768Gi", "nvidia.com/gpu": "8"}},
	{Name: "cpu-0", Allocatable: map[string]string{"cpu": "64", "memory": "256Gi"}, Used: map[string]string{"cpu": "40", "memory": "128Gi"}},
	{Name: "cpu-1", Allocatable: map[string]string{"cpu": "64", "memory": "256Gi"}, Used: map[string]string{"cpu": "8", "memory": "32Gi"}},
	{Name: "cpu-2", Allocatable: map[string]string{"cpu": "64", "memory": "256Gi"}, Used: map[string]string{"cpu": "60", "memory": "200Gi"}},
}

// Pods are a CPU pod and a GPU pod.
var Pods = []Pod{
	{Name: "cpu-pod", Requests: map[string]string{"cpu": "8", "memory": "16Gi"}},
	{Name: "gpu-pod", Requests: map[string]string{"cpu": "16", "memory": "64Gi", "nvidia.com/gpu": "2"}},
}

// Run scores every pod on the cluster under the configuration and writes an
// explain table per pod.
func Run(w io.Writer, config string, resources []string, cluster []Node, pods []Pod) error {
	cfg, err := resfitconfig.Load([]byte(config), resfitconfig.Options{})
	if err != nil {
		return err
	}
	schema, err := resource.NewSchema(resources...)
	if err != nil {
		return err
	}
	pipe, err := cfg.Build(schema)
	if err != nil {
		return err
	}
	nodes := resource.NewTable(schema, len(cluster))
	for _, n := range cluster {
		if _, err := nodes.AddQuantities(n.Name, n.Allocatable, n.Used); err != nil {
			return err
		}
	}
	batch := pipe.NewBatch(nodes.Len())
	for _, p := range pods {
		req, err := schema.Parse(p.Requests)
		if err != nil {
			return fmt.Errorf("pod %s: %w", p.Name, err)
		}
		task := &scoring.Task{Name: p.Name, Requests: req}
		if err := pipe.Score(task, nodes, batch); err != nil {
			return err
		}
		fmt.Fprintf(w, "Top scores for %s %v:\n", p.Name, p.Requests)
		if err := batch.Explain(w, 10); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	return nil
}
