package dra

import (
	"fmt"
	"slices"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/resfit/resfit/examples/kubebridge/testing/dratest"
	"github.com/resfit/resfit/resource"
)

// migParts are an A100's MIG devices as the driver lists them (every
// profile's placements, in order), the layout's parts.
func migParts(gpu int) []string {
	var out []string
	for _, p := range dratest.A100MIG {
		for _, start := range p.Starts {
			out = append(out, dratest.MIGDeviceName(gpu, p, start))
		}
	}
	return out
}

// On a node of two A100s with random MIG devices allocated, the part the
// device view's first fit takes for a profile (the first device in order
// with a part of it that its counters leave room for, the first such
// part: what FGD scores a pod of that partition by) is the device kube's
// allocator gives the pod's claim there, and where it finds none the
// allocator finds none.
func TestFirstFitIsKubesAllocatorsPick(t *testing.T) {
	slices := dratest.NVIDIAMIGSlices("node-a", 2, 0)
	rapid.Check(t, func(t *rapid.T) {
		var claims []*resourcev1.ResourceClaim
		for i := range rapid.IntRange(0, 6).Draw(t, "held") {
			gpu := rapid.IntRange(0, 1).Draw(t, "gpu")
			device := rapid.SampledFrom(append(migParts(gpu), fmt.Sprint("gpu-", gpu))).Draw(t, "device")
			claims = append(claims, dratest.HeldClaim(fmt.Sprint("held-", i), dratest.OnDevice("node-a", device)))
		}
		profile := rapid.SampledFrom([]string{"1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"}).Draw(t, "profile")
		d, err := Read(Objects{Slices: slices, Classes: dratest.NVIDIAClasses(), Claims: claims})
		if err != nil {
			t.Fatal(err)
		}
		// Claims that cannot all hold their devices at once are no state
		// of a cluster: the draws where the allocated counters overflow
		// are skipped.
		for _, u := range d.usage().counters.all() {
			for name, used := range u {
				if used.Cmp(ratOf(d.sets["gpu.nvidia.com/node-a/gpu-0-counter-set"][name].Value)) > 0 {
					t.Skip("the held devices overlap")
				}
			}
		}
		want := "-"
		for _, u := range d.NodeUnits("node-a", resource.GPU).Parts {
			if p := u.Layout.FirstFit(profile, u.Left); p >= 0 {
				want = migParts(u.Device)[p]
				break
			}
		}
		pod := dratest.ClaimPod("p", "want")
		d2, err := Read(Objects{Slices: slices, Classes: dratest.NVIDIAClasses(), Claims: append(claims, dratest.Claim("want", dratest.MIGRequest("r", profile)))})
		if err != nil {
			t.Fatal(err)
		}
		if got := devicesOn(t, d2, pod, "node-a"); got != want {
			t.Fatalf("%s: kube's allocator gives %s, first fit %s", profile, got, want)
		}
	})
}

// On a node of two shareable H100s with random shares allocated, a share
// fits a GPU's layout exactly where kube's allocator can give it one, and
// the first GPU it fits is the allocator's pick (a share of all 80Gi is a
// whole GPU, which a GPU fits when nothing of it is shared out).
func TestShareFitIsKubesAllocators(t *testing.T) {
	published := []*resourcev1.ResourceSlice{dratest.NVIDIAShareableSlice("node-a", 2, 0)}
	rapid.Check(t, func(t *rapid.T) {
		var claims []*resourcev1.ResourceClaim
		used := [2]int64{}
		for i := range rapid.IntRange(0, 5).Draw(t, "held") {
			gpu := rapid.IntRange(0, 1).Draw(t, "gpu")
			mi := rapid.Int64Range(1, 80*1024-used[gpu]).Draw(t, "Mi")
			used[gpu] += mi
			r := dratest.OnDevice("node-a", fmt.Sprint("gpu-", gpu))
			r.ShareID = new(types.UID(fmt.Sprint("s", i)))
			r.ConsumedCapacity = map[resourcev1.QualifiedName]kres.Quantity{"memory": *kres.NewQuantity(mi<<20, kres.BinarySI)}
			claims = append(claims, dratest.HeldClaim(fmt.Sprint("held-", i), r))
			if used[gpu] >= 80*1024 {
				break
			}
		}
		request := fmt.Sprintf("%dMi", rapid.Int64Range(1, 80*1024).Draw(t, "want Mi"))
		if rapid.Bool().Draw(t, "in Ki") {
			request = fmt.Sprintf("%dKi", rapid.Int64Range(1, 80*1024*1024).Draw(t, "want Ki"))
		}
		d, err := Read(Objects{Slices: published, Classes: dratest.NVIDIAClasses(), Claims: append(claims, dratest.Claim("want", dratest.ShareRequest("r", request)))})
		if err != nil {
			t.Fatal(err)
		}
		got := devicesOn(t, d, dratest.ClaimPod("p", "want"), "node-a")
		want := "-"
		demand, err := d.DemandOf(dratest.ClaimPod("p", "want"))
		if err != nil {
			t.Fatal(err)
		}
		take, types, ok, err := demand.Take("node-a")
		if err != nil {
			t.Fatal(err)
		}
		gpus := slices.IndexFunc(d.Classes(), func(c Class) bool { return c.Resource == resource.GPU })
		units := d.NodeUnits("node-a", resource.GPU)
		switch {
		case ok && take[gpus] >= 1000:
			// The whole GPU's memory: a whole device, the first wholly free.
			if j := slices.Index(units.Free(1000), 1000); j >= 0 {
				want = fmt.Sprintf("gpu-%d memory=80Gi", j)
			}
		case ok:
			for _, u := range units.Parts {
				if c, ok := u.Layout.Fit(types[gpus], u.Left); ok {
					want = fmt.Sprintf("gpu-%d memory=%s", u.Device, kres.NewQuantity(c[0]/1000, kres.BinarySI))
					break
				}
			}
		}
		if got != want {
			t.Fatalf("%s: kube's allocator gives %s, the layouts %s", request, got, want)
		}
	})
}
