package planning

import (
	"fmt"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	"github.com/resfit/resfit/examples/kubebridge/cache"
	"github.com/resfit/resfit/examples/kubebridge/dra"
	"github.com/resfit/resfit/examples/kubebridge/testing/dratest"
	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
	"github.com/resfit/resfit/scoring/defrag"
)

// Where a planner puts a pod whose claim asks for whole GPUs through DRA,
// it takes the GPUs kube's allocator gives the claim there
// (dra.Reading.Allocation, kube's structured allocator): on a node of 1 to 8 GPUs
// that claims hold at random, a pending pod's claim from a template asks
// for 1 to 8 of them; the planner places it (a round of make-room) on the
// GPUs the allocator picks, or not at all when the allocator finds none.
// A mutation that takes the last free GPUs first fails it.
func TestPlannerTakesTheGPUsKubesAllocatorGives(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		gpus := rapid.IntRange(1, 8).Draw(rt, "gpus")
		objects := dra.Objects{Slices: []*resourcev1.ResourceSlice{dratest.NVIDIASlice("gpu-a", "NVIDIA H100 80GB HBM3", gpus, 0)}, Classes: dratest.NVIDIAClasses()}
		var held []string
		for i := range gpus {
			if rapid.Bool().Draw(rt, fmt.Sprint("held ", i)) {
				held = append(held, fmt.Sprintf("gpu-%d", i))
			}
		}
		for n := 0; len(held) > 0; n++ { // held in claims of 1 to 3 GPUs
			take := min(len(held), rapid.IntRange(1, 3).Draw(rt, "claim size"))
			objects.Claims = append(objects.Claims, dratest.AllocatedClaim("train", fmt.Sprint("held-", n), "gpu-a", held[:take]...))
			held = held[take:]
		}
		want := rapid.IntRange(1, 8).Draw(rt, "asks")
		template := fmt.Sprintf("gpus-%d", want)
		objects.Templates = []*resourcev1.ResourceClaimTemplate{{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: template},
			Spec: resourcev1.ResourceClaimTemplateSpec{Spec: dratest.ClaimSpec(dratest.Exactly("gpus", "gpu.nvidia.com", int64(want)))}}}
		p := kubetest.Pod("job", "", "cpu", "1")
		p.Namespace = "train"
		p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpus", ResourceClaimTemplateName: &template}}
		d, err := dra.Read(objects)
		if err != nil {
			rt.Fatal(err)
		}
		nodes := []*v1.Node{kubetest.Node("gpu-a", "cpu", "64", "memory", "256Gi", "pods", "110")}
		sc := packScene(t, nodes, []*v1.Pod{p}, cache.Options{DRA: d})
		allocated, ok, err := d.Allocation(p, "gpu-a")
		if err != nil {
			rt.Fatal(err)
		}
		var kube []string
		if ok {
			for _, r := range allocated[0].Result.Devices.Results {
				kube = append(kube, r.Device)
			}
		}
		pl, err := New(sc, nil, Options{})
		if err != nil {
			rt.Fatal(err)
		}
		round, _, err := pl.Round([]*v1.Pod{p}, defrag.Round{Mode: defrag.RoundMakeRoom, Moves: 1})
		if err != nil {
			rt.Fatal(err)
		}
		var planned []string
		if placed := round.Placed(); len(placed) == 1 {
			for _, j := range placed[0].Holds {
				planned = append(planned, fmt.Sprintf("gpu-%d", j))
			}
		}
		slices.Sort(kube)
		slices.Sort(planned)
		if !slices.Equal(kube, planned) || ok != (len(round.Placed()) == 1) {
			rt.Fatalf("kube's allocator gives %v (found %v); the planner takes %v", kube, ok, planned)
		}
	})
}
