package integration

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeschedulerconfigv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	configtesting "k8s.io/kubernetes/pkg/scheduler/apis/config/testing"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/utils/ptr"

	"github.com/resfit/resfit/examples/kubebridge/dra"
	"github.com/resfit/resfit/examples/kubebridge/testing/dratest"
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
	c := newDRAScene(t, "resfit-partitions", cfg, registry, "pack")
	createDRANodes(t, c.ctx, c.cs, "mig-a", "mig-b", "share-a", "share-b")
	slices := append(dratest.NVIDIAMIGSlices("mig-a", 1, 0), dratest.NVIDIAMIGSlices("mig-b", 1, 0)...)
	c.publish(append(slices, dratest.NVIDIAShareableSlice("share-a", 1, 0), dratest.NVIDIAShareableSlice("share-b", 1, 0))...)
	c.run("notebook", dratest.MIGRequest("gpus", "3g.40gb"), "mig-a")
	c.run("infer", h100Share("60Gi"), "share-a")
	c.place("mig-1", dratest.MIGRequest("gpus", "3g.40gb"), "mig-a", "mig-b")
	c.place("share-1", h100Share("10Gi"), "share-a", "share-b")
}

// FGD over MIG partitions and memory shares, on a real kube-apiserver and
// etcd with the real kube-scheduler, its DynamicResources plugin
// allocating the claims and resfit's FGD alone scoring: in one profile its
// classes are the A100's five MIG profiles, alike, in another shares of
// 10Gi and 40Gi of an H100's memory, alike. mig-a's A100 holds a 1g.10gb
// (slice 0), mig-b's is whole, mig-c's
// holds two 2g.20gb (slices 0–3). A 3g.40gb goes to mig-c, whose other
// half it fills (FGD 54; mig-a 52, mig-b 45: on mig-b it would leave no
// 7g.80gb, on mig-a no 3g.40gb). Counted by its free amount, mig-c's
// A100 has 428 of 1000 left (42 of 98 multiprocessors), less than a
// 3g.40gb's 500 (half its memory), so FGD over free amounts found no room
// there though the 3g.40gb fits its counters. Then a 1g.10gb goes beside
// the other on mig-a (mig-a 51, mig-b 41, mig-c full): mig-b keeps its
// 7g.80gb possible. A 10Gi share goes to share-a, whose H100 has 20Gi of
// its memory left (share-b's has 80Gi): FGD 51 (of share-a's 20Gi a
// 40Gi share could use none before, and the 10Gi left after are fewer)
// against 50 (share-b keeps room for both). Each claim is allocated the
// device resfit predicted.
func TestFGDOverPartitionsAndShares(t *testing.T) {
	var classes []string
	for _, p := range []struct {
		name  string
		share int
	}{{"1g.10gb", 143}, {"2g.20gb", 286}, {"3g.40gb", 500}, {"4g.40gb", 572}, {"7g.80gb", 1000}} {
		classes = append(classes, fmt.Sprintf(`{"gpus": 1, "gpuShare": %d, "partition": %q}`, p.share, p.name))
	}
	shares := []string{`{"gpus": 1, "gpuShare": 125, "partition": "memory=10Gi"}`, `{"gpus": 1, "gpuShare": 500, "partition": "memory=40Gi"}`}
	cfg := configtesting.V1ToInternalWithDefaults(t, kubeschedulerconfigv1.KubeSchedulerConfiguration{
		Profiles: []kubeschedulerconfigv1.KubeSchedulerProfile{fgdProfile("fgd-mig", classes), fgdProfile("fgd-shares", shares)},
	})
	registry := frameworkruntime.Registry{plugins.FGDName: plugins.NewFGD}
	c := newDRAScene(t, "resfit-fgd-parts", cfg, registry, "fgd-mig")
	createDRANodes(t, c.ctx, c.cs, "mig-a", "mig-b", "mig-c", "share-a", "share-b")
	var slices []*resourcev1.ResourceSlice
	for _, node := range []string{"mig-a", "mig-b", "mig-c"} {
		slices = append(slices, dratest.NVIDIAMIGSlices(node, 1, 0)...)
	}
	c.publish(append(slices, dratest.NVIDIAShareableSlice("share-a", 1, 0), dratest.NVIDIAShareableSlice("share-b", 1, 0))...)
	c.run("small", dratest.MIGRequest("gpus", "1g.10gb"), "mig-a")
	c.run("medium-0", dratest.MIGRequest("gpus", "2g.20gb"), "mig-c")
	c.run("medium-1", dratest.MIGRequest("gpus", "2g.20gb"), "mig-c")
	c.place("half", dratest.MIGRequest("gpus", "3g.40gb"), "mig-c", "mig-a", "mig-b")
	c.place("small-1", dratest.MIGRequest("gpus", "1g.10gb"), "mig-a", "mig-b")
	c.scheduler = "fgd-shares"
	c.run("infer", h100Share("60Gi"), "share-a")
	c.place("infer-1", h100Share("10Gi"), "share-a", "share-b")
}

// fgdProfile is a profile that scores with resfit's FGD alone, over the
// classes (JSON objects).
func fgdProfile(name string, classes []string) kubeschedulerconfigv1.KubeSchedulerProfile {
	return scoreProfile(name, plugins.FGDName, fmt.Sprintf(`{"classes": [%s]}`, strings.Join(classes, ", ")))
}

