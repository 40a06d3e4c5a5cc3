// Package resfitctl is what kubectl-resfit does, importable: read a cluster
// (a live one through client-go, or a snapshot file of `kubectl get
// nodes,pods -A -o json`, with the DRA objects when the cluster has them),
// then validate a scheduler configuration, explain
// how it scores a pod on every node, or place pending pods under one or
// more configurations and compare the outcomes. It never changes the
// cluster. Every error is one line that says what to fix.
package resfitctl

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/resfit/resfit/examples/internal/words"
	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/dra"
)

// Snapshot is the objects of a cluster a command works on, read at once
// (a snapshot file, ReadSnapshot, or the live cluster, Live): the nodes and
// pods, and the cluster's Dynamic Resource Allocation objects (none when
// it has none).
type Snapshot struct {
	Nodes     []*v1.Node
	Pods      []*v1.Pod
	Slices    []*resourcev1.ResourceSlice
	Classes   []*resourcev1.DeviceClass
	Claims    []*resourcev1.ResourceClaim
	Templates []*resourcev1.ResourceClaimTemplate
	// Budgets are the cluster's PodDisruptionBudgets, which defrag's moves
	// keep (a snapshot's, or listed by ListBudgets).
	Budgets []*policyv1.PodDisruptionBudget
	// Source says where the cluster was read from, for messages.
	Source string
	// Warnings say what could not be read (DRA objects a user may not
	// list), for every command's output.
	Warnings []string
	// Now is the time the pods' ends are read as at (when a node is
	// expected to empty, for a configuration that reads it); zero for the
	// time each command runs.
	Now time.Time
}

// now is Now, or the time it is called when Now is zero.
func (c *Snapshot) now() time.Time {
	if c.Now.IsZero() {
		return time.Now()
	}
	return c.Now
}

// SnapshotCommand is the command that takes a snapshot ReadSnapshot reads.
const SnapshotCommand = "kubectl get nodes,pods,resourceslices.resource.k8s.io,resourceclaims.resource.k8s.io,resourceclaimtemplates.resource.k8s.io,deviceclasses.resource.k8s.io -A -o json"

// dra reads the cluster's DRA objects by the host layer's rules
// (dra.Read); nil when there are no device classes or slices.
func (c *Snapshot) dra() (*dra.Reading, error) {
	if len(c.Slices) == 0 && len(c.Classes) == 0 {
		return nil, nil
	}
	d, err := dra.Read(dra.Objects{Slices: c.Slices, Classes: c.Classes, Claims: c.Claims, Templates: c.Templates, Nodes: c.Nodes})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", c.Source, firstLine(err))
	}
	return d, nil
}

// Live reads the nodes and pods of a running cluster, and its DRA objects
// where it serves resource.k8s.io/v1. It only lists (nodes, pods,
// resourceslices, deviceclasses, resourceclaims, resourceclaimtemplates):
// a user who may not list the DRA objects gets a warning that the
// cluster's DRA devices are left out.
func Live(ctx context.Context, cs kubernetes.Interface, source string) (*Snapshot, error) {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing nodes of %s: %v", source, firstLine(err))
	}
	pods, err := cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing pods of %s: %v", source, firstLine(err))
	}
	c := &Snapshot{Source: source}
	for i := range nodes.Items {
		c.Nodes = append(c.Nodes, &nodes.Items[i])
	}
	for i := range pods.Items {
		c.Pods = append(c.Pods, &pods.Items[i])
	}
	if len(c.Nodes) == 0 {
		return nil, fmt.Errorf("%s has no nodes", source)
	}
	if err := c.listDRA(ctx, cs); err != nil {
		return nil, err
	}
	c.sort()
	return c, nil
}

