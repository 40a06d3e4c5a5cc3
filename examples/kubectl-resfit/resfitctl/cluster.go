// Package resfitctl is what kubectl-resfit does, importable: read a cluster
// (a live one through client-go, or a snapshot file of `kubectl get
// nodes,pods -A -o json`, with the DRA objects when the cluster has them),
// then validate a scheduler configuration, explain
// how it scores a pod on every node, or place pending pods under one or
// more configurations and compare the outcomes. It never changes the
// cluster. Every error is one line that says what to fix.
package resfitctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/resfit/resfit/examples/kubebridge"
)

// Cluster is the nodes and pods a command works on, and the cluster's
// Dynamic Resource Allocation objects (none when it has none).
type Cluster struct {
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
}

// SnapshotCommand is the command that takes a snapshot ReadSnapshot reads.
const SnapshotCommand = "kubectl get nodes,pods,resourceslices.resource.k8s.io,resourceclaims.resource.k8s.io,resourceclaimtemplates.resource.k8s.io,deviceclasses.resource.k8s.io -A -o json"

// dra reads the cluster's DRA objects by the host layer's rules
// (kubebridge.ReadDRA); nil when there are no device classes or slices.
func (c *Cluster) dra() (*kubebridge.DRA, error) {
	if len(c.Slices) == 0 && len(c.Classes) == 0 {
		return nil, nil
	}
	d, err := kubebridge.ReadDRA(kubebridge.DRAObjects{Slices: c.Slices, Classes: c.Classes, Claims: c.Claims, Templates: c.Templates})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", c.Source, firstLine(err))
	}
	return d, nil
}

// ReadSnapshot reads a snapshot file: the output of
//
//	kubectl get nodes,pods -A -o json
//
// or, for a cluster with Dynamic Resource Allocation, SnapshotCommand's
// (a v1 List; YAML, and a NodeList or PodList, are read too). Items of
// other kinds, unknown fields and objects without names are errors, as is
// a snapshot without nodes.
func ReadSnapshot(path string) (*Cluster, error) {
	data, err := kubebridge.ReadFile(path, kubebridge.MaxSnapshotBytes)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("snapshot %s does not exist; make one with: kubectl get nodes,pods -A -o json > %s", path, path)
		}
		return nil, fmt.Errorf("snapshot %s: %v", path, err)
	}
	c, err := ParseSnapshot(data)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %v", path, err)
	}
	c.Source = "snapshot " + path
	return c, nil
}

