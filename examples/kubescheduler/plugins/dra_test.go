package plugins

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache"
	"k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"

	"github.com/resfit/resfit/examples/kubebridge/testing/dratest"
)

// draManager is kube-scheduler's own SharedDRAManager over the objects (a
// fake clientset's informers), as the scheduler builds it, with the
// informer factory its plugins watch; it has read every object when
// returned.
func draManager(t testing.TB, ctx context.Context, objects ...runtime.Object) (fwk.SharedDRAManager, informers.SharedInformerFactory) {
	t.Helper()
	m, factory, _ := draManagerOf(t, ctx, fake.NewClientset(objects...))
	return m, factory
}

// draManagerOf is draManager over a clientset, returned too.
func draManagerOf(t testing.TB, ctx context.Context, client *fake.Clientset) (fwk.SharedDRAManager, informers.SharedInformerFactory, *fake.Clientset) {
	t.Helper()
	factory := informers.NewSharedInformerFactory(client, 0)
	slices, err := tracker.StartTracker(ctx, tracker.Options{SliceInformer: factory.Resource().V1().ResourceSlices(), KubeClient: client})
	if err != nil {
		t.Fatal(err)
	}
	claims := assumecache.NewAssumeCache(klog.FromContext(ctx), factory.Resource().V1().ResourceClaims().Informer(), "resource claim", "", nil)
	m := dynamicresources.NewDRAManager(ctx, claims, slices, factory)
	if _, err := factory.Resource().V1().DeviceClasses().Informer().AddEventHandler(m.DeviceClassResolver().(*extendedresourcecache.ExtendedResourceCache)); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	listed, err := client.ResourceV1().ResourceClaims("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	classes, err := client.ResourceV1().DeviceClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ready := func() bool {
		held, err := m.ResourceClaims().List()
		return err == nil && len(held) == len(listed.Items) && (len(classes.Items) == 0 || m.DeviceClassResolver().GetDeviceClass(gpu) != nil)
	}
	for deadline := time.Now().Add(10 * time.Second); !ready(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the claims' cache or the device class resolver never caught up with the informers")
		}
	}
	return m, factory, client
}