// listDRA lists the cluster's DRA objects. A cluster that does not serve
// resource.k8s.io/v1 has none; one the user may not list them in gets a
// warning, and none.
func (c *Snapshot) listDRA(ctx context.Context, cs kubernetes.Interface) error {
	r := cs.ResourceV1()
	skip := func(what string, err error) (bool, error) {
		switch {
		case err == nil:
			return false, nil
		case apierrors.IsNotFound(err):
			return true, nil // resource.k8s.io/v1 not served
		case apierrors.IsForbidden(err):
			c.Warnings = append(c.Warnings, fmt.Sprintf("may not list %s (resource.k8s.io) in %s: its DRA devices are left out; grant list on resourceslices, deviceclasses, resourceclaims and resourceclaimtemplates", what, c.Source))
			c.Slices, c.Classes, c.Claims, c.Templates = nil, nil, nil, nil
			return true, nil
		}
		return true, fmt.Errorf("listing %s of %s: %v", what, c.Source, firstLine(err))
	}
	slices, err := r.ResourceSlices().List(ctx, metav1.ListOptions{})
	if stop, err := skip("resourceslices", err); stop {
		return err
	}
	classes, err := r.DeviceClasses().List(ctx, metav1.ListOptions{})
	if stop, err := skip("deviceclasses", err); stop {
		return err
	}
	claims, err := r.ResourceClaims(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if stop, err := skip("resourceclaims", err); stop {
		return err
	}
	templates, err := r.ResourceClaimTemplates(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if stop, err := skip("resourceclaimtemplates", err); stop {
		return err
	}
	o := dra.ObjectsFromLists(slices, classes, claims, templates)
	c.Slices, c.Classes, c.Claims, c.Templates = o.Slices, o.Classes, o.Claims, o.Templates
	return nil
}

// ListBudgets lists the cluster's PodDisruptionBudgets (list only). A user
// who may not list them gets a warning that the moves planned may be ones
// an eviction would refuse.
func (c *Snapshot) ListBudgets(ctx context.Context, cs kubernetes.Interface) error {
	list, err := cs.PolicyV1().PodDisruptionBudgets(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsForbidden(err):
		c.Warnings = append(c.Warnings, fmt.Sprintf("may not list poddisruptionbudgets (policy) in %s: the moves planned keep no disruption budget, and an eviction may refuse one; grant list on poddisruptionbudgets", c.Source))
		return nil
	case err != nil:
		return fmt.Errorf("listing poddisruptionbudgets of %s: %v", c.Source, firstLine(err))
	}
	c.Budgets = nil
	for i := range list.Items {
		c.Budgets = append(c.Budgets, &list.Items[i])
	}
	return nil
}

// sort orders nodes by name and pods by namespace and name, so that every
// command's answer is the same for the same objects, however listed.
func (c *Snapshot) sort() {
	slices.SortFunc(c.Nodes, func(a, b *v1.Node) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(c.Pods, func(a, b *v1.Pod) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
}

// FindPod finds a pod by "namespace/name", or by name in namespace; the
// error of a pod not found says to check the name and the namespace (a
// command that reads pod files adds its own flag).
func (c *Snapshot) FindPod(ref, namespace string) (*v1.Pod, error) {
	ns, name := namespace, ref
	if before, after, ok := strings.Cut(ref, "/"); ok {
		ns, name = before, after
	}
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	for _, p := range c.Pods {
		if p.Namespace == ns && p.Name == name {
			return p, nil
		}
	}
	return nil, fmt.Errorf("pod %s/%s is not in %s (%s); check the name and the namespace (-n)", ns, name, c.Source, words.Plural(len(c.Pods), "pod"))
}

// FindGroup finds the pending pods of a pod group, by "namespace/name" or
// by name in namespace: the pods whose group (kubebridge.PodGroup:
// spec.schedulingGroup, Volcano's annotation or the coscheduling label)
// it is. A group without pending pods is an error.
func (c *Snapshot) FindGroup(ref, namespace string) ([]*v1.Pod, error) {
	ns, name := namespace, ref
	if before, after, ok := strings.Cut(ref, "/"); ok {
		ns, name = before, after
	}
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	var pods []*v1.Pod
	members := 0
	for _, p := range c.Pods {
		if kubebridge.PodGroup(p) != ns+"/"+name {
			continue
		}
		members++
		if p.Spec.NodeName == "" && p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed {
			pods = append(pods, p)
		}
	}
	if len(pods) == 0 {
		return nil, fmt.Errorf("pod group %s/%s has no pending pods in %s (%s of it); pods join a group by spec.schedulingGroup.podGroupName, the annotation scheduling.k8s.io/group-name or the label scheduling.x-k8s.io/pod-group", ns, name, c.Source, words.Plural(members, "pod"))
	}
	return pods, nil
}

// podError is the first line of an error about a pod, without the "pod
// namespace/name: " it may start with, for a message that names the pod.
func podError(pod string, err error) string {
	return strings.TrimPrefix(firstLine(err), "pod "+pod+": ")
}

// firstLine keeps an error message to one line.
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
