package kubecompare

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"pgregory.net/rapid"

	"github.com/resfit/resfit/bench"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	resfitconfig "github.com/resfit/resfit/scoring/config"
)

// drawCluster draws a cluster of 1 to 12 nodes over cpu, memory, GPUs and
// one more extended resource: any allocatable amount, 0 included, whole in
// kube-scheduler's units; used amounts up to a little past it (an
// overcommitted node); and a pod requesting any of them, none included.
func drawCluster(t *rapid.T) *bench.Cluster {
	names := []string{resource.CPU, resource.Memory, "example.com/fpga", "nvidia.com/gpu"}
	schema, err := resource.NewSchema(names...)
	if err != nil {
		t.Fatal(err)
	}
	unit := func(name string) int64 {
		switch name {
		case resource.CPU:
			return 1 // millicores
		case resource.Memory:
			return 1 << 20 // MiB
		}
		return 1000 // whole devices
	}
	most := map[string]int64{resource.CPU: 128000, resource.Memory: 512 << 10, "example.com/fpga": 16, "nvidia.com/gpu": 8}
	n := rapid.IntRange(1, 12).Draw(t, "nodes")
	c := &bench.Cluster{Schema: schema, Table: resource.NewTable(schema, n), TaskRequests: map[string]int64{}}
	for i := range n {
		node := bench.Node{Name: fmt.Sprintf("node-%02d", i), Allocatable: map[string]int64{}, Used: map[string]int64{}}
		for _, name := range names {
			a := rapid.Int64Range(0, most[name]).Draw(t, name+" allocatable")
			node.Allocatable[name] = a * unit(name)
			node.Used[name] = rapid.Int64Range(0, a+a/4+1).Draw(t, name+" used") * unit(name)
		}
		alloc, _ := schema.Vector(node.Allocatable)
		used, _ := schema.Vector(node.Used)
		if _, err := c.Table.Add(node.Name, alloc, used); err != nil {
			t.Fatal(err)
		}
		c.Nodes = append(c.Nodes, node)
	}
	for _, name := range names {
		if rapid.IntRange(0, 3).Draw(t, name+" requested") > 0 {
			c.TaskRequests[name] = rapid.Int64Range(0, most[name]/4).Draw(t, name+" request") * unit(name)
		}
	}
	if c.Task, err = schema.Vector(c.TaskRequests); err != nil {
		t.Fatal(err)
	}
	return c
}

// podTask is the pod to place as a task, its requests by the rules every
// host computes them with (resource.RequestsOf: kube-scheduler's non-zero
// defaults for a pod that leaves cpu or memory unset among them).
func podTask(t *rapid.T, c *bench.Cluster) *scoring.Task {
	r, err := resource.RequestsOf(c.Schema, resource.Pod{Containers: []resource.Container{{Requests: c.TaskRequests}}})
	if err != nil {
		t.Fatal(err)
	}
	return &scoring.Task{Requests: r.Plain, NonZeroRequests: r.NonZero}
}

