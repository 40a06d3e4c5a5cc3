// Package conformance is the eviction guard of Volcano's conformance
// plugin: a scheduler that preempts or reclaims never evicts a pod of
// priority class system-cluster-critical or system-node-critical, or any
// pod in kube-system, whatever other plugins decide.
//
// It is a filter over candidate victims, written over plain structs: the
// caller says which pods it considers evicting, and gets back those it may.
package conformance

// The names the guard protects, as Kubernetes spells them.
const (
	SystemClusterCritical = "system-cluster-critical"
	SystemNodeCritical    = "system-node-critical"
	NamespaceSystem       = "kube-system"
)

// Pod is what the guard reads of a candidate victim.
type Pod struct {
	Namespace         string
	PriorityClassName string
}

// Evictable reports whether pod may be evicted: it is not in kube-system
// and its priority class is neither of the two system-critical ones.
func Evictable(pod Pod) bool {
	switch {
	case pod.Namespace == NamespaceSystem:
		return false
	case pod.PriorityClassName == SystemClusterCritical, pod.PriorityClassName == SystemNodeCritical:
		return false
	}
	return true
}

// Victims returns the indices of the evictable candidates, in their order,
// as Volcano's preemptable, reclaimable and evictable functions return
// the evictable tasks. It never returns nil for an empty result, so a
// caller can range over it or compare its length alike.
func Victims(candidates []Pod) []int {
	victims := make([]int, 0, len(candidates))
	for i, pod := range candidates {
		if Evictable(pod) {
			victims = append(victims, i)
		}
	}
	return victims
}
