// Package kubecompare scores the same generated clusters with
// kube-scheduler's own NodeResourcesFit and NodeResourcesBalancedAllocation
// plugins (k8s.io/kubernetes v1.37.2, built with noderesources.NewFit and
// NewBalancedAllocation and driven through PreScore and Score as
// kube-scheduler's tests drive them) and with resfit's kube profile, so
// that their answers are held equal and their speed is compared on equal
// work.
package kubecompare

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
	"k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/resfit/resfit/bench"
	"github.com/resfit/resfit/resource"
)

// quantity turns a canonical amount back into a Kubernetes quantity:
// millicores for cpu, whole units otherwise (extended resources are
// generated whole).
func quantity(name string, v int64) kres.Quantity {
	switch {
	case name == resource.CPU:
		return *kres.NewMilliQuantity(v, kres.DecimalSI)
	case resource.UnitOf(name) == resource.Milli:
		return *kres.NewQuantity(v/1000, kres.DecimalSI)
	}
	return *kres.NewQuantity(v, kres.BinarySI)
}

func list(amounts map[string]int64) v1.ResourceList {
	l := v1.ResourceList{}
	for n, v := range amounts {
		l[v1.ResourceName(n)] = quantity(n, v)
	}
	return l
}

// Objects converts a generated cluster into kube-scheduler's objects: a
// node per generated node, one running pod per node requesting its used
// amounts (every resource set explicitly, so kube-scheduler's non-zero
// defaults change nothing), and the pod to place.
func Objects(c *bench.Cluster) (nodes []*v1.Node, pods []*v1.Pod, pod *v1.Pod) {
	for _, n := range c.Nodes {
		alloc := list(n.Allocatable)
		alloc[v1.ResourcePods] = *kres.NewQuantity(110, kres.DecimalSI)
		nodes = append(nodes, &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: n.Name},
			Status:     v1.NodeStatus{Allocatable: alloc, Capacity: alloc},
		})
		used := map[string]int64{}
		for name := range n.Allocatable {
			used[name] = n.Used[name]
		}
		pods = append(pods, &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "load-" + n.Name, Namespace: "default", UID: types.UID("load-" + n.Name)},
			Spec: v1.PodSpec{NodeName: n.Name, Containers: []v1.Container{{
				Name: "c", Resources: v1.ResourceRequirements{Requests: list(used)},
			}}},
		})
	}
	pod = &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "task", Namespace: "default", UID: "task"},
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name: "c", Resources: v1.ResourceRequirements{Requests: list(c.TaskRequests)},
		}}},
	}
	return nodes, pods, pod
}

// Kube is kube-scheduler's NodeResourcesFit ready to score one pod on a
// snapshot of nodes.
type Kube struct {
	plugin    fwk.Plugin
	nodeInfos []fwk.NodeInfo
	pod       *v1.Pod
}

// NewKube builds the plugin with a scoring strategy over a generated
// cluster. shape is used for RequestedToCapacityRatio.
func NewKube(ctx context.Context, c *bench.Cluster, typ config.ScoringStrategyType, weights []int64, shape []config.UtilizationShapePoint) (*Kube, error) {
	var rs []config.ResourceSpec
	for i, n := range c.Schema.Names() {
		rs = append(rs, config.ResourceSpec{Name: n, Weight: weights[i]})
	}
	args := &config.NodeResourcesFitArgs{ScoringStrategy: &config.ScoringStrategy{Type: typ, Resources: rs}}
	if typ == config.RequestedToCapacityRatio {
		args.ScoringStrategy.RequestedToCapacityRatio = &config.RequestedToCapacityRatioParam{Shape: shape}
	}
	return newKube(ctx, c, func(fh fwk.Handle) (fwk.Plugin, error) {
		return noderesources.NewFit(ctx, args, fh, feature.Features{})
	})
}

// NewKubeBalanced builds kube-scheduler's NodeResourcesBalancedAllocation
// over the named resources (weight 1 each, as it requires) and a cluster.
func NewKubeBalanced(ctx context.Context, c *bench.Cluster, resources []string) (*Kube, error) {
	var rs []config.ResourceSpec
	for _, n := range resources {
		rs = append(rs, config.ResourceSpec{Name: n, Weight: 1})
	}
	args := &config.NodeResourcesBalancedAllocationArgs{Resources: rs}
	return newKube(ctx, c, func(fh fwk.Handle) (fwk.Plugin, error) {
		return noderesources.NewBalancedAllocation(ctx, args, fh, feature.Features{})
	})
}

// newKube builds a plugin over a cluster's objects.
func newKube(ctx context.Context, c *bench.Cluster, build func(fwk.Handle) (fwk.Plugin, error)) (*Kube, error) {
	nodes, pods, pod := Objects(c)
	snapshot := cache.NewSnapshot(pods, nodes)
	fh, err := runtime.NewFramework(ctx, nil, nil, runtime.WithSnapshotSharedLister(snapshot))
	if err != nil {
		return nil, err
	}
	p, err := build(fh)
	if err != nil {
		return nil, err
	}
	infos, err := snapshot.NodeInfos().List()
	if err != nil {
		return nil, err
	}
	return &Kube{plugin: p, nodeInfos: infos, pod: pod}, nil
}

// Score runs PreScore once and Score on every node, as a scheduling cycle
// does, writing the scores in node order. A plugin whose PreScore skips
// the pod (BalancedAllocation for a pod that requests none of its
// resources) adds nothing to any node: 0.
func (k *Kube) Score(ctx context.Context, out []int64) error {
	state := framework.NewCycleState()
	if s := k.plugin.(fwk.PreScorePlugin).PreScore(ctx, state, k.pod, k.nodeInfos); s.IsSkip() {
		clear(out)
		return nil
	} else if !s.IsSuccess() {
		return fmt.Errorf("PreScore: %v", s.AsError())
	}
	scorer := k.plugin.(fwk.ScorePlugin)
	for i, n := range k.nodeInfos {
		score, s := scorer.Score(ctx, state, k.pod, n)
		if !s.IsSuccess() {
			return fmt.Errorf("Score %s: %v", n.Node().Name, s.AsError())
		}
		out[i] = score
	}
	return nil
}

// NodeNames lists the snapshot's nodes in scoring order.
func (k *Kube) NodeNames() []string {
	names := make([]string, len(k.nodeInfos))
	for i, n := range k.nodeInfos {
		names[i] = n.Node().Name
	}
	return names
}
