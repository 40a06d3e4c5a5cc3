package planning

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/scoring/conformance"
)

// SafeToEvictAnnotation set to "false" on a pod says it must not be
// evicted (the cluster autoscaler's annotation, which the descheduler and
// other tools honour too).
const SafeToEvictAnnotation = "cluster-autoscaler.kubernetes.io/safe-to-evict"

// mirrorAnnotation marks the API's copy of a static pod.
const mirrorAnnotation = "kubernetes.io/config.mirror"

// Movable reports whether a placed pod may be moved (evicted, to be
// recreated by its controller and scheduled again), and why not:
//   - it is system-critical or in kube-system (scoring/conformance, the
//     rule Volcano's conformance plugin keeps);
//   - it is marked not safe to evict (SafeToEvictAnnotation "false");
//   - it is a static pod's mirror, or a DaemonSet's pod (it would come back
//     to the same node), or has no controller to recreate it;
//   - it holds a DRA resource claim it shares (spec.resourceClaims naming
//     a resourceClaimName): the claim stays allocated where it is, and
//     its replacement would use the same devices. A claim made from a
//     ResourceClaimTemplate is the pod's own: Kubernetes' resourceclaim
//     controller frees it when the pod is gone, and makes its
//     replacement a new one, which the scheduler allocates where the
//     replacement goes;
//   - it is finished or being deleted.
func Movable(pod *v1.Pod) (bool, string) {
	owner := controllerOf(pod)
	switch {
	case kubebridge.Finished(pod) || pod.DeletionTimestamp != nil:
		return false, "finished or being deleted"
	case !conformance.Evictable(conformance.Pod{Namespace: pod.Namespace, PriorityClassName: pod.Spec.PriorityClassName}):
		return false, "system-critical or in kube-system"
	case pod.Annotations[SafeToEvictAnnotation] == "false":
		return false, "annotated " + SafeToEvictAnnotation + ": \"false\""
	case pod.Annotations[mirrorAnnotation] != "":
		return false, "a static pod"
	case owner == nil:
		return false, "no controller to recreate it"
	case owner.Kind == "DaemonSet":
		return false, "a DaemonSet's pod"
	case slices.ContainsFunc(pod.Spec.ResourceClaims, func(c v1.PodResourceClaim) bool { return c.ResourceClaimTemplateName == nil }):
		return false, "it shares a DRA resource claim"
	}
	return true, ""
}

// Disruptions are what a cluster's PodDisruptionBudgets allow
// (ReadDisruptions): the budget that covers each pod, by "namespace/name",
// and the disruptions each budget allows now.
type Disruptions struct {
	// Budget is each covered pod's budget, by the pod's namespace/name.
	Budget map[string]string
	// Allowed is each budget's status.disruptionsAllowed; 0 for a budget
	// its controller has not yet observed (status.observedGeneration
	// behind metadata.generation), which the eviction API refuses to use.
	Allowed map[string]int
	// Several are the pods more than one budget covers, which the eviction
	// API will not evict: each with its budgets' names.
	Several map[string][]string
}

// ReadDisruptions reads PodDisruptionBudgets against the pods: a budget
// covers the pods of its namespace its selector matches (an empty selector
// every pod there, none without a selector). A selector that does not
// parse or a negative disruptionsAllowed is an error naming the budget and
// the field.
func ReadDisruptions(budgets []*policyv1.PodDisruptionBudget, pods []*v1.Pod) (Disruptions, error) {
	d := Disruptions{Budget: map[string]string{}, Allowed: map[string]int{}, Several: map[string][]string{}}
	for _, b := range budgets {
		name := b.Namespace + "/" + b.Name
		if b.Status.DisruptionsAllowed < 0 {
			return Disruptions{}, fmt.Errorf("PodDisruptionBudget %s: status.disruptionsAllowed is %d, below 0", name, b.Status.DisruptionsAllowed)
		}
		d.Allowed[name] = int(b.Status.DisruptionsAllowed)
		if b.Status.ObservedGeneration < b.Generation {
			d.Allowed[name] = 0
		}
		if b.Spec.Selector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
		if err != nil {
			return Disruptions{}, fmt.Errorf("PodDisruptionBudget %s: spec.selector: %v", name, err)
		}
		for _, p := range pods {
			if p.Namespace != b.Namespace || !sel.Matches(labels.Set(p.Labels)) {
				continue
			}
			key := p.Namespace + "/" + p.Name
			if first, covered := d.Budget[key]; covered {
				if len(d.Several[key]) == 0 {
					d.Several[key] = []string{first}
				}
				d.Several[key] = append(d.Several[key], name)
				continue
			}
			d.Budget[key] = name
		}
	}
	for key, names := range d.Several {
		slices.Sort(names)
		d.Several[key] = names
	}
	return d, nil
}
