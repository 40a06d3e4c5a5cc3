package plugins

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	internalqueue "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	"k8s.io/utils/ptr"

	"github.com/resfit/resfit/examples/kubebridge/dra"
	"github.com/resfit/resfit/examples/kubebridge/testing/dratest"
	"github.com/resfit/resfit/examples/kubebridge/testing/inturn"
)

// noopEverywhere is a plugin that does nothing at every point
// ResourceStrategyFit works at (PreFilter, Filter, PreScore, Score): the
// framework's own cost of a plugin there, the floor such a plugin adds to.
type noopEverywhere struct{ noop }

func (noopEverywhere) PreFilter(context.Context, fwk.CycleState, *v1.Pod, []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	return nil, nil
}
func (noopEverywhere) PreFilterExtensions() fwk.PreFilterExtensions { return nil }
func (noopEverywhere) Filter(context.Context, fwk.CycleState, *v1.Pod, fwk.NodeInfo) *fwk.Status {
	return nil
}
func (noopEverywhere) PreScore(context.Context, fwk.CycleState, *v1.Pod, []fwk.NodeInfo) *fwk.Status {
	return nil
}

// draBenchCluster is a generated cluster whose every node (64 cores,
// 256Gi) has 8 GPUs published through NVIDIA's DRA driver, and runs one
// pod of a random size whose claim holds 0 to 7 of them; and the objects
// (slices, the chart's classes, the claims, and the benchmarked pod's
// claim of one GPU, not allocated).
func draBenchCluster(n int) ([]*v1.Node, []*v1.Pod, []runtime.Object) {
	r := rand.New(rand.NewPCG(2, uint64(n)))
	var nodes []*v1.Node
	var pods []*v1.Pod
	var objects []runtime.Object
	for _, c := range dratest.NVIDIAClasses() {
		objects = append(objects, c)
	}
	for i := range n {
		name, n, load := loadedNode(r, i)
		nodes = append(nodes, n)
		objects = append(objects, dratest.NVIDIASlice(name, "NVIDIA H100 80GB HBM3", 8, 0))
		if k := r.IntN(8); k > 0 {
			var devices []string
			for j := range k {
				devices = append(devices, fmt.Sprint("gpu-", j))
			}
			claim := dratest.AllocatedClaim("default", "gpus-"+name, name, devices...)
			holds(load, claim)
			objects = append(objects, claim)
		}
		pods = append(pods, load)
	}
	objects = append(objects, &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "train-gpu", UID: "train-gpu"},
		Spec: dratest.ClaimSpec(dratest.Exactly("gpu", "gpu.nvidia.com", 1))})
	return nodes, pods, objects
}

// loadedNode is a benchmark cluster's node i (64 cores, 256Gi) and the pod
// of a random size that runs on it.
func loadedNode(r *rand.Rand, i int) (string, *v1.Node, *v1.Pod) {
	name := fmt.Sprintf("node-%05d", i)
	return name, node(name, resources("cpu", "64", "memory", "256Gi")),
		pod("load-"+name, name, resources("cpu", fmt.Sprint(r.IntN(48)+1), "memory", fmt.Sprint(r.IntN(192)+1, "Gi")))
}

// holds has a running pod hold an allocated claim: reserved for it, named
// in its spec as "gpus".
func holds(p *v1.Pod, claim *resourcev1.ResourceClaim) {
	claim.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: p.Name, UID: p.UID}}
	p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpus", ResourceClaimName: ptr.To(claim.Name)}}
}

