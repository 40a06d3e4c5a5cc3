// Package demo runs the examples: it loads a configuration, builds a small
// cluster, scores each pod on it and prints what a reader needs to check
// the numbers by hand.
package demo

import (
	"fmt"
	"io"
	"strconv"
	"strings"

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

// Run prints the configuration as resfit understood it, the cluster and
// the highest score the pipeline can give, then scores every pod on the
// cluster and writes, per pod, its best nodes with scores rounded to two
// decimals (the total and each scorer's weighted part) and the reason each
// rejected node was rejected.
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
	var b strings.Builder
	fmt.Fprintf(&b, "Configuration, as resfit reads it:\n\n%s\n", cfg.Canonical())
	b.WriteString("Cluster, allocatable (used):\n\n| node |")
	for _, r := range resources {
		b.WriteString(" " + r + " |")
	}
	b.WriteString("\n")
	for i := range nodes.Len() {
		fmt.Fprintf(&b, "| %s |", nodes.Name(i))
		alloc, used := nodes.Allocatable(i), nodes.Used(i)
		for j, r := range resources {
			fmt.Fprintf(&b, " %s (%s) |", resource.FormatAmount(r, alloc[j]), resource.FormatAmount(r, used[j]))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\nScores run from 0 to %s, the most this configuration gives.\n\n", rounded(pipe.MaxScore()))
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
		var asks []string
		for j, r := range resources {
			if req[j] != 0 {
				asks = append(asks, r+" "+resource.FormatAmount(r, req[j]))
			}
		}
		fmt.Fprintf(&b, "%s, requesting %s:\n\n| # | node | score |", p.Name, strings.Join(asks, ", "))
		for _, name := range pipe.ScorerNames() {
			b.WriteString(" " + name + " |")
		}
		b.WriteString("\n")
		for rank, i := range batch.Top(10, nil) {
			fmt.Fprintf(&b, "| %d | %s | %s |", rank, nodes.Name(i), rounded(batch.Total(i)))
			for j := range pipe.ScorerNames() {
				b.WriteString(" " + rounded(batch.Contribution(i, j)) + " |")
			}
			b.WriteString("\n")
		}
		for i := range batch.Len() {
			if !batch.Feasible(i) {
				fmt.Fprintf(&b, "rejected %s by %s: %s\n", nodes.Name(i), batch.RejectedBy(i), batch.Reason(i))
			}
		}
		b.WriteString("\n")
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// rounded writes a score to two decimals, without trailing zeros.
func rounded(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
