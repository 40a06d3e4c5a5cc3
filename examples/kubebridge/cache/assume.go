package cache

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/dra"
)

// Assume counts a pod on a node before its binding is seen, as
// kube-scheduler's cache assumes a pod it has chosen a node for: the pod
// (pending, or not known to the cache) uses the node's resources and
// devices from now on, until an event for the pod replaces it or Forget
// takes it back. The pod is not changed; the cache holds a copy bound
// to the node. A pod the cache holds as bound, or already assumed, a
// finished pod and a node it does not know are errors.
func (s *Cache) Assume(p *v1.Pod, node string) error {
	if _, ok := s.nodes[node]; !ok {
		return fmt.Errorf("assuming pod %s/%s: node %s is not in the cache", p.Namespace, p.Name, node)
	}
	if kubebridge.Finished(p) {
		return fmt.Errorf("assuming pod %s/%s: it has finished", p.Namespace, p.Name)
	}
	e := &podEntry{pod: p.DeepCopy(), assumed: true}
	e.pod.Spec.NodeName = node
	if old, ok := s.pods[kubebridge.PodKey(p)]; ok {
		switch {
		case old.assumed:
			return fmt.Errorf("assuming pod %s/%s: it is assumed on %s already", p.Namespace, p.Name, old.pod.Spec.NodeName)
		case old.pod.Spec.NodeName != "":
			return fmt.Errorf("assuming pod %s/%s: it is bound to %s", p.Namespace, p.Name, old.pod.Spec.NodeName)
		}
		e.before = old.pod
	}
	if err := s.replacePod(e); err != nil {
		return err
	}
	if s.dra == nil || len(p.Spec.ResourceClaims) == 0 {
		return nil
	}
	after, err := s.dra.Allocate(e.pod, node)
	if err == nil {
		e.claims = s.dra.ChangeTo(after)
		err = s.SetDRA(after)
	}
	if err != nil {
		if again := s.Forget(p); again != nil {
			return fmt.Errorf("assuming pod %s/%s: %w (and forgetting it: %v)", p.Namespace, p.Name, err, again)
		}
		return fmt.Errorf("assuming pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}

// Forget takes back an assumed pod (Assume): the cache holds the pod as
// it was before, or no longer holds it when it did not then. A pod that is
// not assumed is an error.
func (s *Cache) Forget(p *v1.Pod) error {
	e, ok := s.pods[kubebridge.PodKey(p)]
	if !ok || !e.assumed {
		return fmt.Errorf("forgetting pod %s/%s: it is not assumed", p.Namespace, p.Name)
	}
	if !e.claims.Empty() {
		if err := s.SetDRA(s.dra.Undo(e.claims)); err != nil {
			return err
		}
		e.claims = dra.Change{}
	}
	if e.before != nil {
		return s.AddPod(e.before)
	}
	return s.DeletePod(e.pod)
}
