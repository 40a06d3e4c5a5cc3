package dra

import (
	"maps"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resfit/resfit/examples/kubebridge/testing/dratest"
)

// trainNodes are the nodes of TrainSlices, labelled as a cluster labels
// them: node-a in zone a, node-b in zone b.
func trainNodes() []*v1.Node {
	node := func(name, zone string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}}}
	}
	return []*v1.Node{node("node-a", "a"), node("node-b", "b")}
}

// byLabel is a nodeSelector on one label, key In values.
func byLabel(key string, values ...string) *v1.NodeSelector {
	return &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
		{Key: key, Operator: v1.NodeSelectorOpIn, Values: values}}}}}
}

// allocatedOn is a claim of namespace train for one GPU, allocated node-b's
// gpu-7 with this nodeSelector.
func allocatedOn(name string, sel *v1.NodeSelector) *resourcev1.ResourceClaim {
	c := dratest.AllocatedClaim("train", name, "node-b", "gpu-7")
	c.Status.Allocation.NodeSelector = sel
	return c
}

// podOf is a pod of namespace train naming these claims.
func podOf(claims ...string) *v1.Pod {
	var refs []v1.PodResourceClaim
	for _, c := range claims {
		refs = append(refs, v1.PodResourceClaim{Name: c, ResourceClaimName: &c})
	}
	return dratest.PodWithClaims("p", refs...)
}

// boundNodes, read in the package: an allocation's nodeSelector binds the
// pod to the nodes it selects, by name or label, matched against the
// nodes given; two claims bind it to the nodes both select; a selector by
// label binds nothing where no nodes are given (the scheduler's to
// match), nor does an allocation with no selector; a selector kube cannot
// read is an error naming the claim and the field.
func TestBoundNodes(t *testing.T) {
	claims := []*resourcev1.ResourceClaim{
		allocatedOn("by-name", dratest.NodeOf("node-b")),
		allocatedOn("by-zone", byLabel("topology.kubernetes.io/zone", "a", "b")),
		allocatedOn("by-host", byLabel("kubernetes.io/hostname", "node-a")),
		allocatedOn("anywhere", nil),
		allocatedOn("bad", &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
			{Key: "kubernetes.io/hostname", Operator: "Near", Values: []string{"node-a"}}}}}}),
	}
	read := func(nodes []*v1.Node) *Reading {
		d, err := Read(Objects{Slices: dratest.TrainSlices(), Classes: dratest.NVIDIAClasses(), Claims: dratest.TrainClaims(claims...), Nodes: nodes})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, c := range []struct {
		claims         []string
		withNodes, not []string // nil: binds nothing
	}{
		{[]string{"by-name"}, []string{"node-b"}, []string{"node-b"}},
		{[]string{"by-zone"}, []string{"node-a", "node-b"}, nil},
		{[]string{"by-host"}, []string{"node-a"}, nil},
		{[]string{"anywhere"}, nil, nil},
		{[]string{"by-zone", "by-host"}, []string{"node-a"}, nil},
		{[]string{"by-host", "by-name"}, []string{}, []string{"node-b"}},
		{[]string{"by-name", "by-host"}, []string{}, []string{"node-b"}},
		{[]string{"anywhere", "by-name"}, []string{"node-b"}, []string{"node-b"}},
	} {
		for _, nodes := range [][]*v1.Node{trainNodes(), nil} {
			want := c.withNodes
			if nodes == nil {
				want = c.not
			}
			got, err := read(nodes).boundNodes(podOf(c.claims...))
			if err != nil || (got == nil) != (want == nil) || !slices.Equal(slices.Sorted(maps.Keys(got)), want) && want != nil {
				t.Errorf("%v, %d nodes given: bound to %v (%v), want %v", c.claims, len(nodes), got, err, want)
			}
		}
	}
	if _, err := read(trainNodes()).boundNodes(podOf("bad")); err == nil || !strings.HasPrefix(err.Error(), "resourceclaim train/bad: status.allocation.nodeSelector: ") {
		t.Errorf("a selector kube cannot read: %v", err)
	}
}

// Unsatisfied's reasons, each as it reads: an allocated claim whose
// selector does not select the node; the first request that fails alone,
// with what the node has for it (its class selecting no device there, too
// few wholly free, all of them asked for); requests that fit alone but not
// together; "" where the claims fit.
func TestUnsatisfiedSays(t *testing.T) {
	h100 := "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"
	claim := func(name string, requests ...resourcev1.DeviceRequest) *resourcev1.ResourceClaim {
		return &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: name}, Spec: dratest.ClaimSpec(requests...)}
	}
	all := dratest.Exactly("node", "gpu.nvidia.com", 0)
	all.Exactly.AllocationMode, all.Exactly.Count = resourcev1.DeviceAllocationModeAll, 0
	d, err := Read(Objects{Slices: dratest.TrainSlices(), Classes: dratest.NVIDIAClasses(), Nodes: trainNodes(), Claims: dratest.TrainClaims(
		allocatedOn("pinned", byLabel("kubernetes.io/hostname", "node-b")),
		claim("three", dratest.Exactly("gpus", "gpu.nvidia.com", 3)),
		claim("h100s", dratest.Exactly("gpus", "gpu.nvidia.com", 1, h100)),
		claim("all", all),
		claim("two-and-one", dratest.Exactly("a", "gpu.nvidia.com", 2), dratest.Exactly("b", "gpu.nvidia.com", 1)),
	)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		claim, node, want string
	}{
		{"pinned", "node-a", "a claim of the pod is allocated already, and its allocation's nodeSelector does not select this node"},
		{"pinned", "node-b", ""},
		{"three", "node-a", "claim train/three, request gpus: it asks for 3; deviceclass gpu.nvidia.com selects 8 devices on the node, 2 of them wholly free (no claim holds it or a part of it)"},
		{"three", "node-b", ""},
		{"h100s", "node-b", "claim train/h100s, request gpus: deviceclass gpu.nvidia.com and the request's selectors select no device on the node"},
		{"all", "node-a", "claim train/all, request node: it asks for all 8 devices deviceclass gpu.nvidia.com selects on the node, and 2 of them are wholly free"},
		{"two-and-one", "node-a", "each request of the pod's claims fits the node alone, but not all together (the devices, counters or capacity they would share, or the claims' constraints)"},
	} {
		if got, err := d.Unsatisfied(podOf(c.claim), c.node); err != nil || got != c.want {
			t.Errorf("%s on %s: %q (%v)\nwant %q", c.claim, c.node, got, err, c.want)
		}
	}
}