// KEP-5004 in one framework run: two nodes whose 8 GPUs each are
// published through NVIDIA's DRA driver (no device plugin), the chart's
// gpu.nvidia.com class naming nvidia.com/gpu, a filler pod whose claim
// holds 6 GPUs of node-a. A pod asking nvidia.com/gpu: 1 is scored by
// kube's NodeResourcesFit (DRA-backed extended resources on) and by
// ResourceStrategyFit configured as NodeResourcesFit, side by side in the
// same profile: the two scores are equal on every node, for MostAllocated
// and LeastAllocated (worked out below), and a pod with a 1-GPU claim
// instead (which NodeResourcesFit does not score: the claim is no resource
// request) gets the same numbers from resfit.
func TestKEP5004EqualsNodeResourcesFit(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	name := func(s string) *string { return &s }
	claim := dratest.AllocatedClaim("default", "filler-gpus", "node-a", "gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5")
	oneGPU := &resourcev1.ResourceClaim{}
	oneGPU.Namespace, oneGPU.Name, oneGPU.UID = "default", "one-gpu", "one-gpu-uid"
	oneGPU.Spec = dratest.ClaimSpec(dratest.Exactly("gpu", "gpu.nvidia.com", 1))
	objects := []runtime.Object{dratest.NVIDIASlice("node-a", "NVIDIA H100 80GB HBM3", 8, 0), dratest.NVIDIASlice("node-b", "NVIDIA H100 80GB HBM3", 8, 0), claim, oneGPU}
	for _, c := range dratest.NVIDIAClasses() {
		objects = append(objects, c)
	}
	m, factory := draManager(t, ctx, objects...)

	nodes := []*v1.Node{node("node-a", resources("cpu", "64", "memory", "512Gi")), node("node-b", resources("cpu", "64", "memory", "512Gi"))}
	filler := pod("filler", "node-a", resources("cpu", "16", "memory", "128Gi"))
	filler.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpus", ResourceClaimName: name("filler-gpus")}}
	snapshot := cache.NewSnapshot([]*v1.Pod{filler}, nodes)
	infos, err := snapshot.NodeInfos().List()
	if err != nil {
		t.Fatal(err)
	}
	extended := pod("extended", "", resources("cpu", "4", "memory", "16Gi", gpu, "1"))
	claimed := pod("claimed", "", resources("cpu", "4", "memory", "16Gi"))
	claimed.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: name("one-gpu")}}

	for _, strategy := range []string{"MostAllocated", "LeastAllocated"} {
		t.Run(strategy, func(t *testing.T) {
			registry := resfitRegistry()
			registry[noderesources.Name] = frameworkruntime.FactoryAdapter(feature.Features{EnableDRAExtendedResource: true}, noderesources.NewFit)
			spec := []config.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}, {Name: gpu, Weight: 1}}
			resfit := fmt.Sprintf(`{"filters": [], "plugins": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": %q,
			  "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": "nvidia.com/gpu", "weight": 1}]}}}]}`, strategy)
			profile := &config.KubeSchedulerProfile{
				SchedulerName: "kep-5004",
				Plugins: &config.Plugins{
					QueueSort: config.PluginSet{Enabled: []config.Plugin{{Name: queuesort.Name}}},
					Bind:      config.PluginSet{Enabled: []config.Plugin{{Name: defaultbinder.Name}}},
					PreScore:  config.PluginSet{Enabled: []config.Plugin{{Name: noderesources.Name}, {Name: ResourceStrategyFitName}}},
					Score:     config.PluginSet{Enabled: []config.Plugin{{Name: noderesources.Name, Weight: 1}, {Name: ResourceStrategyFitName, Weight: 1}}},
					Reserve:   config.PluginSet{Enabled: []config.Plugin{{Name: ResourceStrategyFitName}}},
				},
				PluginConfig: []config.PluginConfig{
					{Name: noderesources.Name, Args: &config.NodeResourcesFitArgs{ScoringStrategy: &config.ScoringStrategy{Type: config.ScoringStrategyType(strategy), Resources: spec}}},
					{Name: ResourceStrategyFitName, Args: &runtime.Unknown{Raw: []byte(resfit), ContentType: runtime.ContentTypeJSON}},
				},
			}
			fw, err := frameworkruntime.NewFramework(ctx, registry, profile, frameworkruntime.WithSnapshotSharedLister(snapshot),
				frameworkruntime.WithSharedDRAManager(m), frameworkruntime.WithInformerFactory(factory))
			if err != nil {
				t.Fatal(err)
			}
			factory.Start(ctx.Done())
			factory.WaitForCacheSync(ctx.Done())
			byPlugin := func(p *v1.Pod) map[string]map[string]int64 {
				state := framework.NewCycleState()
				if s := fw.RunPreScorePlugins(ctx, state, p, infos); !s.IsSuccess() {
					t.Fatalf("PreScore: %v", s.AsError())
				}
				scores, s := fw.RunScorePlugins(ctx, state, p, infos)
				if !s.IsSuccess() {
					t.Fatalf("Score: %v", s.AsError())
				}
				out := map[string]map[string]int64{}
				for _, n := range scores {
					for _, ps := range n.Scores {
						if out[ps.Name] == nil {
							out[ps.Name] = map[string]int64{}
						}
						out[ps.Name][n.Name] = ps.Score
					}
				}
				return out
			}
			got := byPlugin(extended)
			kube, ours := got[noderesources.Name], got[ResourceStrategyFitName]
			if fmt.Sprint(kube) != fmt.Sprint(ours) {
				t.Errorf("nvidia.com/gpu: 1: NodeResourcesFit %v, resfit %v", kube, ours)
			}
			want := map[string]map[string]int64{
				// MostAllocated, each resource's share ×100 truncated, then
				// their mean truncated, as kube-scheduler divides: node-a
				// cpu 20/64 → 31, memory 144/512 Gi → 28, gpu 7/8 → 87:
				// 146/3 → 48; node-b 4/64 → 6, 16/512 → 3, 1/8 → 12: 7.
				"MostAllocated": {"node-a": 48, "node-b": 7},
				// LeastAllocated, the free shares: node-a 68, 71, 12 → 50;
				// node-b 93, 96, 87 → 92.
				"LeastAllocated": {"node-a": 50, "node-b": 92},
			}[strategy]
			if fmt.Sprint(ours) != fmt.Sprint(want) {
				t.Errorf("resfit %v, want %v", ours, want)
			}
			if claims := byPlugin(claimed)[ResourceStrategyFitName]; fmt.Sprint(claims) != fmt.Sprint(want) {
				t.Errorf("a 1-GPU claim: resfit %v, want %v", claims, want)
			}

			// The DynamicResources plugin allocates a claim of 4 GPUs on
			// node-b in memory (as at Reserve) and the pod is reserved: the
			// next cycle reads DRA again and scores node-b as kube does.
			allocated := oneGPU.DeepCopy()
			allocated.Status.Allocation = dratest.AllocatedClaim("default", "one-gpu", "node-b", "gpu-0", "gpu-1", "gpu-2", "gpu-3").Status.Allocation
			if err := m.ResourceClaims().SignalClaimPendingAllocation(allocated.UID, allocated); err != nil {
				t.Fatal(err)
			}
			defer m.ResourceClaims().MaybeRemoveClaimPendingAllocation(allocated.UID, true)
			if s := fw.RunReservePluginsReserve(ctx, framework.NewCycleState(), claimed, "node-b"); !s.IsSuccess() {
				t.Fatal(s.AsError())
			}
			reads := singleEvaluations.Load()
			got = byPlugin(extended)
			kube, ours = got[noderesources.Name], got[ResourceStrategyFitName]
			if fmt.Sprint(kube) != fmt.Sprint(ours) || ours["node-a"] != want["node-a"] || ours["node-b"] == want["node-b"] {
				t.Errorf("after 4 GPUs of node-b were allocated: NodeResourcesFit %v, resfit %v (before %v)", kube, ours, want)
			}
			if singleEvaluations.Load() != reads {
				t.Errorf("%d nodes worked out alone; node-b's row should have been read again in the cycle", singleEvaluations.Load()-reads)
			}
		})
	}
}