// BenchmarkFrameworkCycleDRA is a scheduling cycle of a pod with a 1-GPU
// claim on clusters of 1000 and 5000 nodes with 8 DRA GPUs each, in kube's
// framework runtime with kube-scheduler's own SharedDRAManager: PreFilter,
// Filter on every node, PreScore and Score on the feasible ones. Profiles:
// Noop (the floor: a plugin that does nothing at ResourceStrategyFit's
// points), DynamicResources alone (its own cost: it finds devices for the
// claim on every node), and ResourceStrategyFit packing GPUs
// (MostAllocated) alone and beside DynamicResources, as a profile deploys
// them. ns/node per cycle.
func BenchmarkFrameworkCycleDRA(b *testing.B) {
	quietKlog()
	for _, n := range []int{1000, 5000} {
		nodes, pods, objects := draBenchCluster(n)
		e := newDRABench(b, nodes, pods, objects)
		ctx, snapshot, infos, m, factory, client := e.ctx, e.snapshot, e.infos, e.m, e.factory, e.client
		p := pod("train", "", resources("cpu", "8", "memory", "32Gi"))
		p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("train-gpu")}}
		for _, prof := range []struct {
			name    string
			plugins []string
		}{
			{"Noop", []string{"Noop"}},
			{"DynamicResources", []string{dynamicresources.Name}},
			{"ResourceStrategyFit-MostAllocated", []string{ResourceStrategyFitName}},
			{"DynamicResources+ResourceStrategyFit", []string{dynamicresources.Name, ResourceStrategyFitName}},
		} {
			// One framework for every run of the sub-benchmark:
			// DynamicResources indexes the shared pod informer by its
			// profile's name, once.
			fw := draBenchFramework(b, ctx, snapshot, prof.plugins, m, factory, client)
			b.Run(fmt.Sprintf("%s/nodes=%d", prof.name, n), func(b *testing.B) {
				measureCycles(b, n, draCycle(b, ctx, fw, p, infos))
			})
		}
		e.cancel()
	}
}

// draBench is what the DRA benchmarks run on: a snapshot of the cluster's
// nodes and pods, its node infos, and kube-scheduler's own SharedDRAManager
// over a fake clientset's informers of the objects, until cancel.
type draBench struct {
	ctx      context.Context
	cancel   context.CancelFunc
	snapshot *cache.Snapshot
	infos    []fwk.NodeInfo
	m        fwk.SharedDRAManager
	factory  informers.SharedInformerFactory
	client   *fake.Clientset
}

func newDRABench(b *testing.B, nodes []*v1.Node, pods []*v1.Pod, objects []runtime.Object) *draBench {
	e := &draBench{snapshot: cache.NewSnapshot(pods, nodes)}
	var err error
	if e.infos, err = e.snapshot.NodeInfos().List(); err != nil {
		b.Fatal(err)
	}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	e.m, e.factory, e.client = draManagerOf(b, e.ctx, fake.NewClientset(objects...))
	return e
}

// draCycle is a scheduling cycle of a pod as kube-scheduler's schedulePod
// runs it: PreFilter; Filter on every node in parallel, each through
// RunFilterPluginsWithNominatedPods (the node's nominated pods looked up by
// its name) and a rejected node's status kept by its name in the cycle's
// diagnosis, as findNodesThatPassFilters does; PreScore and Score on the
// feasible ones (at least one). Every node is filtered (kube-scheduler
// stops at percentageOfNodesToScore's share of feasible nodes, which a
// DRA pod on these clusters does not reach).
func draCycle(b *testing.B, ctx context.Context, fw framework.Framework, p *v1.Pod, infos []fwk.NodeInfo) func() {
	feasible := make([]fwk.NodeInfo, len(infos))
	rejected := make([]*fwk.Status, len(infos))
	names := make([]string, len(infos))
	return func() {
		state := framework.NewCycleState()
		if _, s, _ := fw.RunPreFilterPlugins(ctx, state, p); !s.IsSuccess() && !s.IsSkip() {
			b.Fatal(s.AsError())
		}
		var found atomic.Int32
		var failed atomic.Pointer[fwk.Status]
		fw.Parallelizer().Until(ctx, len(infos), func(i int) {
			info := infos[i]
			switch s := fw.RunFilterPluginsWithNominatedPods(ctx, state, p, info); {
			case s.IsSuccess():
				feasible[found.Add(1)-1] = info
			case s.IsRejected():
				rejected[i], names[i] = s, info.Node().Name
			default:
				failed.Store(s)
			}
		}, metrics.Filter)
		if s := failed.Load(); s != nil {
			b.Fatal(s.AsError())
		}
		diagnosis := framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}
		for i, s := range rejected {
			if s != nil {
				diagnosis.NodeToStatus.Set(names[i], s)
				diagnosis.AddPluginStatus(s)
				rejected[i] = nil
			}
		}
		cycleFeasible := feasible[:found.Load()]
		if len(cycleFeasible) == 0 {
			b.Fatalf("no feasible node: %v", fw.RunFilterPlugins(ctx, state, p, infos[0]).AsError())
		}
		if s := fw.RunPreScorePlugins(ctx, state, p, cycleFeasible); !s.IsSuccess() {
			b.Fatal(s.AsError())
		}
		if _, s := fw.RunScorePlugins(ctx, state, p, cycleFeasible); !s.IsSuccess() {
			b.Fatal(s.AsError())
		}
	}
}

