package resfitctl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resfit/resfit/examples/internal/words"
	"github.com/resfit/resfit/examples/kubebridge"
)

// ReadSnapshot reads a snapshot file: the output of
//
//	kubectl get nodes,pods -A -o json
//
// or, for a cluster with Dynamic Resource Allocation, SnapshotCommand's
// (a v1 List; YAML, and a NodeList or PodList, are read too). Items of
// other kinds, unknown fields and objects without names are errors, as is
// a snapshot without nodes. A pod's requests are read as the API server
// defaults them (kubebridge.DefaultRequests), as a cluster lists them; a
// snapshot written by hand may give a GPU in limits alone.
func ReadSnapshot(path string) (*Snapshot, error) {
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
func ParseSnapshot(data []byte) (*Snapshot, error) {
	var list snapshotList
	if err := decodeJSONOrYAML(data, &list); err != nil {
		return nil, err
	}
	if !strings.HasSuffix(list.Kind, "List") {
		return nil, fmt.Errorf("a %s, not a List of nodes and pods; make it with kubectl get nodes,pods -A -o json", kindOrNothing(list.Kind))
	}
	c := &Snapshot{}
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
		// read decodes the item's spec and status (nil: it has none) into
		// its object, which keep then keeps.
		read := func(spec, status any, keep func()) error {
			if err := item.decode(spec, status); err != nil {
				return fmt.Errorf("items[%d] (%s %s): %v", i, kind, object, err)
			}
			keep()
			return nil
		}
		var err error
		switch kind {
		case "Node":
			n := &v1.Node{TypeMeta: item.TypeMeta, ObjectMeta: item.ObjectMeta}
			err = read(&n.Spec, &n.Status, func() { c.Nodes = append(c.Nodes, n) })
		case "Pod":
			p := &v1.Pod{TypeMeta: item.TypeMeta, ObjectMeta: item.ObjectMeta}
			err = read(&p.Spec, &p.Status, func() { c.Pods = append(c.Pods, kubebridge.DefaultRequests(p)) })
		case "ResourceSlice":
			o := &resourcev1.ResourceSlice{TypeMeta: item.TypeMeta, ObjectMeta: item.ObjectMeta}
			err = read(&o.Spec, nil, func() { c.Slices = append(c.Slices, o) })
		case "DeviceClass":
			o := &resourcev1.DeviceClass{TypeMeta: item.TypeMeta, ObjectMeta: item.ObjectMeta}
			err = read(&o.Spec, nil, func() { c.Classes = append(c.Classes, o) })
		case "ResourceClaim":
			o := &resourcev1.ResourceClaim{TypeMeta: item.TypeMeta, ObjectMeta: item.ObjectMeta}
			err = read(&o.Spec, &o.Status, func() { c.Claims = append(c.Claims, o) })
		case "PodDisruptionBudget":
			o := &policyv1.PodDisruptionBudget{TypeMeta: item.TypeMeta, ObjectMeta: item.ObjectMeta}
			err = read(&o.Spec, &o.Status, func() { c.Budgets = append(c.Budgets, o) })
		case "ResourceClaimTemplate":
			o := &resourcev1.ResourceClaimTemplate{TypeMeta: item.TypeMeta, ObjectMeta: item.ObjectMeta}
			err = read(&o.Spec, nil, func() { c.Templates = append(c.Templates, o) })
		default:
			return nil, fmt.Errorf("items[%d] (%s): kind %q is not one a snapshot holds (%s); make it with kubectl get nodes,pods -A -o json", i, object, kind, strings.Join(snapshotKinds, ", "))
		}
		if err != nil {
			return nil, err
		}
	}
	if len(c.Nodes) == 0 {
		return nil, fmt.Errorf("no nodes in it (%s); make it with kubectl get nodes,pods -A -o json", words.Plural(len(list.Items), "item"))
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
	js, err := yamlToJSON(data)
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