// ParseSnapshot reads a snapshot's content (see ReadSnapshot).
func ParseSnapshot(data []byte) (*Cluster, error) {
	var list snapshotList
	if err := decodeJSONOrYAML(data, &list); err != nil {
		return nil, err
	}
	if !strings.HasSuffix(list.Kind, "List") {
		return nil, fmt.Errorf("a %s, not a List of nodes and pods; make it with kubectl get nodes,pods -A -o json", kindOrNothing(list.Kind))
	}
	c := &Cluster{}
	for i := range list.Items {
		item := &list.Items[i]
		kind := item.Kind
		if kind == "" { // a NodeList's or PodList's items carry no kind
			kind = strings.TrimSuffix(list.Kind, "List")
		}
		if item.Name == "" {
			return nil, fmt.Errorf("items[%d] (a %s): metadata.name: Required value", i, kindOrNothing(kind))
		}
		if item.Namespace == "" && namespaced[kind] {
			return nil, fmt.Errorf("items[%d] (%s %s): metadata.namespace: Required value", i, kind, item.Name)
		}
		object := item.Name
		if item.Namespace != "" {
			object = item.Namespace + "/" + item.Name
		}
		switch kind {
		case "Node":
			n := &v1.Node{TypeMeta: item.TypeMeta, ObjectMeta: item.ObjectMeta}
			if err := item.decode(&n.Spec, &n.Status); err != nil {
				return nil, fmt.Errorf("items[%d] (Node %s): %v", i, object, err)
			}
			c.Nodes = append(c.Nodes, n)
		case "Pod":
			p := &v1.Pod{TypeMeta: item.TypeMeta, ObjectMeta: item.ObjectMeta}
			if err := item.decode(&p.Spec, &p.Status); err != nil {
				return nil, fmt.Errorf("items[%d] (Pod %s): %v", i, object, err)
			}
			c.Pods = append(c.Pods, p)
		case "ResourceSlice":
			o := &resourcev1.ResourceSlice{TypeMeta: item.TypeMeta, ObjectMeta: item.ObjectMeta}
			if err := item.decode(&o.Spec, nil); err != nil {
				return nil, fmt.Errorf("items[%d] (ResourceSlice %s): %v", i, object, err)
			}
			c.Slices = append(c.Slices, o)
		case "DeviceClass":
			o := &resourcev1.DeviceClass{TypeMeta: item.TypeMeta, ObjectMeta: item.ObjectMeta}
			if err := item.decode(&o.Spec, nil); err != nil {
				return nil, fmt.Errorf("items[%d] (DeviceClass %s): %v", i, object, err)
			}
			c.Classes = append(c.Classes, o)
		case "ResourceClaim":
			o := &resourcev1.ResourceClaim{TypeMeta: item.TypeMeta, ObjectMeta: item.ObjectMeta}
			if err := item.decode(&o.Spec, &o.Status); err != nil {
				return nil, fmt.Errorf("items[%d] (ResourceClaim %s): %v", i, object, err)
			}
			c.Claims = append(c.Claims, o)
		case "PodDisruptionBudget":
			o := &policyv1.PodDisruptionBudget{TypeMeta: item.TypeMeta, ObjectMeta: item.ObjectMeta}
			if err := item.decode(&o.Spec, &o.Status); err != nil {
				return nil, fmt.Errorf("items[%d] (PodDisruptionBudget %s): %v", i, object, err)
			}
			c.Budgets = append(c.Budgets, o)
		case "ResourceClaimTemplate":
			o := &resourcev1.ResourceClaimTemplate{TypeMeta: item.TypeMeta, ObjectMeta: item.ObjectMeta}
			if err := item.decode(&o.Spec, nil); err != nil {
				return nil, fmt.Errorf("items[%d] (ResourceClaimTemplate %s): %v", i, object, err)
			}
			c.Templates = append(c.Templates, o)
		default:
			return nil, fmt.Errorf("items[%d] (%s): kind %q is not one a snapshot holds (%s); make it with kubectl get nodes,pods -A -o json", i, object, kind, strings.Join(snapshotKinds, ", "))
		}
	}
	if len(c.Nodes) == 0 {
		return nil, fmt.Errorf("no nodes in it (%s); make it with kubectl get nodes,pods -A -o json", plural(len(list.Items), "item"))
	}
	c.sort()
	return c, nil
}

// snapshotKinds are the kinds a snapshot's items may be, and namespaced
// those of them that live in a namespace.
var (
	snapshotKinds = []string{"Node", "Pod", "ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "PodDisruptionBudget"}
	namespaced    = map[string]bool{"Pod": true, "ResourceClaim": true, "ResourceClaimTemplate": true, "PodDisruptionBudget": true}
)

// snapshotList is a List whose items are decoded once into what every
// object has (kind, metadata) and its spec and status kept raw, to be
// decoded by kind: a snapshot of 25,000 objects reads in a third of the
// time that decoding each item twice takes.
type snapshotList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []snapshotItem `json:"items"`
}

type snapshotItem struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              json.RawMessage `json:"spec"`
	Status            json.RawMessage `json:"status"`
}

func (it *snapshotItem) decode(spec, status any) error {
	part := func(js []byte, v any, name string) error {
		err := strictUnmarshal(js, v, name)
		var fields *strictFields
		if err != nil && !errors.As(err, &fields) {
			return fmt.Errorf("%s: %v", name, err)
		}
		return err
	}
	if len(it.Spec) > 0 {
		if err := part(it.Spec, spec, "spec"); err != nil {
			return err
		}
	}
	if len(it.Status) > 0 {
		if status == nil {
			return errors.New(`unknown field "status"`)
		}
		if err := part(it.Status, status, "status"); err != nil {
			return err
		}
	}
	return nil
}