// draBenchFramework builds a framework with the given plugins at every
// point they implement, over kube's SharedDRAManager.
func draBenchFramework(b *testing.B, ctx context.Context, snapshot *cache.Snapshot, plugins []string, m fwk.SharedDRAManager, factory informers.SharedInformerFactory, client *fake.Clientset) framework.Framework {
	b.Helper()
	registry := resfitRegistry()
	registry["Noop"] = func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
		return noopEverywhere{noop{"Noop"}}, nil
	}
	// DynamicResources with kube-scheduler's own features (v1.37's defaults:
	// partitionable devices, consumable capacity and the rest on).
	registry[dynamicresources.Name] = frameworkruntime.FactoryAdapter(feature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate), dynamicresources.New)
	profile := &config.KubeSchedulerProfile{
		SchedulerName: fmt.Sprint("bench-dra-", plugins), // DynamicResources indexes pods per profile name
		Plugins: &config.Plugins{
			QueueSort: config.PluginSet{Enabled: []config.Plugin{{Name: queuesort.Name}}},
			Bind:      config.PluginSet{Enabled: []config.Plugin{{Name: defaultbinder.Name}}},
		},
	}
	for _, name := range plugins {
		points := []*config.PluginSet{&profile.Plugins.PreFilter, &profile.Plugins.Filter}
		if name != dynamicresources.Name { // it has no PreScore
			points = append(points, &profile.Plugins.PreScore)
		}
		if name != "Noop" {
			points = append(points, &profile.Plugins.Reserve)
		}
		for _, set := range points {
			set.Enabled = append(set.Enabled, config.Plugin{Name: name})
		}
		profile.Plugins.Score.Enabled = append(profile.Plugins.Score.Enabled, config.Plugin{Name: name, Weight: 1})
		switch name {
		case dynamicresources.Name:
			profile.PluginConfig = append(profile.PluginConfig, config.PluginConfig{Name: name, Args: &config.DynamicResourcesArgs{}})
		case ResourceStrategyFitName:
			profile.PluginConfig = append(profile.PluginConfig, config.PluginConfig{Name: name,
				Args: &runtime.Unknown{Raw: []byte(mostAllocated), ContentType: runtime.ContentTypeJSON}})
		case FGDName:
			profile.PluginConfig = append(profile.PluginConfig, config.PluginConfig{Name: name,
				Args: &runtime.Unknown{Raw: []byte(fgdOverParts), ContentType: runtime.ContentTypeJSON}})
		}
	}
	fw, err := frameworkruntime.NewFramework(ctx, registry, profile, frameworkruntime.WithSnapshotSharedLister(snapshot),
		frameworkruntime.WithSharedDRAManager(m), frameworkruntime.WithInformerFactory(factory), frameworkruntime.WithClientSet(client),
		frameworkruntime.WithPodNominator(internalqueue.NewSchedulingQueue(nil, factory)))
	if err != nil {
		b.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return fw
}

