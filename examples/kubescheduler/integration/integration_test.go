// Package integration runs resfit's plugins in the real kube-scheduler,
// in the test's process, against a real kube-apiserver and a real etcd run
// as processes (schedtest, apiservertest): Kubernetes v1.37.2's
// kube-apiserver and the etcd it pins, which .ci/test builds and puts on
// PATH. A missing binary fails the test.
package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeschedulerconfigv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/pkg/scheduler"
	configtesting "k8s.io/kubernetes/pkg/scheduler/apis/config/testing"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/utils/ptr"

	"github.com/resfit/resfit/examples/kubescheduler/plugins"
	"github.com/resfit/resfit/examples/kubescheduler/testing/schedtest"
)

func TestMain(m *testing.M) { schedtest.Main(m) }

const gpu = "nvidia.com/gpu"

// args is resfit's configuration for ResourceStrategyFit: GPU packed, cpu
// spread, GPU nodes kept for GPU work (retention), and 8 cores per free GPU
// kept free (proportional).
const args = `{"plugins": [{"name": "resource-strategy-fit", "args": {
  "resources": {"nvidia.com/gpu": {"type": "MostAllocated", "weight": 2}, "cpu": {"type": "LeastAllocated", "weight": 1}},
  "sra": {"policy": "retention, proportional", "resources": "nvidia.com/gpu",
          "retention": {"weight": 10, "nvidia.com/gpu": 1}, "proportional": {"nvidia.com/gpu.cpu": 8, "nvidia.com/gpu.memory": 8}}}}]}`

func list(kv ...string) v1.ResourceList {
	l := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[v1.ResourceName(kv[i])] = kres.MustParse(kv[i+1])
	}
	return l
}

func TestSchedulerPlacesMixedWorkload(t *testing.T) {
	cfg := configtesting.V1ToInternalWithDefaults(t, kubeschedulerconfigv1.KubeSchedulerConfiguration{
		Profiles: []kubeschedulerconfigv1.KubeSchedulerProfile{{
			SchedulerName: ptr.To(v1.DefaultSchedulerName),
			Plugins: &kubeschedulerconfigv1.Plugins{
				MultiPoint: kubeschedulerconfigv1.PluginSet{Enabled: []kubeschedulerconfigv1.Plugin{{Name: plugins.ResourceStrategyFitName}}},
				Score: kubeschedulerconfigv1.PluginSet{
					Disabled: []kubeschedulerconfigv1.Plugin{{Name: "*"}},
					Enabled:  []kubeschedulerconfigv1.Plugin{{Name: plugins.ResourceStrategyFitName, Weight: ptr.To[int32](1)}},
				},
			},
			PluginConfig: []kubeschedulerconfigv1.PluginConfig{{
				Name: plugins.ResourceStrategyFitName,
				Args: runtime.RawExtension{Raw: []byte(args)},
			}},
		}},
	})
	registry := frameworkruntime.Registry{plugins.ResourceStrategyFitName: plugins.NewResourceStrategyFit}
	testCtx := startScheduler(t, "resfit", scheduler.WithProfiles(cfg.Profiles...), scheduler.WithFrameworkOutOfTreeRegistry(registry))
	cs, ns, ctx := testCtx.ClientSet, testCtx.NS.Name, testCtx.Ctx

	c := newTestCluster(t, ctx, cs, ns, "")
	c.packAndSpread()
	// A CPU pod too big for the CPU nodes: gpu-idle has the cpu, but its 6
	// free GPUs need 8 cores each (66 − 20 < 48), so the proportional filter
	// keeps it off; gpu-busy has no free GPU left to protect and takes it.
	if got := c.boundTo(c.create("cpu-big", "", list("cpu", "20", "memory", "4Gi"))); got != "gpu-busy" {
		t.Errorf("cpu-big bound to %s, want gpu-busy", got)
	}
	// One that only gpu-idle could hold stays pending, and says why.
	huge := c.create("cpu-huge", "", list("cpu", "40", "memory", "4Gi"))
	var message string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 20*time.Second, false, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, huge.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Spec.NodeName != "" {
			return false, fmt.Errorf("cpu-huge bound to %s", p.Spec.NodeName)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Reason == v1.PodReasonUnschedulable {
				message = c.Message
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("cpu-huge was not reported unschedulable: %v", err)
	}
	if !strings.Contains(message, "proportional of resource nvidia.com/gpu check failed") {
		t.Errorf("cpu-huge unschedulable for %q, want the proportional reason", message)
	}
	t.Logf("cpu-huge: %s", message)
}
