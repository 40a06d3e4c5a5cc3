package resource

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValidateName(t *testing.T) {
	for _, ok := range []string{"cpu", "memory", "nvidia.com/gpu", "example.com/foo_bar.v2", "hugepages-2Mi",
		"nvidia.com/v100-sxm2-16gb", "kubernetes.io/batch-cpu"} {
		if err := ValidateName(ok); err != nil {
			t.Errorf("ValidateName(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "/gpu", "nvidia.com/", "Nvidia.com/gpu", "nvidia.com/*", "-cpu", "cpu-",
		"a b", "x/y/z", strings.Repeat("a", 64)} {
		if err := ValidateName(bad); err == nil {
			t.Errorf("ValidateName(%q) accepted it", bad)
		}
	}
}

func TestUnitAndScalarClassification(t *testing.T) {
	tests := []struct {
		name     string
		unit     Unit
		extended bool
		scalar   bool
	}{
		{CPU, Milli, false, false},
		{Memory, Whole, false, false},
		{EphemeralStorage, Whole, false, false},
		{Pods, Whole, false, false},
		{"nvidia.com/gpu", Milli, true, true},
		{"hugepages-1Gi", Whole, false, true},
		{"kubernetes.io/batch-cpu", Whole, false, true},
		{"attachable-volumes-csi-x", Whole, false, true},
	}
	for _, tc := range tests {
		if got := UnitOf(tc.name); got != tc.unit {
			t.Errorf("UnitOf(%q) = %v, want %v", tc.name, got, tc.unit)
		}
		if got := IsExtended(tc.name); got != tc.extended {
			t.Errorf("IsExtended(%q) = %v", tc.name, got)
		}
		if got := IsScalar(tc.name); got != tc.scalar {
			t.Errorf("IsScalar(%q) = %v", tc.name, got)
		}
	}
}

func TestSchemaResolvesNamesOnce(t *testing.T) {
	s, err := NewSchema(CPU, Memory, "nvidia.com/gpu")
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Parse(map[string]string{"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Vector{2000, 4 << 30, 1000}, v); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
	if slot, ok := s.Slot("nvidia.com/gpu"); !ok || slot != 2 {
		t.Errorf("Slot(gpu) = %d, %v", slot, ok)
	}
	if _, err := s.Parse(map[string]string{"example.com/foo": "1"}); err == nil || !strings.Contains(err.Error(), "example.com/foo") {
		t.Errorf("unknown resource: got %v", err)
	}
	if _, err := s.Parse(map[string]string{"cpu": "1Gib"}); err == nil || !strings.Contains(err.Error(), `"1Gib"`) {
		t.Errorf("bad quantity: got %v", err)
	}
}

func TestNewSchemaRejects(t *testing.T) {
	if _, err := NewSchema(CPU, CPU); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate: %v", err)
	}
	if _, err := NewSchema("nvidia.com/*"); err == nil {
		t.Error("wildcard accepted as a resource name")
	}
	many := make([]string, MaxResources+1)
	for i := range many {
		many[i] = "example.com/r" + strings.Repeat("x", i%50) + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	if _, err := NewSchema(many...); err == nil {
		t.Error("more than MaxResources accepted")
	}
}

func TestTableChecksVectors(t *testing.T) {
	s, _ := NewSchema(CPU, Memory)
	tab := NewTable(s, 2)
	if _, err := tab.Add("n0", Vector{1000, 1 << 30}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Add("short", Vector{1}, nil); err == nil {
		t.Error("short vector accepted")
	}
	if _, err := tab.Add("neg", Vector{-1, 0}, nil); err == nil || !strings.Contains(err.Error(), "cpu") {
		t.Errorf("negative amount: %v", err)
	}
	if _, err := tab.Add("huge", Vector{MaxAmount + 1, 0}, nil); err == nil {
		t.Error("amount above MaxAmount accepted")
	}
	if err := tab.SetUsed(0, Vector{500, 0}); err != nil {
		t.Fatal(err)
	}
	if err := tab.SetUsed(3, Vector{0, 0}); err == nil {
		t.Error("SetUsed out of range accepted")
	}
	if tab.Len() != 1 || tab.Used(0)[0] != 500 || tab.Allocatable(0)[1] != 1<<30 {
		t.Errorf("table content wrong: len %d used %v alloc %v", tab.Len(), tab.Used(0), tab.Allocatable(0))
	}
}

func TestPodRequestsFollowsKubernetes(t *testing.T) {
	s, _ := NewSchema(CPU, Memory, "nvidia.com/gpu")
	pod := Pod{
		Containers: []Container{
			{Requests: map[string]int64{CPU: 1000}},                        // memory unset
			{Requests: map[string]int64{CPU: 0, Memory: 0}},                // both set to zero
			{Requests: map[string]int64{"nvidia.com/gpu": 1000, CPU: 500}}, // memory unset
		},
		InitContainers: []Container{
			{Requests: map[string]int64{CPU: 4000, Memory: 1 << 30}},
			{Requests: map[string]int64{CPU: 200, Memory: 100 << 20}, Sidecar: true},
			{Requests: map[string]int64{CPU: 3000, Memory: 1 << 30}},
		},
		Overhead: map[string]int64{CPU: 50},
	}
	got, err := PodRequests(s, pod, false)
	if err != nil {
		t.Fatal(err)
	}
	// Main: cpu 1500 + sidecar 200 = 1700; memory 100Mi. Init: first 4000/1Gi,
	// third 3000+200 / 1Gi+100Mi. Max: cpu 4000, memory 1Gi+100Mi. Overhead +50m.
	if diff := cmp.Diff(Vector{4050, 1<<30 + 100<<20, 1000}, got); diff != "" {
		t.Errorf("PodRequests (-want +got):\n%s", diff)
	}
	got, err = PodRequests(s, Pod{Containers: pod.Containers}, true)
	if err != nil {
		t.Fatal(err)
	}
	// Non-zero: container 0 gets 200Mi memory, container 2 too; container 1 set zeros.
	if diff := cmp.Diff(Vector{1500, 400 << 20, 1000}, got); diff != "" {
		t.Errorf("PodRequests non-zero (-want +got):\n%s", diff)
	}
	got, err = PodRequests(s, Pod{Containers: []Container{{}}, PodLevel: map[string]int64{CPU: 2000}}, true)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Vector{2000, DefaultMemoryRequest, 0}, got); diff != "" {
		t.Errorf("PodRequests pod-level (-want +got):\n%s", diff)
	}
	if _, err := PodRequests(s, Pod{Containers: []Container{{Requests: map[string]int64{"x.io/y": 1}}}}, false); err == nil {
		t.Error("unknown resource accepted")
	}
}

func TestTableVersionChangesWithTheRow(t *testing.T) {
	s, _ := NewSchema("cpu", "memory")
	tab := NewTable(s, 2)
	tab.Add("a", Vector{4000, 1 << 30}, nil)
	tab.Add("b", Vector{4000, 1 << 30}, nil)
	tab.Add("c", Vector{8000, 2 << 30}, Vector{1000, 0})
	a, b := tab.Version(0), tab.Version(1)
	if err := tab.SetUsed(1, Vector{1000, 0}); err != nil {
		t.Fatal(err)
	}
	if err := tab.SetUsed(1, Vector{-1, 0}); err == nil {
		t.Fatal("negative used accepted")
	}
	if err := tab.SetNonZeroUsed(1, Vector{1000, 200 << 20}); err != nil {
		t.Fatal(err)
	}
	b2 := tab.Version(1)
	if tab.Version(0) != a || b2 == b {
		t.Errorf("versions %d→%d (want unchanged) and %d→%d (want changed)", a, tab.Version(0), b, b2)
	}
	if err := tab.SetAllocatable(1, Vector{2000, 1 << 30}); err != nil || tab.Version(1) == b2 || tab.Allocatable(1)[0] != 2000 {
		t.Errorf("SetAllocatable: %v, version %d", err, tab.Version(1))
	}
	// Removing a moves c into row 0, with a version row 0 never had.
	moved, err := tab.Remove(0)
	if err != nil || moved != 2 || tab.Len() != 2 || tab.Name(0) != "c" || tab.Used(0)[0] != 1000 || tab.Allocatable(0)[0] != 8000 {
		t.Fatalf("Remove(0): moved %d, %v; rows %d, row 0 %s %v", moved, err, tab.Len(), tab.Name(0), tab.Used(0))
	}
	if v := tab.Version(0); v == a || v == b2 {
		t.Errorf("the moved row kept an old version %d", v)
	}
	if _, err := tab.Remove(5); err == nil {
		t.Error("Remove out of range accepted")
	}
	if moved, err := tab.Remove(1); err != nil || moved != 1 || tab.Len() != 1 || tab.Name(0) != "c" {
		t.Errorf("Remove(last): %d, %v", moved, err)
	}
}

func TestPodRequestsChecksEverySum(t *testing.T) {
	s, _ := NewSchema(CPU, Memory)
	many := make([]Container, 2048)
	for i := range many {
		many[i] = Container{Requests: map[string]int64{CPU: MaxAmount}}
	}
	for name, pod := range map[string]Pod{
		"2048 containers of 2^53 cpu":   {Containers: many},
		"two containers just past 2^53": {Containers: []Container{{Requests: map[string]int64{CPU: MaxAmount}}, {Requests: map[string]int64{CPU: 1}}}},
		"sidecars past 2^53":            {InitContainers: []Container{{Requests: map[string]int64{Memory: MaxAmount}, Sidecar: true}, {Requests: map[string]int64{Memory: 1}, Sidecar: true}}},
		"overhead past 2^53":            {Containers: []Container{{Requests: map[string]int64{CPU: MaxAmount}}}, Overhead: map[string]int64{CPU: 1}},
	} {
		for _, rule := range []struct {
			name string
			f    func(*Schema, Pod) (Vector, error)
		}{
			{"kube", func(s *Schema, p Pod) (Vector, error) { return PodRequests(s, p, false) }},
			{"kube non-zero", func(s *Schema, p Pod) (Vector, error) { return PodRequests(s, p, true) }},
			{"koordinator", KoordinatorPodRequests},
		} {
			if v, err := rule.f(s, pod); err == nil || !strings.Contains(err.Error(), "2^53") {
				t.Errorf("%s, %s rule: got %v, %v; want an error about 2^53", name, rule.name, v, err)
			}
		}
	}
	for name, pod := range map[string]Pod{
		"negative overhead":  {Containers: []Container{{Requests: map[string]int64{CPU: 1000}}}, Overhead: map[string]int64{CPU: -500}},
		"negative pod-level": {PodLevel: map[string]int64{CPU: -1}},
		"negative request":   {InitContainers: []Container{{Requests: map[string]int64{Memory: -1}}}},
	} {
		if v, err := PodRequests(s, pod, false); err == nil || !strings.Contains(err.Error(), "outside [0, 2^53]") {
			t.Errorf("%s: got %v, %v; want an error", name, v, err)
		}
	}
}

// TestKoordinatorPodRequestsWalksInitContainersInOrder reproduces the
// scenarios of Koordinator's Test_calculatePodResourceRequest_WithSidecar
// (cpu only) and the two orders the rules disagree on.
func TestKoordinatorPodRequestsWalksInitContainersInOrder(t *testing.T) {
	s, _ := NewSchema(CPU, Memory)
	cpu := func(cores int64, sidecar bool) Container {
		return Container{Requests: map[string]int64{CPU: cores * 1000}, Sidecar: sidecar}
	}
	tests := []struct {
		name                 string
		pod                  Pod
		koordinator, kubeCPU int64
	}{
		{"containers only", Pod{Containers: []Container{cpu(2, false), cpu(3, false)}}, 5000, 5000},
		{"with regular init container (max-based)", Pod{Containers: []Container{cpu(2, false)}, InitContainers: []Container{cpu(10, false)}}, 10000, 10000},
		{"with sidecar init container (sum-based)", Pod{Containers: []Container{cpu(2, false)}, InitContainers: []Container{cpu(1, true)}}, 3000, 3000},
		{"with both sidecar and regular init containers", Pod{Containers: []Container{cpu(2, false)}, InitContainers: []Container{cpu(1, true), cpu(5, false)}}, 5000, 6000},
		{"init container before the sidecar", Pod{Containers: []Container{cpu(2, false)}, InitContainers: []Container{cpu(5, false), cpu(1, true)}}, 6000, 5000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			koord, err := KoordinatorPodRequests(s, tc.pod)
			if err != nil {
				t.Fatal(err)
			}
			kube, err := PodRequests(s, tc.pod, true)
			if err != nil {
				t.Fatal(err)
			}
			if koord[0] != tc.koordinator || kube[0] != tc.kubeCPU {
				t.Errorf("cpu: Koordinator %d, kube %d; want %d and %d", koord[0], kube[0], tc.koordinator, tc.kubeCPU)
			}
		})
	}
	// Non-zero defaults apply to every container, init ones included, and
	// pod-level requests are not read; overhead is added.
	got, err := KoordinatorPodRequests(s, Pod{
		Containers:     []Container{{}},
		InitContainers: []Container{{Requests: map[string]int64{CPU: 50}}},
		PodLevel:       map[string]int64{CPU: 8000},
		Overhead:       map[string]int64{CPU: 250},
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Vector{DefaultMilliCPURequest + 250, DefaultMemoryRequest}, got); diff != "" {
		t.Errorf("defaults, pod level, overhead (-want +got):\n%s", diff)
	}
}

func TestNewTableMisuse(t *testing.T) {
	s, _ := NewSchema(CPU)
	if tab := NewTable(s, -1); tab.Len() != 0 {
		t.Errorf("negative capacity: %d rows", tab.Len())
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "nil schema") {
			t.Errorf("NewTable(nil) recovered %v, want a panic naming the nil schema", r)
		}
	}()
	NewTable(nil, 1)
}
