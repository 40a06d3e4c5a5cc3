package planning

import (
	"fmt"
	"math"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/resfit/resfit/examples/kubebridge/cache"
	"github.com/resfit/resfit/examples/kubebridge/dra"
	"github.com/resfit/resfit/examples/kubebridge/testing/dratest"
	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring/frag"
)

// The cost give-back lowers (Scene.FragmentationCost over
// Scene.WorkloadClasses), which kubectl resfit defrag and the
// descheduler's Balance both plan with, is FGD's measure as the FGD
// scorer takes it. On clusters of MIG and shareable GPUs drawn at random,
// with MIG parts, shares and whole GPUs held where kube's allocator puts
// them, the workload's classes are those a learning FGD scorer counts
// from the same pods' tasks (each MIG profile a class of its own), and
// each node's cost is the measure of a node the scorer reads
// (frag.Measure.Row: the parts its GPUs have left). Before, the classes
// dropped the profile and the cost read free amounts alone.
func TestGiveBackCostIsFGDScorersMeasure(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		objects := dra.Objects{Classes: dratest.NVIDIAClasses()}
		var nodes []*v1.Node
		for i := range rapid.IntRange(1, 3).Draw(rt, "nodes") {
			name := fmt.Sprint("node-", i)
			gpus := rapid.IntRange(1, 2).Draw(rt, "gpus")
			if rapid.Bool().Draw(rt, "mig") {
				objects.Slices = append(objects.Slices, dratest.NVIDIAMIGSlices(name, gpus, 0)...)
			} else {
				objects.Slices = append(objects.Slices, dratest.NVIDIAShareableSlice(name, gpus, 0))
			}
			nodes = append(nodes, kubetest.Node(name, "cpu", "64", "memory", "256Gi", "pods", "110"))
		}
		request := rapid.Custom(func(t *rapid.T) resourcev1.DeviceRequest {
			switch rapid.IntRange(0, 2).Draw(t, "kind") {
			case 0:
				return dratest.MIGRequest("r", rapid.SampledFrom(dratest.A100MIG[:len(dratest.A100MIG)-1]).Draw(t, "profile").Name)
			case 1:
				return dratest.ShareRequest("r", rapid.SampledFrom([]string{"10Gi", "20Gi", "40Gi"}).Draw(t, "memory"))
			}
			return dratest.Exactly("r", "gpu.nvidia.com", 1)
		})
		var pods []*v1.Pod
		for i := range rapid.IntRange(1, 8).Draw(rt, "pods") {
			name := fmt.Sprint("p", i)
			claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-claim-" + name)},
				Spec: dratest.ClaimSpec(request.Draw(rt, "request"))}
			objects.Claims = append(objects.Claims, claim)
			p := kubetest.Pod(name, "", "cpu", rapid.SampledFrom([]string{"1", "4"}).Draw(rt, "cpu"))
			p.Namespace = "ns"
			p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "c", ResourceClaimName: &claim.Name}}
			pods = append(pods, p)
		}
		d, err := dra.Read(objects)
		if err != nil {
			rt.Fatal(err)
		}
		// Some pods placed, each where the node drawn has room for it.
		for _, p := range pods {
			if !rapid.Bool().Draw(rt, "placed") {
				continue
			}
			on := nodes[rapid.IntRange(0, len(nodes)-1).Draw(rt, "node")].Name
			if _, ok, err := d.Allocation(p, on); err != nil {
				rt.Fatal(err)
			} else if !ok {
				continue
			}
			if d, err = d.Allocate(p, on); err != nil {
				rt.Fatal(err)
			}
			p.Spec.NodeName = on
		}
		sc := packScene(t, nodes, pods, cache.Options{DRA: d})

		// The classes FGD's learning scorer counts from the same tasks.
		view := sc.Cache().Devices()
		h, err := frag.NewHistogram(4096, math.MaxInt32)
		if err != nil {
			rt.Fatal(err)
		}
		scorer, err := frag.NewLearningScorer(sc.Cache().Schema(), view, h, len(pods), frag.Options{})
		if err != nil {
			rt.Fatal(err)
		}
		// Each pod as the scorer meets it: a placed pod as the host placing
		// it has the scorer observe it (its task on its node), a pending
		// one as the scene asks the scorer to score it first.
		for _, p := range pods {
			task, err := sc.Task(p)
			if err != nil {
				continue
			}
			if p.Spec.NodeName != "" {
				scorer.Observe(task.Placed(p.Spec.NodeName))
				continue
			}
			order, _, _, err := task.Rows(sc.Cache().Table())
			if err != nil {
				rt.Fatal(err)
			}
			if len(order) == 0 {
				scorer.Observe(task.Task)
				continue
			}
			scorer.Observe(order[0])
		}
		learned := map[frag.Class]float64{}
		for _, c := range scorer.Learned().Classes() {
			w := c.Weight
			c.Weight = 0
			learned[c] = w
		}
		classes := sc.WorkloadClasses(pods)
		if len(classes) != len(learned) {
			rt.Fatalf("the scene's classes %+v, FGD's %+v", classes, scorer.Learned().Classes())
		}
		for _, c := range classes {
			key := c
			key.Weight = 0
			if w, ok := learned[key]; !ok || math.Abs(w-c.Weight) > 1e-6 {
				rt.Fatalf("the scene's class %+v; FGD's classes %+v", c, scorer.Learned().Classes())
			}
		}
		if len(classes) == 0 {
			return
		}
		cost, err := sc.FragmentationCost(classes)
		if err != nil {
			rt.Fatal(err)
		}
		m, err := frag.NewMeasure(classes, view.PerDevice())
		if err != nil {
			rt.Fatal(err)
		}
		table := sc.Cache().Table()
		cpu, _ := table.Schema().Slot(resource.CPU)
		for row := range table.Len() {
			if got, want := cost(row), m.Row(table, cpu, view, row); got != want {
				rt.Fatalf("node %d: give-back's cost %v, FGD's measure %v (free %v)", row, got, want, view.Free(row))
			}
		}
	})
}