// BenchmarkDRAReadAfterAClaim is what the plugins do at the start of the
// cycle after a pod's claim was allocated (or given back), on the
// benchmark's clusters, each iteration allocating the train pod's claim in
// the tracker or taking the allocation back:
//   - told: the plugins' way, told by Reserve which claim changed: that
//     claim got from kube's SharedDRAManager and read into the last reading
//     (dra.Reader.ReadClaims);
//   - listed: every DRA object listed from the SharedDRAManager and read
//     with the reader that read them before (the classes and devices
//     reused, the changed claims found and read), as after a slice's event;
//   - lists: the listing alone, kube's part of listed.
//
// Each reading's changed nodes are checked.
func BenchmarkDRAReadAfterAClaim(b *testing.B) {
	quietKlog()
	for _, n := range []int{1000, 5000} {
		_, _, objects := draBenchCluster(n)
		ctx, cancel := context.WithCancel(context.Background())
		m, _, _ := draManagerOf(b, ctx, fake.NewClientset(objects...))
		claim, err := m.ResourceClaims().Get("default", "train-gpu")
		for deadline := time.Now().Add(10 * time.Second); err != nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			claim, err = m.ResourceClaims().Get("default", "train-gpu") // the claims' cache is still filling
		}
		if err != nil {
			b.Fatal(err)
		}
		allocated := claim.DeepCopy()
		allocated.Status.Allocation = dratest.AllocatedClaim("default", "train-gpu", "node-00000", "gpu-7").Status.Allocation
		for _, way := range []string{"told", "listed", "lists"} {
			var r dra.Reader
			var w draWatch
			last, err := readDRA(&r, m)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/nodes=%d", way, n), func(b *testing.B) {
				b.ReportAllocs()
				on := false
				for b.Loop() {
					if on {
						m.ResourceClaims().MaybeRemoveClaimPendingAllocation(allocated.UID, true)
					} else if err := m.ResourceClaims().SignalClaimPendingAllocation(allocated.UID, allocated); err != nil {
						b.Fatal(err)
					}
					on = !on
					var d *dra.Reading
					var err error
					switch way {
					case "told":
						w.claim("default/train-gpu", nil, false)
						d, err = readDRAChanges(&r, &w, m)
					case "listed":
						d, err = readDRA(&r, m)
					case "lists":
						if _, err := m.ResourceSlices().ListWithDeviceTaintRules(); err != nil {
							b.Fatal(err)
						}
						if _, err := m.DeviceClasses().List(); err != nil {
							b.Fatal(err)
						}
						if _, err := m.ResourceClaims().List(); err != nil {
							b.Fatal(err)
						}
						continue
					}
					if err != nil {
						b.Fatal(err)
					}
					if changed, same := d.ChangedNodes(last); !same || len(changed) != 1 {
						b.Fatalf("changed %v (same devices %v)", changed, same)
					}
					last = d
				}
			})
		}
		m.ResourceClaims().MaybeRemoveClaimPendingAllocation(allocated.UID, true)
		cancel()
	}
}

// claimBench is BenchmarkFrameworkCycleDRA's cluster on n nodes with
// another pod's claim, allocated on node-00000 (or given back) before each
// cycle: the train pod whose cycles are measured, and the other pod's
// claim toggled by toggle.
type claimBench struct {
	*draBench
	pod, other *v1.Pod
	allocated  *resourcev1.ResourceClaim
	on         bool
}

func newClaimBench(b *testing.B, n int) *claimBench {
	nodes, pods, objects := draBenchCluster(n)
	otherClaim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "other-gpu", UID: "other-gpu"},
		Spec: dratest.ClaimSpec(dratest.Exactly("gpu", "gpu.nvidia.com", 1))}
	c := &claimBench{draBench: newDRABench(b, nodes, pods, append(objects, otherClaim))}
	c.pod = pod("train", "", resources("cpu", "8", "memory", "32Gi"))
	c.pod.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("train-gpu")}}
	c.other = pod("other", "", resources("cpu", "1"))
	c.other.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("other-gpu")}}
	c.allocated = otherClaim.DeepCopy()
	c.allocated.Status.Allocation = dratest.AllocatedClaim("default", "other-gpu", "node-00000", "gpu-7").Status.Allocation
	return c
}

// toggle has kube's claim tracker take the other claim's allocation (or
// drop it), then runs the other pod's Reserve through fw's plugins, as
// kube-scheduler runs them after DynamicResources' Reserve.
func (c *claimBench) toggle(b *testing.B, fw framework.Framework) {
	if c.on {
		c.m.ResourceClaims().MaybeRemoveClaimPendingAllocation(c.allocated.UID, true)
	} else if err := c.m.ResourceClaims().SignalClaimPendingAllocation(c.allocated.UID, c.allocated); err != nil {
		b.Fatal(err)
	}
	c.on = !c.on
	if s := fw.RunReservePluginsReserve(c.ctx, framework.NewCycleState(), c.other, "node-00000"); !s.IsSuccess() {
		b.Fatal(s.AsError())
	}
}

