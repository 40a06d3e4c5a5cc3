//go:build volcano

package volcano

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v2"
	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	schedulingv1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
	"volcano.sh/volcano/cmd/scheduler/app/options"
	"volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/conf"
	"volcano.sh/volcano/pkg/scheduler/framework"
	"volcano.sh/volcano/pkg/scheduler/uthelper"
	"volcano.sh/volcano/pkg/scheduler/util"

	"github.com/resfit/resfit/examples/kubebridge/testing/dratest"
)

// GPUs claimed through DRA in a Volcano session (the scheduler cache's own
// SharedDRAManager over the objects): kubebridge's TestSnapshotWithDRA's
// cluster — 8 H100s on node-a (6 held by the filler's claim), 8 A100s on
// node-b, published by NVIDIA's driver, no device plugin — and its
// numbers: a 1-GPU claim and nvidia.com/gpu: 1 pack onto node-a (869.8
// against 411.5) or spread onto node-b (911.5 against 369.8); a claim
// that accepts only A100s is kept off node-a, with the reason. Allocating
// the claim on node-a fills it: the next 2-GPU claim fits node-b alone.
func TestDRAInSession(t *testing.T) {
	options.Default()
	name := func(s string) *string { return &s }
	claim := func(n string, count int64, selectors ...string) *resourcev1.ResourceClaim {
		return &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: n},
			Spec: dratest.ClaimSpec(dratest.Exactly("gpus", "gpu.nvidia.com", count, selectors...))}
	}
	withClaim := func(p *v1.Pod, claim string) *v1.Pod {
		p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpus", ResourceClaimName: name(claim)}}
		return p
	}
	for _, c := range []struct {
		gpuType        string
		claimA, claimB float64 // a 1-GPU task's totals on node-a and node-b
	}{
		{"MostAllocated", 1000 * (2*7.0/8 + 55.0/64) / 3, 1000 * (2*1.0/8 + 63.0/64) / 3},
		{"LeastAllocated", 1000 * (2*1.0/8 + 55.0/64) / 3, 1000 * (2*7.0/8 + 63.0/64) / 3},
	} {
		t.Run(c.gpuType, func(t *testing.T) {
			var args framework.Arguments
			arguments := fmt.Sprintf("resources:\n  nvidia.com/gpu: {type: %s, weight: 2}\n  cpu: {type: LeastAllocated, weight: 1}\n", c.gpuType)
			if err := yaml.Unmarshal([]byte(arguments), &args); err != nil {
				t.Fatal(err)
			}
			nodes := []*v1.Node{cpuNode("node-a", "64", "256G"), cpuNode("node-b", "64", "256G")}
			test := uthelper.TestCommonStruct{
				Name:      "resfit with DRA",
				Plugins:   map[string]framework.PluginBuilder{ResourceStrategyFitPluginName: Builders[ResourceStrategyFitPluginName]},
				PodGroups: []*schedulingv1.PodGroup{util.BuildPodGroup("pg1", "c1", "c1", 0, nil, "")},
				Queues:    []*schedulingv1.Queue{util.BuildQueue("c1", 1, nil)},
				Nodes:     nodes,
				Pods: []*v1.Pod{
					withClaim(pod("filler", "node-a", v1.PodRunning, api.BuildResourceList("8", "8G")), "filler-gpus"),
					withClaim(pod("claimed", "", v1.PodPending, api.BuildResourceList("1", "1G")), "one-gpu"),
					pod("extended", "", v1.PodPending, api.BuildResourceList("1", "1G", gpu("1"))),
					withClaim(pod("a100-only", "", v1.PodPending, api.BuildResourceList("1", "1G")), "a100-gpu"),
					withClaim(pod("two", "", v1.PodPending, api.BuildResourceList("1", "1G")), "two-gpus"),
				},
				DeviceClasses:  dratest.NVIDIAClasses(),
				ResourceSlices: []*resourcev1.ResourceSlice{dratest.NVIDIASlice("node-a", "NVIDIA H100 80GB HBM3", 8, 0), dratest.NVIDIASlice("node-b", "NVIDIA A100-SXM4-80GB", 8, 0)},
				ResourceClaims: []*resourcev1.ResourceClaim{
					dratest.AllocatedClaim("c1", "filler-gpus", "node-a", "gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5"),
					claim("one-gpu", 1), claim("two-gpus", 2),
					claim("a100-gpu", 1, "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'"),
				},
			}
			yes := true
			tiers := []conf.Tier{{Plugins: []conf.PluginOption{{Name: ResourceStrategyFitPluginName, EnabledNodeOrder: &yes, EnabledPredicate: &yes, Arguments: args}}}}
			// The test cache adds the pods right after its informers sync,
			// and a pod whose claims its claim cache has not taken in yet
			// is left out of that session (a busy machine shows it); the
			// scheduler's next session has it. Open sessions until one has
			// every pod.
			var ssn *framework.Session
			for attempt := 0; ; attempt++ {
				ssn = test.RegisterSession(tiers, nil)
				tasks := 0
				for _, job := range ssn.Jobs {
					tasks += len(job.Tasks)
				}
				if tasks == len(test.Pods) || attempt == 100 {
					break
				}
				test.Close()
				time.Sleep(10 * time.Millisecond)
			}
			t.Cleanup(test.Close)
			if ssn.SharedDRAManager() == nil {
				t.Fatal("the session has no DRA manager")
			}
			order := func(task string) map[string]float64 {
				out := map[string]float64{}
				for n, node := range ssn.Nodes {
					score, err := ssn.NodeOrderFn(taskNamed(t, ssn, task), node)
					if err != nil {
						t.Fatal(err)
					}
					out[n] = score
				}
				return out
			}
			near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
			for _, task := range []string{"claimed", "extended"} {
				if got := order(task); !near(got["node-a"], c.claimA) || !near(got["node-b"], c.claimB) {
					t.Errorf("%s: %v, want node-a %v, node-b %v", task, got, c.claimA, c.claimB)
				}
			}
			a100 := taskNamed(t, ssn, "a100-only")
			if err := ssn.PredicateFn(a100, ssn.Nodes["node-a"]); err == nil || !strings.Contains(err.Error(), "DRA devices cannot satisfy") {
				t.Errorf("a100-only on node-a: %v", err)
			}
			if err := ssn.PredicateFn(a100, ssn.Nodes["node-b"]); err != nil {
				t.Errorf("a100-only on node-b: %v", err)
			}
			// The session allocates the 1-GPU claim on node-a: 7 of its 8
			// GPUs are held, and a 2-GPU claim fits node-b alone.
			stmt := framework.NewStatement(ssn)
			if err := stmt.Allocate(taskNamed(t, ssn, "claimed"), ssn.Nodes["node-a"]); err != nil {
				t.Fatal(err)
			}
			two := taskNamed(t, ssn, "two")
			if err := ssn.PredicateFn(two, ssn.Nodes["node-a"]); err == nil {
				t.Error("a 2-GPU claim fits node-a with 1 GPU free")
			}
			if err := ssn.PredicateFn(two, ssn.Nodes["node-b"]); err != nil {
				t.Errorf("a 2-GPU claim on node-b: %v", err)
			}
			stmt.Discard()
			if err := ssn.PredicateFn(two, ssn.Nodes["node-a"]); err != nil {
				t.Errorf("a 2-GPU claim on node-a, the allocation discarded: %v", err)
			}
		})
	}
}
