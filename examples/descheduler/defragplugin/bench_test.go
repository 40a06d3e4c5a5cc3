package defragplugin

import (
	"context"
	"errors"
	"testing"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"

	"github.com/resfit/resfit/examples/kubebridge/testing/examplecluster"
	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
	"github.com/resfit/resfit/examples/kubectl-resfit/resfitctl"
)

// BenchmarkRun5000Nodes times one descheduler run on a cluster of 5000
// nodes and 20,000 running pods (examplecluster.Large, with one pending
// pod that fits and load/big, 8 GPUs, that no GPU node has room for:
// two pods must leave one), from the informers' cache to the first
// eviction, beside `kubectl resfit explain` of load/big on the same
// cluster under the same configuration (the scheduler's shipped
// ConfigMap), in the same run:
//
//   - run: Balance, through the descheduler's own framework handle and
//     evictor over a fake clientset: the plan (listing the pods, the
//     snapshot, the scene, settling the pending pods, the round), the
//     rooms (held in memory), up to the eviction of the plan's first pod,
//     which ends it;
//   - explain: resfitctl.Explain on the cluster read once, as
//     kubectl-resfit's BenchmarkExplain5000Nodes/explain.
//
// The benchmark, a test, imports kubectl-resfit's resfitctl to time both
// in one run; no package of the descheduler does.
func BenchmarkRun5000Nodes(b *testing.B) {
	ctx := b.Context()
	nodes, pods := examplecluster.Large(5000, 1)
	big := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "load", Name: "big", UID: "uid-big", CreationTimestamp: metav1.NewTime(examplecluster.Start)},
		Spec: v1.PodSpec{SchedulerName: "resfit-scheduler", Containers: []v1.Container{{Name: "c",
			Resources: v1.ResourceRequirements{Requests: kubetest.Resources("cpu", "8", "memory", "32Gi", kubetest.GPU, "8")}}}},
		Status: v1.PodStatus{Phase: v1.PodPending}}
	pods = append(pods, big)
	objects := []runtime.Object{schedulerConfigMap(b)}
	for _, n := range nodes {
		objects = append(objects, n)
	}
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			p.Spec.SchedulerName = "resfit-scheduler"
		}
		objects = append(objects, p)
	}
	plugin, client := newPlugin(b, ctx, &Args{ConfigMap: &ConfigMapRef{Namespace: "kube-system", Name: "resfit-scheduler-config"}, Mode: ModeMakeRoom}, objects...)
	plugin.rooms = &fakeRooms{}
	var stop context.CancelFunc
	evicted := 0
	client.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		evicted++
		stop()
		return true, nil, nil
	})
	b.Run("run", func(b *testing.B) {
		for b.Loop() {
			var run context.Context
			run, stop = context.WithCancel(klog.NewContext(ctx, logr.Discard()))
			before := evicted
			status := plugin.Balance(run, nodes)
			if evicted != before+1 || status == nil || !errors.Is(status.Err, context.Canceled) {
				b.Fatalf("the run did not stop at its first eviction: %d evictions, %v", evicted-before, status)
			}
		}
	})

	cfg, err := plugin.loadConfig(ctx)
	if err != nil {
		b.Fatal(err)
	}
	c, err := resfitctl.ParseSnapshot(examplecluster.SnapshotJSON(nodes, pods))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("explain", func(b *testing.B) {
		for b.Loop() {
			if _, err := resfitctl.Explain(c, cfg, "resfit-scheduler-config", big); err != nil {
				b.Fatal(err)
			}
		}
	})
}
