package integration

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	kubeschedulerconfigv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/pkg/scheduler"
	configtesting "k8s.io/kubernetes/pkg/scheduler/apis/config/testing"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/utils/ptr"

	"github.com/resfit/resfit/examples/kubebridge/planning"
	"github.com/resfit/resfit/examples/kubebridge/testing/manifesttest"
	"github.com/resfit/resfit/examples/kubescheduler/plugins"
	"github.com/resfit/resfit/examples/kubescheduler/testing/schedtest"
)

// The real kube-scheduler with a profile that packs GPUs
// (ResourceStrategyFit) and honours rooms (ResfitRooms), on two GPU nodes
// of 8 GPUs, gpu-busy running a job on 6:
//   - a 1-GPU pod with a room held for it on gpu-idle goes there, though
//     packing would put it on gpu-busy;
//   - with a room of 2 GPUs held on gpu-busy for a ReplicaSet's pod, a
//     2-GPU pod of another owner goes to gpu-idle (gpu-busy's 2 free GPUs
//     are held), and then the ReplicaSet's pod takes the room;
//   - a pod of the ReplicaSet of another shape is not the room's.
//
// Without ResfitRooms in the profile (a mutation) the first pod goes to
// gpu-busy.
func TestSchedulerHonoursRooms(t *testing.T) {
	testCtx := startAPIServer(t, "rooms")
	manifesttest.InstallRoomCRD(t, testCtx.Ctx, testCtx.KubeConfig, testCtx.ClientSet, "../manifests/rooms.yaml")
	multi := []kubeschedulerconfigv1.Plugin{{Name: plugins.ResourceStrategyFitName}, {Name: plugins.RoomsName}}
	cfg := configtesting.V1ToInternalWithDefaults(t, kubeschedulerconfigv1.KubeSchedulerConfiguration{
		Profiles: []kubeschedulerconfigv1.KubeSchedulerProfile{{
			SchedulerName: ptr.To(v1.DefaultSchedulerName),
			Plugins: &kubeschedulerconfigv1.Plugins{
				MultiPoint: kubeschedulerconfigv1.PluginSet{Enabled: multi},
				Score: kubeschedulerconfigv1.PluginSet{
					Disabled: []kubeschedulerconfigv1.Plugin{{Name: "*"}},
					Enabled:  []kubeschedulerconfigv1.Plugin{{Name: plugins.ResourceStrategyFitName, Weight: ptr.To[int32](1)}},
				},
			},
			PluginConfig: []kubeschedulerconfigv1.PluginConfig{{Name: plugins.ResourceStrategyFitName, Args: runtime.RawExtension{Raw: []byte(args)}}},
		}},
	})
	registry := frameworkruntime.Registry{plugins.ResourceStrategyFitName: plugins.NewResourceStrategyFit, plugins.RoomsName: plugins.NewRooms}
	schedtest.StartScheduler(t, testCtx.Ctx, testCtx.KubeConfig, scheduler.WithProfiles(cfg.Profiles...), scheduler.WithFrameworkOutOfTreeRegistry(registry))
	cs, ns, ctx := testCtx.ClientSet, testCtx.NS.Name, testCtx.Ctx
	c := newTestCluster(t, ctx, cs, ns, "")
	c.create("running-job", "gpu-busy", list("cpu", "8", "memory", "16G", gpu, "6"))
	rooms := dynamic.NewForConfigOrDie(testCtx.KubeConfig).Resource(planning.RoomResource).Namespace(ns)
	hold := func(room planning.Room) {
		t.Helper()
		if _, err := rooms.Create(ctx, room.Object(), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	expires := time.Now().Add(10 * time.Minute)

	// A pending pod's room: the pod is gated until its room is held.
	gated := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pending", Namespace: ns}, Spec: v1.PodSpec{
		SchedulingGates: []v1.PodSchedulingGate{{Name: "resfit.io/room"}},
		Containers:      []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{Requests: list("cpu", "2", "memory", "2Gi", gpu, "1"), Limits: list(gpu, "1")}}},
	}}
	gated, err := cs.CoreV1().Pods(ns).Create(ctx, gated, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	room, err := planning.RoomFor(gated, "gpu-idle", true, expires)
	if err != nil {
		t.Fatal(err)
	}
	hold(room)
	gated.Spec.SchedulingGates = nil
	if gated, err = cs.CoreV1().Pods(ns).Update(ctx, gated, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := c.boundTo(gated); got != "gpu-idle" {
		t.Errorf("the pod its room waits for on gpu-idle is bound to %s", got)
	}

	// A ReplicaSet's replacement's room on gpu-busy, its 2 free GPUs.
	yes := true
	owned := func(name, cpu string) *v1.Pod {
		req := list("cpu", cpu, "memory", "4Gi", gpu, "2")
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "rs-uid", Controller: &yes}}},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{Requests: req, Limits: req}}}}}
	}
	replacement := owned("web-x", "4")
	room, err = planning.RoomFor(replacement, "gpu-busy", false, expires)
	if err != nil {
		t.Fatal(err)
	}
	hold(room)
	if got := c.boundTo(c.create("stranger", "", list("cpu", "4", "memory", "4Gi", gpu, "2"))); got != "gpu-idle" {
		t.Errorf("a pod the room on gpu-busy is not for is bound to %s", got)
	}
	other, err := cs.CoreV1().Pods(ns).Create(ctx, owned("web-other-shape", "6"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.boundTo(other); got != "gpu-idle" {
		t.Errorf("the ReplicaSet's pod of another shape is bound to %s", got)
	}
	created, err := cs.CoreV1().Pods(ns).Create(ctx, replacement, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.boundTo(created); got != "gpu-busy" {
		t.Errorf("the replacement its room waits for on gpu-busy is bound to %s", got)
	}
}
