package conformance

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// Volcano's TestConformancePlugin, case "conformance plugin": of a pod in
// kube-system and one in test-namespace, only the second is a victim.
func TestConformancePlugin(t *testing.T) {
	candidates := []Pod{{Namespace: "kube-system"}, {Namespace: "test-namespace"}}
	if got := Victims(candidates); !slices.Equal(got, []int{1}) {
		t.Errorf("victims %v, want [1]", got)
	}
}

func TestEvictable(t *testing.T) {
	tests := []struct {
		pod  Pod
		want bool
	}{
		{Pod{Namespace: "default"}, true},
		{Pod{Namespace: "kube-system"}, false},
		{Pod{Namespace: "kube-system", PriorityClassName: "low"}, false},
		{Pod{Namespace: "default", PriorityClassName: "system-cluster-critical"}, false},
		{Pod{Namespace: "default", PriorityClassName: "system-node-critical"}, false},
		{Pod{Namespace: "default", PriorityClassName: "high"}, true},
		// Names are compared exactly, as Kubernetes does.
		{Pod{Namespace: "Kube-System"}, true},
		{Pod{Namespace: "team", PriorityClassName: "System-Node-Critical"}, true},
	}
	for _, tc := range tests {
		if got := Evictable(tc.pod); got != tc.want {
			t.Errorf("Evictable(%+v) = %v, want %v", tc.pod, got, tc.want)
		}
	}
}

// Victims keeps exactly the evictable candidates, in order.
func TestVictimsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pods := rapid.SliceOf(rapid.Custom(func(t *rapid.T) Pod {
			return Pod{
				Namespace:         rapid.SampledFrom([]string{"default", "kube-system", "team"}).Draw(t, "namespace"),
				PriorityClassName: rapid.SampledFrom([]string{"", "high", SystemClusterCritical, SystemNodeCritical}).Draw(t, "class"),
			}
		})).Draw(t, "pods")
		got := Victims(pods)
		if got == nil {
			t.Fatal("nil victims")
		}
		var want []int
		for i, p := range pods {
			if p.Namespace != NamespaceSystem && p.PriorityClassName != SystemClusterCritical && p.PriorityClassName != SystemNodeCritical {
				want = append(want, i)
			}
		}
		if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("victims %v, want %v", got, want)
		}
	})
}

func ExampleVictims() {
	candidates := []Pod{
		{Namespace: "kube-system", PriorityClassName: "system-node-critical"}, // kube-proxy
		{Namespace: "ml", PriorityClassName: "batch-low"},
		{Namespace: "monitoring", PriorityClassName: "system-cluster-critical"},
		{Namespace: "ml"},
	}
	fmt.Println(Victims(candidates))
	// Output: [1 3]
}