// resfitScores scores the cluster's pod (podTask) on every node with one
// plugin of resfit's own form and no filter, as kube's Score does not
// filter.
func resfitScores(t *rapid.T, c *bench.Cluster, plugin string) *scoring.Batch {
	cfg, err := resfitconfig.Load([]byte("plugins: ["+plugin+"]\nfilters: []"), resfitconfig.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := cfg.Build(c.Schema)
	if err != nil {
		t.Fatal(err)
	}
	b := p.NewBatch(c.Table.Len())
	if err := p.Score(podTask(t, c), c.Table, b); err != nil {
		t.Fatal(err)
	}
	return b
}

// kube-scheduler v1.37.2's own NodeResourcesBalancedAllocation and resfit's
// give every node the same score, over any of the resources, on drawn
// clusters: nodes with nothing of a resource, overcommitted ones, pods that
// request none of the plugin's resources (kube-scheduler's PreScore skips
// them: 0 everywhere) or only some.
func TestBalancedAllocationMatchesKube(t *testing.T) {
	ctx := context.Background()
	rapid.Check(t, func(rt *rapid.T) {
		c := drawCluster(rt)
		resources := rapid.SliceOfNDistinct(rapid.SampledFrom(c.Schema.Names()), 1, 4, rapid.ID[string]).Draw(rt, "resources")
		kube, err := NewKubeBalanced(ctx, c, resources)
		if err != nil {
			rt.Fatal(err)
		}
		want := make([]int64, len(c.Nodes))
		if err := kube.Score(ctx, want); err != nil {
			rt.Fatal(err)
		}
		var rs []string
		for _, n := range resources {
			rs = append(rs, fmt.Sprintf("{name: %q, weight: 1}", n))
		}
		b := resfitScores(rt, c, fmt.Sprintf("{name: NodeResourcesBalancedAllocation, args: {resources: [%s]}}", strings.Join(rs, ", ")))
		row := map[string]int{}
		for i := range c.Table.Len() {
			row[c.Table.Name(i)] = i
		}
		for i, name := range kube.NodeNames() {
			if got := b.Total(row[name]); got != float64(want[i]) {
				rt.Fatalf("node %s over %v: resfit %v, kube-scheduler %d (allocatable %v, used %v, request %v)", name, resources, got, want[i], c.Table.Allocatable(row[name]), c.Table.Used(row[name]), c.Task)
			}
		}
	})
}

// kube-scheduler v1.37.2's own NodeResourcesFit and resfit's give every
// node the same score under each scoring strategy, with drawn weights and,
// for RequestedToCapacityRatio, a drawn shape, on drawn clusters.
func TestNodeResourcesFitMatchesKube(t *testing.T) {
	ctx := context.Background()
	rapid.Check(t, func(rt *rapid.T) {
		c := drawCluster(rt)
		typ := rapid.SampledFrom(strategies).Draw(rt, "type")
		weights := make([]int64, c.Schema.Len())
		var rs []string
		for i, n := range c.Schema.Names() {
			weights[i] = rapid.Int64Range(1, 100).Draw(rt, n+" weight")
			rs = append(rs, fmt.Sprintf("{name: %q, weight: %d}", n, weights[i]))
		}
		var pts []config.UtilizationShapePoint
		var text []string
		utilization := int32(-1)
		for range rapid.IntRange(1, 5).Draw(rt, "shape points") {
			if utilization >= 100 {
				break
			}
			utilization = rapid.Int32Range(utilization+1, 100).Draw(rt, "utilization")
			score := rapid.Int32Range(0, 10).Draw(rt, "score")
			pts = append(pts, config.UtilizationShapePoint{Utilization: utilization, Score: score})
			text = append(text, fmt.Sprintf("{utilization: %d, score: %d}", utilization, score))
		}
		kube, err := NewKube(ctx, c, typ, weights, pts)
		if err != nil {
			rt.Fatal(err)
		}
		want := make([]int64, len(c.Nodes))
		if err := kube.Score(ctx, want); err != nil {
			rt.Fatal(err)
		}
		extra := ""
		if typ == config.RequestedToCapacityRatio {
			extra = ", requestedToCapacityRatio: {shape: [" + strings.Join(text, ", ") + "]}"
		}
		b := resfitScores(rt, c, fmt.Sprintf("{name: NodeResourcesFit, args: {scoringStrategy: {type: %s, resources: [%s]%s}}}", typ, strings.Join(rs, ", "), extra))
		for i, name := range kube.NodeNames() {
			row := slices.IndexFunc(c.Nodes, func(n bench.Node) bool { return n.Name == name }) // rows in node order
			if got := b.Total(row); got != float64(want[i]) {
				rt.Fatalf("%s, node %s: resfit %v, kube-scheduler %d (allocatable %v, used %v, request %v)", typ, name, got, want[i], c.Table.Allocatable(row), c.Table.Used(row), c.Task)
			}
		}
	})
}