// reset gives the other claim back.
func (c *claimBench) reset() {
	c.m.ResourceClaims().MaybeRemoveClaimPendingAllocation(c.allocated.UID, true)
	c.on = false
}

// BenchmarkFrameworkCycleCPUPodVsFloor is a pod that asks for no GPU (8
// cores, 32Gi) on BenchmarkFrameworkCycleDRA's clusters, its cycle through
// ResourceStrategyFit packing GPUs and through the floor in turn
// (inturn.Measure): a pod the plugin's filters cannot reject, for which
// its PreFilter returns Skip and the framework calls no Filter of it.
func BenchmarkFrameworkCycleCPUPodVsFloor(b *testing.B) {
	quietKlog()
	for _, n := range []int{1000, 5000} {
		c := newClaimBench(b, n)
		p := pod("cpu", "", resources("cpu", "8", "memory", "32Gi"))
		floor := draCycle(b, c.ctx, draBenchFramework(b, c.ctx, c.snapshot, []string{"Noop"}, c.m, c.factory, c.client), p, c.infos)
		profile := draCycle(b, c.ctx, draBenchFramework(b, c.ctx, c.snapshot, []string{ResourceStrategyFitName}, c.m, c.factory, c.client), p, c.infos)
		b.Run(fmt.Sprintf("ResourceStrategyFit-MostAllocated/nodes=%d", n), func(b *testing.B) { inturn.Measure(b, n, floor, profile) })
		c.cancel()
	}
}

// BenchmarkFrameworkCycleDRAAfterAClaim is BenchmarkFrameworkCycleDRA's
// cycle after another pod's claim was allocated on node-00000 (or given
// back): before each cycle the tracker takes the allocation (or drops it)
// and the profile's Reserve plugins run for that pod, as kube-scheduler
// runs them after DynamicResources' Reserve, so that resfit reads the
// claim and the node again. Profiles: Noop (the floor) and
// ResourceStrategyFit packing GPUs. ns/node per cycle.
func BenchmarkFrameworkCycleDRAAfterAClaim(b *testing.B) {
	quietKlog()
	for _, n := range []int{1000, 5000} {
		c := newClaimBench(b, n)
		for _, prof := range []struct {
			name    string
			plugins []string
		}{
			{"Noop", []string{"Noop"}},
			{"ResourceStrategyFit-MostAllocated", []string{ResourceStrategyFitName}},
		} {
			fw := draBenchFramework(b, c.ctx, c.snapshot, prof.plugins, c.m, c.factory, c.client)
			cycle := draCycle(b, c.ctx, fw, c.pod, c.infos)
			b.Run(fmt.Sprintf("%s/nodes=%d", prof.name, n), func(b *testing.B) {
				measureCycles(b, n, func() {
					c.toggle(b, fw)
					cycle()
				})
			})
			c.reset()
		}
		c.cancel()
	}
}

// BenchmarkFrameworkCycleDRAAfterAClaimVsFloor is
// BenchmarkFrameworkCycleDRAAfterAClaim with resfit's cycle and the
// floor's in the same loop, in turn (as BenchmarkFrameworkCycleVsFloor):
// before each cycle, the floor's too, the other pod's claim is allocated
// or given back and its Reserve runs through resfit's plugins, so resfit
// reads a claim and a node again in every one of its cycles. It reports
// resfit's ns/node, the floor's and their ratio.
func BenchmarkFrameworkCycleDRAAfterAClaimVsFloor(b *testing.B) {
	quietKlog()
	for _, n := range []int{1000, 5000} {
		c := newClaimBench(b, n)
		resfit := draBenchFramework(b, c.ctx, c.snapshot, []string{ResourceStrategyFitName}, c.m, c.factory, c.client)
		floor := draCycle(b, c.ctx, draBenchFramework(b, c.ctx, c.snapshot, []string{"Noop"}, c.m, c.factory, c.client), c.pod, c.infos)
		profile := draCycle(b, c.ctx, resfit, c.pod, c.infos)
		b.Run(fmt.Sprintf("ResourceStrategyFit-MostAllocated/nodes=%d", n), func(b *testing.B) {
			inturn.Measure(b, n,
				func() { c.toggle(b, resfit); floor() },
				func() { c.toggle(b, resfit); profile() })
		})
		c.reset()
		c.cancel()
	}
}
