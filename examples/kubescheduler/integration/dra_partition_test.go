package integration

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeschedulerconfigv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/pkg/scheduler"
	configtesting "k8s.io/kubernetes/pkg/scheduler/apis/config/testing"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	testutils "k8s.io/kubernetes/test/integration/util"
	"k8s.io/utils/ptr"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/dratest"
	"github.com/resfit/resfit/examples/kubescheduler/plugins"
)

// Partitioned and shared GPUs as Kubernetes v1.37 publishes them, on a real
// kube-apiserver and etcd with the real kube-scheduler, its
// DynamicResources plugin allocating the claims and resfit's
// ResourceStrategyFit (GPUs MostAllocated) scoring: mig-a and mig-b each
// an A100 with dynamic MIG as NVIDIA's driver publishes it (KEP-4815: a
// counter set per GPU, the whole GPU and every MIG placement consuming
// from it), share-a and share-b each an H100 whose memory claims share
// (KEP-5075). A 3g.40gb runs on mig-a (slices 0–3), a 60Gi share on
// share-a. Then a 3g.40gb claim goes to mig-a, beside the running one
// (half an A100 each: mig-a is then full, and mig-b keeps its A100 whole,
// a 7g.80gb still possible), and a 10Gi share of an H100 to share-a, the
// GPU with the least memory left that fits. Each claim's allocation,
// written by kube-scheduler, is the one resfit predicted on that node
// from the objects the API server holds (kubebridge: kube's allocator,
// called on resfit's reading).
func TestSchedulerPlacesPartitionsAndShares(t *testing.T) {
	cfg := configtesting.V1ToInternalWithDefaults(t, kubeschedulerconfigv1.KubeSchedulerConfiguration{
		Profiles: []kubeschedulerconfigv1.KubeSchedulerProfile{draProfile("pack", "MostAllocated")},
	})
	registry := frameworkruntime.Registry{plugins.ResourceStrategyFitName: plugins.NewResourceStrategyFit}
	testCtx := testutils.InitTestSchedulerWithNS(t, "resfit-partitions",
		scheduler.WithProfiles(cfg.Profiles...), scheduler.WithFrameworkOutOfTreeRegistry(registry))
	t.Cleanup(testCtx.SchedulerCloseFn)
	cs, ns, ctx := testCtx.ClientSet, testCtx.NS.Name, testCtx.Ctx
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	createDRANodes(t, ctx, cs, "mig-a", "mig-b", "share-a", "share-b")
	slices := append(dratest.NVIDIAMIGSlices("mig-a", 1, 0), dratest.NVIDIAMIGSlices("mig-b", 1, 0)...)
	slices = append(slices, dratest.NVIDIAShareableSlice("share-a", 1, 0), dratest.NVIDIAShareableSlice("share-b", 1, 0))
	for _, s := range slices {
		_, err := cs.ResourceV1().ResourceSlices().Create(ctx, s, metav1.CreateOptions{})
		must(err)
	}
	h100 := "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"
	claim := func(name string, request resourcev1.DeviceRequest) string {
		c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: dratest.ClaimSpec(request)}
		_, err := cs.ResourceV1().ResourceClaims(ns).Create(ctx, c, metav1.CreateOptions{})
		must(err)
		return name
	}
	share := func(memory string) resourcev1.DeviceRequest {
		r := dratest.ShareRequest("gpus", memory)
		r.Exactly.Selectors = append(r.Exactly.Selectors, resourcev1.DeviceSelector{CEL: &resourcev1.CELDeviceSelector{Expression: h100}})
		return r
	}
	// podObject is a pod for the profile with a claim, on a node when
	// given; pod creates it.
	podObject := func(name, claimName, node string) *v1.Pod {
		req := list("cpu", "1")
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1.PodSpec{
			SchedulerName: "pack",
			Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{
				Requests: req, Limits: req, Claims: []v1.ResourceClaim{{Name: "gpus"}}}}},
			ResourceClaims: []v1.PodResourceClaim{{Name: "gpus", ResourceClaimName: ptr.To(claimName)}},
		}}
		if node != "" {
			p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": node}
		}
		return p
	}
	pod := func(p *v1.Pod) *v1.Pod {
		p, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		must(err)
		return p
	}
	c := &testCluster{t: t, ctx: ctx, cs: cs, ns: ns}
	for _, f := range []struct{ name, node string }{{"notebook", "mig-a"}, {"infer", "share-a"}} {
		request := dratest.MIGRequest("gpus", "3g.40gb")
		if f.name == "infer" {
			request = share("60Gi")
		}
		if got := c.boundTo(pod(podObject(f.name, claim(f.name+"-gpu", request), f.node))); got != f.node {
			t.Fatalf("%s bound to %s", f.name, got)
		}
	}
	// predict is the allocation resfit predicts for a pod's claim on a
	// node, from what the API server holds now.
	predict := func(p *v1.Pod, node string) string {
		t.Helper()
		sl, err := cs.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
		must(err)
		cl, err := cs.ResourceV1().DeviceClasses().List(ctx, metav1.ListOptions{})
		must(err)
		rc, err := cs.ResourceV1().ResourceClaims(ns).List(ctx, metav1.ListOptions{})
		must(err)
		var objects kubebridge.DRAObjects
		for i := range sl.Items {
			objects.Slices = append(objects.Slices, &sl.Items[i])
		}
		for i := range cl.Items {
			objects.Classes = append(objects.Classes, &cl.Items[i])
		}
		for i := range rc.Items {
			objects.Claims = append(objects.Claims, &rc.Items[i])
		}
		d, err := kubebridge.ReadDRA(objects)
		must(err)
		claims, ok, err := d.Allocation(p, node)
		if err != nil || !ok || len(claims) != 1 {
			t.Fatalf("resfit predicts no allocation of %s on %s: %v, %v", p.Name, node, ok, err)
		}
		return allocationText(&claims[0].Result)
	}
	for _, step := range []struct {
		name    string
		request resourcev1.DeviceRequest
		want    string
	}{
		{"mig-1", dratest.MIGRequest("gpus", "3g.40gb"), "mig-a"},
		{"share-1", share("10Gi"), "share-a"},
	} {
		// What resfit predicts on the nodes that can take it, before the pod
		// is created (the scheduler then allocates its claim at once).
		p := podObject(step.name, claim(step.name+"-gpu", step.request), "")
		predicted := map[string]string{}
		for _, node := range []string{"mig-a", "mig-b", "share-a", "share-b"} {
			if step.want == node || (step.name == "mig-1" && node == "mig-b") || (step.name == "share-1" && node == "share-b") {
				predicted[node] = predict(p, node)
			}
		}
		got := c.boundTo(pod(p))
		if got != step.want {
			t.Errorf("%s bound to %s, want %s", step.name, got, step.want)
			continue
		}
		allocated, err := cs.ResourceV1().ResourceClaims(ns).Get(ctx, step.name+"-gpu", metav1.GetOptions{})
		must(err)
		if a := allocationText(allocated.Status.Allocation); a != predicted[got] {
			t.Errorf("%s's claim is allocated %s; resfit predicted %s", step.name, a, predicted[got])
		}
		t.Logf("%s: on %s, %s (predicted elsewhere: %v)", step.name, got, predicted[got], predicted)
	}
}

// allocationText is an allocation's devices as compared: pool, device and
// the capacity a share consumes (its share ID is the allocator's random
// one).
func allocationText(a *resourcev1.AllocationResult) string {
	if a == nil {
		return "none"
	}
	var out []string
	for _, r := range a.Devices.Results {
		s := r.Pool + "/" + r.Device
		if q, ok := r.ConsumedCapacity["memory"]; ok {
			s += " memory=" + q.String()
		}
		out = append(out, s)
	}
	return fmt.Sprint(out)
}
