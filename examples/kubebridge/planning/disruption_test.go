package planning

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
)

// owned is a pod of a ReplicaSet (kind) of its own name.
func owned(p *v1.Pod, kind string) *v1.Pod {
	yes := true
	p.OwnerReferences = []metav1.OwnerReference{{Kind: kind, Name: p.Name + "-owner", Controller: &yes}}
	return p
}

// Each reason a pod may not move, and a pod that may.
func TestMovable(t *testing.T) {
	now := metav1.Now()
	cases := map[string]struct {
		pod  *v1.Pod
		want string
	}{
		"a ReplicaSet's": {owned(kubetest.Pod("web", "a"), "ReplicaSet"), ""},
		"kube-system": {func() *v1.Pod {
			p := owned(kubetest.Pod("dns", "a"), "ReplicaSet")
			p.Namespace = "kube-system"
			return p
		}(), "system-critical or in kube-system"},
		"critical": {func() *v1.Pod {
			p := owned(kubetest.Pod("agent", "a"), "ReplicaSet")
			p.Spec.PriorityClassName = "system-node-critical"
			return p
		}(), "system-critical or in kube-system"},
		"not safe to evict": {func() *v1.Pod {
			p := owned(kubetest.Pod("db", "a"), "StatefulSet")
			p.Annotations = map[string]string{SafeToEvictAnnotation: "false"}
			return p
		}(), `annotated cluster-autoscaler.kubernetes.io/safe-to-evict: "false"`},
		"static": {func() *v1.Pod {
			p := owned(kubetest.Pod("etcd", "a"), "Node")
			p.Annotations = map[string]string{mirrorAnnotation: "abc"}
			return p
		}(), "a static pod"},
		"bare":      {kubetest.Pod("lonely", "a"), "no controller to recreate it"},
		"daemonset": {owned(kubetest.Pod("logs", "a"), "DaemonSet"), "a DaemonSet's pod"},
		"shared claim": {func() *v1.Pod {
			p := owned(kubetest.Pod("train", "a"), "Job")
			template := "gpus"
			p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "own", ResourceClaimTemplateName: &template}, {Name: "gpus", ResourceClaimName: &template}}
			return p
		}(), "it shares a DRA resource claim"},
		"claims of its own": {func() *v1.Pod {
			p := owned(kubetest.Pod("train", "a"), "Job")
			template := "gpus"
			p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpus", ResourceClaimTemplateName: &template}}
			return p
		}(), ""},
		"deleted": {func() *v1.Pod {
			p := owned(kubetest.Pod("old", "a"), "ReplicaSet")
			p.DeletionTimestamp = &now
			return p
		}(), "finished or being deleted"},
	}
	for name, c := range cases {
		ok, why := Movable(c.pod)
		if ok != (c.want == "") || why != c.want {
			t.Errorf("%s: %v %q, want %q", name, ok, why, c.want)
		}
		if !ok && unmovableReasons[why] == "" {
			t.Errorf("%s: %q has no stable identifier (UnmovableCounts)", name, why)
		}
	}
}

func budget(name, namespace string, allowed int32, selector *metav1.LabelSelector) *policyv1.PodDisruptionBudget {
	one := intstr.FromInt32(1)
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Generation: 2},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: selector},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed, ObservedGeneration: 2},
	}
}

// Budgets cover the pods of their namespace their selector matches (an
// empty selector all of them, a missing one none); a pod two budgets
// cover is told apart; a budget its controller has not observed allows
// nothing; a bad selector or a negative allowance is an error naming the
// budget and field.
func TestReadDisruptions(t *testing.T) {
	web := func(name, namespace string) *v1.Pod {
		p := kubetest.Pod(name, "a")
		p.Namespace, p.Labels = namespace, map[string]string{"app": "web"}
		return p
	}
	pods := []*v1.Pod{web("web-1", "default"), web("web-2", "default"), web("web-1", "other"), kubetest.Pod("db-0", "a")}
	app := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	stale := budget("stale", "other", 3, app)
	stale.Status.ObservedGeneration = 1
	d, err := ReadDisruptions([]*policyv1.PodDisruptionBudget{
		budget("web", "default", 1, app), budget("all", "default", 0, &metav1.LabelSelector{}), budget("none", "default", 5, nil), stale,
	}, pods)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(d.Budget, d.Allowed, d.Several)
	want := "map[default/db-0:default/all default/web-1:default/web default/web-2:default/web other/web-1:other/stale] " +
		"map[default/all:0 default/none:5 default/web:1 other/stale:0] " +
		"map[default/web-1:[default/all default/web] default/web-2:[default/all default/web]]"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	bad := budget("bad", "default", 1, &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}})
	for _, c := range []struct {
		pdb  *policyv1.PodDisruptionBudget
		want string
	}{
		{bad, "PodDisruptionBudget default/bad: spec.selector: "},
		{budget("neg", "default", -1, app), "PodDisruptionBudget default/neg: status.disruptionsAllowed is -1"},
	} {
		if _, err := ReadDisruptions([]*policyv1.PodDisruptionBudget{c.pdb}, pods); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v", c.pdb.Name, err)
		}
	}
}