// h100Share is a request for a share of an H100's memory.
func h100Share(memory string) resourcev1.DeviceRequest {
	r := dratest.ShareRequest("gpus", memory)
	h100 := "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"
	r.Exactly.Selectors = append(r.Exactly.Selectors, resourcev1.DeviceSelector{CEL: &resourcev1.CELDeviceSelector{Expression: h100}})
	return r
}

// draScene is a real kube-apiserver and kube-scheduler with a profile of
// resfit's, and DRA objects made through the API.
type draScene struct {
	*testCluster
	scheduler string
}

// newDRAScene starts kube-scheduler with the configuration's profiles and
// resfit's plugins; pods go to the named profile.
func newDRAScene(t *testing.T, ns string, cfg *config.KubeSchedulerConfiguration, registry frameworkruntime.Registry, profile string) *draScene {
	testCtx := startScheduler(t, ns, scheduler.WithProfiles(cfg.Profiles...), scheduler.WithFrameworkOutOfTreeRegistry(registry))
	return &draScene{testCluster: &testCluster{t: t, ctx: testCtx.Ctx, cs: testCtx.ClientSet, ns: testCtx.NS.Name}, scheduler: profile}
}

func (c *draScene) must(err error) {
	c.t.Helper()
	if err != nil {
		c.t.Fatal(err)
	}
}

// publish creates the ResourceSlices.
func (c *draScene) publish(slices ...*resourcev1.ResourceSlice) {
	for _, s := range slices {
		_, err := c.cs.ResourceV1().ResourceSlices().Create(c.ctx, s, metav1.CreateOptions{})
		c.must(err)
	}
}

// podWithClaim creates a claim of one request and returns a pod (not
// created) for the profile that names it, on a node when given.
func (c *draScene) podWithClaim(name string, request resourcev1.DeviceRequest, node string) *v1.Pod {
	claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name + "-gpu", Namespace: c.ns}, Spec: dratest.ClaimSpec(request)}
	_, err := c.cs.ResourceV1().ResourceClaims(c.ns).Create(c.ctx, claim, metav1.CreateOptions{})
	c.must(err)
	req := list("cpu", "1")
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.ns}, Spec: v1.PodSpec{
		SchedulerName: c.scheduler,
		Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{
			Requests: req, Limits: req, Claims: []v1.ResourceClaim{{Name: "gpus"}}}}},
		ResourceClaims: []v1.PodResourceClaim{{Name: "gpus", ResourceClaimName: ptr.To(claim.Name)}},
	}}
	if node != "" {
		p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": node}
	}
	return p
}

// run runs a pod with a claim of the request on a node.
func (c *draScene) run(name string, request resourcev1.DeviceRequest, node string) {
	c.t.Helper()
	p, err := c.cs.CoreV1().Pods(c.ns).Create(c.ctx, c.podWithClaim(name, request, node), metav1.CreateOptions{})
	c.must(err)
	if got := c.boundTo(p); got != node {
		c.t.Fatalf("%s bound to %s", name, got)
	}
}

// place creates a pod with a claim of the request, wants it bound to the
// first of the nodes, and its claim allocated what resfit predicted there
// before the pod was created (the others' predictions logged).
func (c *draScene) place(name string, request resourcev1.DeviceRequest, want string, others ...string) {
	c.t.Helper()
	p := c.podWithClaim(name, request, "")
	predicted := map[string]string{}
	for _, node := range append([]string{want}, others...) {
		predicted[node] = c.predict(p, node)
	}
	p, err := c.cs.CoreV1().Pods(c.ns).Create(c.ctx, p, metav1.CreateOptions{})
	c.must(err)
	got := c.boundTo(p)
	if got != want {
		c.t.Errorf("%s bound to %s, want %s (predicted: %v)", name, got, want, predicted)
		return
	}
	allocated, err := c.cs.ResourceV1().ResourceClaims(c.ns).Get(c.ctx, name+"-gpu", metav1.GetOptions{})
	c.must(err)
	if a := allocationText(allocated.Status.Allocation); a != predicted[got] {
		c.t.Errorf("%s's claim is allocated %s; resfit predicted %s", name, a, predicted[got])
	}
	c.t.Logf("%s: on %s, %s (predicted: %v)", name, got, predicted[got], predicted)
}

// predict is the allocation resfit predicts for a pod's claim on a node,
// from what the API server holds now.
func (c *draScene) predict(p *v1.Pod, node string) string {
	c.t.Helper()
	sl, err := c.cs.ResourceV1().ResourceSlices().List(c.ctx, metav1.ListOptions{})
	c.must(err)
	cl, err := c.cs.ResourceV1().DeviceClasses().List(c.ctx, metav1.ListOptions{})
	c.must(err)
	rc, err := c.cs.ResourceV1().ResourceClaims(c.ns).List(c.ctx, metav1.ListOptions{})
	c.must(err)
	d, err := dra.Read(dra.ObjectsFromLists(sl, cl, rc, nil))
	c.must(err)
	claims, ok, err := d.Allocation(p, node)
	if err != nil || !ok || len(claims) != 1 {
		c.t.Fatalf("resfit predicts no allocation of %s on %s: %v, %v", p.Name, node, ok, err)
	}
	return allocationText(&claims[0].Result)
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
