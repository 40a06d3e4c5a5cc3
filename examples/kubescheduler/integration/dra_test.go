package integration

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	kubeschedulerconfigv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/pkg/scheduler"
	configtesting "k8s.io/kubernetes/pkg/scheduler/apis/config/testing"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/utils/ptr"

	"github.com/resfit/resfit/examples/kubebridge/testing/dratest"
	"github.com/resfit/resfit/examples/kubescheduler/plugins"
)

// draProfile is a profile that scores GPUs by resfit alone, by the given
// strategy; kube-scheduler's DynamicResources plugin stays on and
// allocates the claims.
func draProfile(name, strategy string) kubeschedulerconfigv1.KubeSchedulerProfile {
	args := fmt.Sprintf(`{"plugins": [{"name": "resource-strategy-fit", "args": {"resources": {"nvidia.com/gpu": {"type": %q, "weight": 1}}}}]}`, strategy)
	return scoreProfile(name, plugins.ResourceStrategyFitName, args)
}

// scoreProfile is a profile that scores with one of resfit's plugins
// alone, enabled at every point, with its arguments (JSON).
func scoreProfile(name, plugin, args string) kubeschedulerconfigv1.KubeSchedulerProfile {
	return kubeschedulerconfigv1.KubeSchedulerProfile{
		SchedulerName: ptr.To(name),
		Plugins: &kubeschedulerconfigv1.Plugins{
			MultiPoint: kubeschedulerconfigv1.PluginSet{Enabled: []kubeschedulerconfigv1.Plugin{{Name: plugin}}},
			Score: kubeschedulerconfigv1.PluginSet{
				Disabled: []kubeschedulerconfigv1.Plugin{{Name: "*"}},
				Enabled:  []kubeschedulerconfigv1.Plugin{{Name: plugin, Weight: ptr.To[int32](1)}},
			},
		},
		PluginConfig: []kubeschedulerconfigv1.PluginConfig{{Name: plugin, Args: runtime.RawExtension{Raw: []byte(args)}}},
	}
}

// createDRANodes creates ready nodes (64 cores, 256G) named after their
// hostname label, and NVIDIA's chart's DeviceClasses.
func createDRANodes(t *testing.T, ctx context.Context, cs kubernetes.Interface, names ...string) {
	t.Helper()
	for _, name := range names {
		alloc := list("cpu", "64", "memory", "256G", "pods", "110")
		if _, err := cs.CoreV1().Nodes().Create(ctx, &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
			Status: v1.NodeStatus{Capacity: alloc, Allocatable: alloc,
				Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range dratest.NVIDIAClasses() {
		if _, err := cs.ResourceV1().DeviceClasses().Create(ctx, c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// GPUs claimed through DRA, on a real kube-apiserver and etcd with the real
// kube-scheduler: two nodes whose 8 GPUs each NVIDIA's driver publishes in
// a ResourceSlice (H100s on node-a, A100s on node-b; no device plugin), the
// chart's DeviceClasses, a filler pod whose pre-created claim takes 6 GPUs
// on node-a. Then, one pod at a time: a pod whose claim accepts only A100s
// goes to node-b although packing prefers node-a; a 1-GPU claim packs onto
// node-a (MostAllocated) and spreads onto node-b (LeastAllocated); the same
// with nvidia.com/gpu: 1, which the DeviceClass's extendedResourceName
// turns into a claim (KEP-5004).
func TestSchedulerPlacesDRAGPUs(t *testing.T) {
	cfg := configtesting.V1ToInternalWithDefaults(t, kubeschedulerconfigv1.KubeSchedulerConfiguration{
		Profiles: []kubeschedulerconfigv1.KubeSchedulerProfile{draProfile("pack", "MostAllocated"), draProfile("spread", "LeastAllocated")},
	})
	registry := frameworkruntime.Registry{plugins.ResourceStrategyFitName: plugins.NewResourceStrategyFit}
	testCtx := startScheduler(t, "resfit-dra", scheduler.WithProfiles(cfg.Profiles...), scheduler.WithFrameworkOutOfTreeRegistry(registry))
	cs, ns, ctx := testCtx.ClientSet, testCtx.NS.Name, testCtx.Ctx
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	createDRANodes(t, ctx, cs, "node-a", "node-b")
	for _, s := range []*resourcev1.ResourceSlice{
		dratest.NVIDIASlice("node-a", "NVIDIA H100 80GB HBM3", 8, 0),
		dratest.NVIDIASlice("node-b", "NVIDIA A100-SXM4-80GB", 8, 0),
	} {
		_, err := cs.ResourceV1().ResourceSlices().Create(ctx, s, metav1.CreateOptions{})
		must(err)
	}
	claim := func(name string, count int64, selectors ...string) string {
		c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: dratest.ClaimSpec(dratest.Exactly("gpus", "gpu.nvidia.com", count, selectors...))}
		_, err := cs.ResourceV1().ResourceClaims(ns).Create(ctx, c, metav1.CreateOptions{})
		must(err)
		return name
	}
	// pod makes a pod for a profile with a claim (or none) and requests.
	pod := func(name, profile, claimName string, nodeSelector map[string]string, kv ...string) *v1.Pod {
		req := list(kv...)
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1.PodSpec{
			SchedulerName: profile, NodeSelector: nodeSelector,
			Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{Requests: req, Limits: req}}},
		}}
		if claimName != "" {
			p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpus", ResourceClaimName: ptr.To(claimName)}}
			p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpus"}}
		}
		p, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		must(err)
		return p
	}
	c := &testCluster{t: t, ctx: ctx, cs: cs, ns: ns}
	filler := pod("filler", "pack", claim("filler-gpus", 6), map[string]string{"kubernetes.io/hostname": "node-a"}, "cpu", "8")
	if got := c.boundTo(filler); got != "node-a" {
		t.Fatalf("filler bound to %s", got)
	}
	for _, step := range []struct {
		pod  *v1.Pod
		want string
	}{
		{pod("a100-only", "pack", claim("a100-gpu", 1, "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'"), nil, "cpu", "1"), "node-b"},
		{pod("claim-pack", "pack", claim("pack-gpu", 1), nil, "cpu", "1"), "node-a"},
		{pod("claim-spread", "spread", claim("spread-gpu", 1), nil, "cpu", "1"), "node-b"},
		{pod("extended-pack", "pack", "", nil, "cpu", "1", gpu, "1"), "node-a"},
		{pod("extended-spread", "spread", "", nil, "cpu", "1", gpu, "1"), "node-b"},
	} {
		if got := c.boundTo(step.pod); got != step.want {
			t.Errorf("%s bound to %s, want %s", step.pod.Name, got, step.want)
		}
	}
	// The claims are allocated on the nodes the pods went to.
	for name, node := range map[string]string{"filler-gpus": "node-a", "a100-gpu": "node-b", "pack-gpu": "node-a", "spread-gpu": "node-b"} {
		got, err := cs.ResourceV1().ResourceClaims(ns).Get(ctx, name, metav1.GetOptions{})
		must(err)
		if got.Status.Allocation == nil || len(got.Status.Allocation.Devices.Results) == 0 || got.Status.Allocation.Devices.Results[0].Pool != node {
			t.Errorf("claim %s: allocation %+v, want on %s", name, got.Status.Allocation, node)
		}
	}
}