// decodeJSONOrYAML decodes a snapshot: JSON as it is (reading it as YAML
// takes ten times as long on a large one), else YAML converted.
func decodeJSONOrYAML(data []byte, list *snapshotList) error {
	trimmed := bytes.TrimSpace(data)
	var jsonErr error // the file starts as JSON but is not
	if len(trimmed) > 0 && trimmed[0] == '{' {
		err := strictList(data, list)
		if err == nil {
			return nil
		}
		var syntax *json.SyntaxError
		if !errors.As(json.Unmarshal(data, new(any)), &syntax) { // where it is not JSON, if it is not
			return err
		}
		line, col := lineColumn(data, syntax.Offset-1) // the byte read last
		jsonErr = fmt.Errorf("not valid JSON: line %d, column %d (byte %d of %d): %v; make it with kubectl get nodes,pods -A -o json", line, col, syntax.Offset, len(data), syntax)
		*list = snapshotList{} // a YAML flow mapping, perhaps
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil && jsonErr != nil {
		return jsonErr
	}
	if err != nil {
		return fmt.Errorf("not JSON or YAML (%v); make it with kubectl get nodes,pods -A -o json", firstLine(err))
	}
	return strictList(js, list)
}

// strictList decodes a snapshot's JSON strictly (strictUnmarshal): a key
// a List, an item or its metadata does not have is an error naming it.
// Fields of a document that is not a List are not looked at: that it is
// not one is the error (ParseSnapshot's).
func strictList(js []byte, list *snapshotList) error {
	err := strictUnmarshal(js, list, "")
	var fields *strictFields
	if err == nil || (errors.As(err, &fields) && !strings.HasSuffix(list.Kind, "List")) {
		return nil
	}
	return fmt.Errorf("not a List of nodes and pods (%v); make it with kubectl get nodes,pods -A -o json", err)
}

// lineColumn is where the byte at an offset lies in data: its line and
// column, both from 1 (the column counting bytes).
func lineColumn(data []byte, offset int64) (line, col int) {
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	return line, len(before) - (bytes.LastIndexByte(before, '\n') + 1) + 1
}

// Live reads the nodes and pods of a running cluster, and its DRA objects
// where it serves resource.k8s.io/v1. It only lists (nodes, pods,
// resourceslices, deviceclasses, resourceclaims, resourceclaimtemplates):
// a user who may not list the DRA objects gets a warning that the
// cluster's DRA devices are left out.
func Live(ctx context.Context, cs kubernetes.Interface, source string) (*Cluster, error) {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing nodes of %s: %v", source, firstLine(err))
	}
	pods, err := cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing pods of %s: %v", source, firstLine(err))
	}
	c := &Cluster{Source: source}
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
func (c *Cluster) listDRA(ctx context.Context, cs kubernetes.Interface) error {
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
	o := kubebridge.DRAObjectsFromLists(slices, classes, claims, templates)
	c.Slices, c.Classes, c.Claims, c.Templates = o.Slices, o.Classes, o.Claims, o.Templates
	return nil
}

