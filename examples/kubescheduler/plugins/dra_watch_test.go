package plugins

import (
	"context"
	"slices"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/resfit/resfit/examples/kubebridge/dra"
	"github.com/resfit/resfit/examples/kubebridge/testing/dratest"
)

// Told which claims changed, the plugins read those alone from kube's
// SharedDRAManager and say what a full reading says: a claim allocated
// through the API (as the informer's event names it), one the scheduler
// holds allocated in memory (as Reserve names it), an event newer than
// the claims' cache (the event's object counts) and a deletion the cache
// has not seen yet (the claim is gone). Each reading changes node-a's
// row alone.
func TestReadDRAChangesFollowsEvents(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	free := func(name string) *resourcev1.ResourceClaim {
		return &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), ResourceVersion: "5"},
			Spec: dratest.ClaimSpec(dratest.Exactly("gpu", "gpu.nvidia.com", 1))}
	}
	client := fake.NewClientset(dratest.NVIDIASlice("node-a", "NVIDIA H100 80GB HBM3", 8, 0), dratest.NVIDIASlice("node-b", "NVIDIA H100 80GB HBM3", 8, 0),
		free("a"), free("b"))
	for _, c := range dratest.NVIDIAClasses() {
		if _, err := client.ResourceV1().DeviceClasses().Create(ctx, c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	m, _, _ := draManagerOf(t, ctx, client)
	allocated := func(name, version string, devices ...string) *resourcev1.ResourceClaim {
		c := free(name)
		c.ResourceVersion = version
		c.Status.Allocation = dratest.AllocatedClaim("ns", name, "node-a", devices...).Status.Allocation
		return c
	}
	var r dra.Reader
	var w draWatch
	w.readAll()
	last, err := readDRAChanges(&r, &w, m)
	if err != nil {
		t.Fatal(err)
	}
	gpu := func(d *dra.Reading, name string) string {
		return d.HeldBy(dra.DeviceID{Driver: "gpu.nvidia.com", Pool: "node-a", Device: name})
	}
	step := func(what string, held map[string]string) {
		t.Helper()
		d, err := readDRAChanges(&r, &w, m)
		if err != nil {
			t.Fatal(err)
		}
		if changed, same := d.ChangedNodes(last); !same || !slices.Equal(changed, []string{"node-a"}) {
			t.Errorf("%s: changed %v (same devices %v), want node-a", what, changed, same)
		}
		for device, want := range held {
			if got := gpu(d, device); got != want {
				t.Errorf("%s: %s held by %q, want %q", what, device, got, want)
			}
		}
		last = d
	}

	// Allocated through the API: the cache has it once the informer has.
	if _, err := client.ResourceV1().ResourceClaims("ns").UpdateStatus(ctx, allocated("a", "6", "gpu-0"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if c, err := m.ResourceClaims().Get("ns", "a"); err == nil && c.Status.Allocation != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the claims' cache never saw the allocation")
		}
	}
	w.claim("ns/a", nil, false)
	step("allocated through the API", map[string]string{"gpu-0": "ns/a"})

	// Held in memory by the scheduler, named by Reserve.
	pending := allocated("b", "5", "gpu-1")
	if err := m.ResourceClaims().SignalClaimPendingAllocation(pending.UID, pending); err != nil {
		t.Fatal(err)
	}
	w.claim("ns/b", nil, false)
	step("pending allocation", map[string]string{"gpu-0": "ns/a", "gpu-1": "ns/b"})
	m.ResourceClaims().MaybeRemoveClaimPendingAllocation(pending.UID, true)
	w.claim("ns/b", nil, false)
	step("pending allocation dropped", map[string]string{"gpu-1": ""})

	// An event newer than the cache: its object counts; a deletion the
	// cache has not seen: the claim is gone.
	w.claim("ns/a", allocated("a", "99", "gpu-2"), false)
	step("newer event", map[string]string{"gpu-0": "", "gpu-2": "ns/a"})
	w.claim("ns/a", allocated("a", "99", "gpu-2"), true)
	step("deleted", map[string]string{"gpu-0": "", "gpu-2": ""})
	if c, err := m.ResourceClaims().Get("ns", "a"); err != nil || c.Status.Allocation == nil {
		t.Fatalf("the cache changed: %v", err)
	}

	// A slice's event reads everything again: the claim is back, as the
	// cache has it.
	w.readAll()
	d, err := readDRAChanges(&r, &w, m)
	if err != nil {
		t.Fatal(err)
	}
	if gpu(d, "gpu-0") != "ns/a" {
		t.Errorf("after a full reading gpu-0 is held by %q, want ns/a", gpu(d, "gpu-0"))
	}
}
