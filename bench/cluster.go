// Package bench measures resfit's scoring throughput. Its generator makes
// the clusters that the benchmarks here, and the side-by-side comparison
// with kube-scheduler in bench/kubecompare, score.
package bench

import (
	"fmt"
	"math/rand/v2"

	"github.com/resfit/resfit/resource"
)

// Resources lists the resource names of a generated cluster with k
// resources (3 or 8): cpu, memory, nvidia.com/gpu, then example.com/r1…
func Resources(k int) []string {
	names := []string{resource.CPU, resource.Memory, "nvidia.com/gpu"}
	for i := 1; len(names) < k; i++ {
		names = append(names, fmt.Sprintf("example.com/r%d", i))
	}
	return names[:k]
}

// Node is one generated node, amounts by name in canonical units. Extended
// resources are whole counts times 1000 (Kubernetes requires integers).
type Node struct {
	Name              string
	Allocatable, Used map[string]int64
}

// Cluster is a generated cluster and the task scored against it.
type Cluster struct {
	Schema *resource.Schema
	Table  *resource.Table
	Nodes  []Node
	// Task is the request scored, by name and as a vector.
	TaskRequests map[string]int64
	Task         resource.Vector
}

// Generate makes n nodes over k resources from a seed: 32–128 cores,
// 64–512 GiB, every fourth node with 8 GPUs, 0–16 of each other extended
// resource, each used by a random share; and a task of 4 cores, 16 GiB, one
// GPU and one of each other resource. Every amount is whole in kube-scheduler's
// units, so both score the same numbers.
func Generate(n, k int, seed uint64) (*Cluster, error) {
	names := Resources(k)
	schema, err := resource.NewSchema(names...)
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	c := &Cluster{Schema: schema, Table: resource.NewTable(schema, n), TaskRequests: map[string]int64{}}
	for i := range n {
		node := Node{Name: fmt.Sprintf("node-%06d", i), Allocatable: map[string]int64{}, Used: map[string]int64{}}
		for _, name := range names {
			var a int64
			switch name {
			case resource.CPU:
				a = (32 + r.Int64N(97)) * 1000
			case resource.Memory:
				a = (64 + r.Int64N(449)) << 30
			case "nvidia.com/gpu":
				if i%4 == 0 {
					a = 8 * 1000
				}
			default:
				a = r.Int64N(17) * 1000
			}
			node.Allocatable[name] = a
			if a > 0 {
				u := r.Int64N(a + 1)
				if resource.IsExtended(name) {
					u -= u % 1000 // whole devices
				}
				node.Used[name] = u
			}
		}
		alloc, _ := schema.Vector(node.Allocatable)
		used, _ := schema.Vector(node.Used)
		if _, err := c.Table.Add(node.Name, alloc, used); err != nil {
			return nil, err
		}
		c.Nodes = append(c.Nodes, node)
	}
	for _, name := range names {
		switch name {
		case resource.CPU:
			c.TaskRequests[name] = 4000
		case resource.Memory:
			c.TaskRequests[name] = 16 << 30
		default:
			c.TaskRequests[name] = 1000
		}
	}
	c.Task, err = schema.Vector(c.TaskRequests)
	return c, err
}