// ListBudgets lists the cluster's PodDisruptionBudgets (list only). A user
// who may not list them gets a warning that the moves planned may be ones
// an eviction would refuse.
func (c *Cluster) ListBudgets(ctx context.Context, cs kubernetes.Interface) error {
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
func (c *Cluster) sort() {
	slices.SortFunc(c.Nodes, func(a, b *v1.Node) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(c.Pods, func(a, b *v1.Pod) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
}

// FindPod finds a pod by "namespace/name", or by name in namespace.
func (c *Cluster) FindPod(ref, namespace string) (*v1.Pod, error) {
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
	return nil, fmt.Errorf("pod %s/%s is not in %s (%s); check the name and the namespace (-n), or give the pod's manifest with -f", ns, name, c.Source, plural(len(c.Pods), "pod"))
}

// FindGroup finds the pending pods of a pod group, by "namespace/name" or
// by name in namespace: the pods whose group (kubebridge.PodGroup:
// spec.schedulingGroup, Volcano's annotation or the coscheduling label)
// it is. A group without pending pods is an error.
func (c *Cluster) FindGroup(ref, namespace string) ([]*v1.Pod, error) {
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
		return nil, fmt.Errorf("pod group %s/%s has no pending pods in %s (%s of it); pods join a group by spec.schedulingGroup.podGroupName, the annotation scheduling.k8s.io/group-name or the label scheduling.x-k8s.io/pod-group", ns, name, c.Source, plural(members, "pod"))
	}
	return pods, nil
}

// ReadPods reads pod manifests from a YAML or JSON file: one pod, several
// documents, or a List. The documents are read as kubectl reads them
// (apimachinery's YAML-or-JSON decoder); an error names the document.
func ReadPods(path string) ([]*v1.Pod, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("pod file: %v", err)
	}
	defer f.Close()
	r, err := kubebridge.LimitedReader("pod file "+path, f, kubebridge.MaxPodFileBytes)
	if err != nil {
		return nil, err
	}
	decoder := kyaml.NewYAMLOrJSONDecoder(r, 4096)
	var pods []*v1.Pod
	for i := 1; ; i++ {
		var doc json.RawMessage
		if err := decoder.Decode(&doc); err == io.EOF {
			break
		} else if tooLarge := r.Exceeded(); tooLarge != nil {
			return nil, tooLarge
		} else if err != nil {
			return nil, fmt.Errorf("pod file %s, document %d: not JSON or YAML (%v)", path, i, firstLine(err))
		}
		got, err := podsOf(doc)
		if err != nil {
			return nil, fmt.Errorf("pod file %s, document %d%v", path, i, err)
		}
		pods = append(pods, got...)
	}
	if len(pods) == 0 {
		return nil, fmt.Errorf("pod file %s holds no pods", path)
	}
	seen := map[string]bool{}
	for _, p := range pods {
		key := p.Namespace + "/" + p.Name
		if seen[key] {
			return nil, fmt.Errorf("pod file %s: pod %s appears twice; a pod's namespace and name are its own", path, key)
		}
		seen[key] = true
	}
	return pods, nil
}

// podsOf reads one document: a pod, a List of pods, or nothing. An error
// starts with the place in the document (", items[1]") and a colon.
func podsOf(doc json.RawMessage) ([]*v1.Pod, error) {
	if len(doc) == 0 || string(doc) == "null" {
		return nil, nil
	}
	var meta metav1.TypeMeta
	if err := json.Unmarshal(doc, &meta); err != nil {
		return nil, fmt.Errorf(": %v", firstLine(err))
	}
	if !strings.HasSuffix(meta.Kind, "List") {
		p, err := readPod(doc)
		if err != nil {
			return nil, fmt.Errorf(": %v", err)
		}
		return []*v1.Pod{p}, nil
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(doc, &list); err != nil {
		return nil, fmt.Errorf(": %v", firstLine(err))
	}
	var pods []*v1.Pod
	for j, item := range list.Items {
		p, err := readPod(item)
		if err != nil {
			return nil, fmt.Errorf(", items[%d]: %v", j, err)
		}
		pods = append(pods, p)
	}
	return pods, nil
}

// readPod reads one pod manifest (JSON); a pod without a namespace is in
// the default one.
func readPod(js []byte) (*v1.Pod, error) {
	var meta metav1.TypeMeta
	if err := json.Unmarshal(js, &meta); err != nil {
		return nil, errors.New(firstLine(err))
	}
	if meta.Kind != "Pod" && meta.Kind != "" {
		return nil, fmt.Errorf("a %s, not a Pod", meta.Kind)
	}
	p := &v1.Pod{}
	if err := strictUnmarshal(js, p, ""); err != nil {
		return nil, err
	}
	// What resfit refuses of its requests (a quantity past what it counts,
	// a fraction of an extended resource), as written in the file.
	if _, err := kubebridge.PodOf(p); err != nil {
		return nil, asWritten(err, js)
	}
	if p.Namespace == "" {
		p.Namespace = metav1.NamespaceDefault
	}
	return p, nil
}

func kindOrNothing(kind string) string {
	if kind == "" {
		return "document without kind"
	}
	return kind
}

// strictUnmarshal decodes JSON as the API server decodes what kubectl
// sends with strict field validation (sigs.k8s.io/json, as apimachinery's
// strict decoder): a field the type does not have, or one given twice, is
// an error naming the field by its path, prefixed by where (the first
// three, and how many more).
func strictUnmarshal(js []byte, v any, where string) error {
	strict, err := kjson.UnmarshalStrict(js, v, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		if path, value, ok := badQuantity(js, where); ok {
			return &strictFields{fmt.Sprintf("%s: %q is not a quantity (such as 500m, 2, 1.5Gi, 64Mi)", path, value)}
		}
		return errors.New(firstLine(err))
	}
	if len(strict) == 0 {
		return nil
	}
	var msgs []string
	for i, e := range strict {
		if i == 3 {
			msgs = append(msgs, fmt.Sprintf("and %d more", len(strict)-3))
			break
		}
		msg := e.Error()
		if where != "" {
			msg = strings.Replace(msg, `field "`, `field "`+where+".", 1)
		}
		msgs = append(msgs, msg)
	}
	return &strictFields{strings.Join(msgs, "; ")}
}

// asWritten is an error about a pod's quantity (kubebridge.PodOf's: "pod
// ns/p: spec.containers[0].resources.requests[nvidia.com/gpu]: quantity
// "500m": ...") with the quantity as the document writes it ("0.5"), and
// without the pod's name, which the document's place says.
func asWritten(err error, js []byte) error {
	msg := err.Error()
	if _, rest, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, "pod ") {
		msg = rest
	}
	path, rest, ok := strings.Cut(msg, ": quantity ")
	if !ok {
		return errors.New(msg)
	}
	var doc any
	if json.Unmarshal(js, &doc) != nil {
		return errors.New(msg)
	}
	v := doc
	for _, part := range pathParts(path) {
		switch x := v.(type) {
		case map[string]any:
			v = x[part]
		case []any:
			var i int
			if _, err := fmt.Sscan(part, &i); err != nil || i < 0 || i >= len(x) {
				return errors.New(msg)
			}
			v = x[i]
		default:
			return errors.New(msg)
		}
	}
	if _, reason, ok := strings.Cut(rest, ": "); ok && v != nil {
		return fmt.Errorf("%s: quantity %q: %s", path, fmt.Sprint(v), reason)
	}
	return errors.New(msg)
}

// pathParts splits a field path (spec.containers[0].resources.requests[
// nvidia.com/gpu]) into its fields, indices and keys; a key in brackets
// may hold dots.
func pathParts(path string) []string {
	var parts []string
	for path != "" {
		switch path[0] {
		case '.':
			path = path[1:]
		case '[':
			key, rest, _ := strings.Cut(path[1:], "]")
			parts, path = append(parts, key), rest
		default:
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			parts, path = append(parts, path[:end]), path[end:]
		}
	}
	return parts
}

// badQuantity finds, in a document that did not decode, the first string
// under a field of quantities (resources' requests and limits, a node's
// capacity and allocatable, a pod's overhead) that is not a quantity: its
// path (from where) and what it holds, as written. apimachinery's message
// gives neither, only the regular expression.
func badQuantity(js []byte, where string) (path, value string, ok bool) {
	var doc any
	if json.Unmarshal(js, &doc) != nil {
		return "", "", false
	}
	quantities := map[string]bool{"requests": true, "limits": true, "capacity": true, "allocatable": true, "overhead": true}
	var walk func(v any, path string, inQuantities bool) bool
	walk = func(v any, at string, inQuantities bool) bool {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				sub := at + "." + k
				if inQuantities {
					sub = at + "[" + k + "]"
				}
				if s, isString := x[k].(string); inQuantities && isString {
					if _, err := kres.ParseQuantity(s); err != nil {
						path, value = strings.TrimPrefix(sub, "."), s
						return true
					}
					continue
				}
				if walk(x[k], sub, !inQuantities && quantities[k]) {
					return true
				}
			}
		case []any:
			for i, e := range x {
				if walk(e, fmt.Sprintf("%s[%d]", at, i), false) {
					return true
				}
			}
		}
		return false
	}
	start := ""
	if where != "" {
		start = "." + where
	}
	return path, value, walk(doc, start, false)
}

// strictFields is strictUnmarshal's error that names its fields by their
// paths: fields unknown or given twice (the value decoded otherwise), a
// value that is not a quantity.
type strictFields struct{ msg string }

func (e *strictFields) Error() string { return e.msg }

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
