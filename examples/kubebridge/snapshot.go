package kubebridge

import (
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/resource"
)

// Snapshot is a cluster as resfit scores it, kept up to date from node and
// pod events: a resource.Table with a row per node (allocatable; used, the
// plain requests of the pods that count on it, with the "pods" slot their
// number; non-zero used, whose cpu and memory add kube-scheduler's
// non-zero defaults, as NodeInfo's NonZeroRequested does), and the pods
// that wait for a node.
//
// An event changes only the rows it touches: a pod's requests are added to
// or taken from its node's row; a node's allocatable replaces its row's; a
// deleted node's row is refilled by the last row (resource.Table.Remove).
// A pod bound to a node the snapshot does not know yet counts once the node
// arrives, as in kube-scheduler's cache. When an event brings a resource
// name the schema lacks, the snapshot builds a new schema and table
// (SchemaChanges counts these; a pipeline built for the old schema must be
// rebuilt).
//
// A Snapshot is stateful and not safe for concurrent use: informer
// handlers run on several goroutines, so serialise events and scoring
// (one mutex); Table's result is valid until the next event.
type Snapshot struct {
	schema  *resource.Schema
	table   *resource.Table
	changes int
	names   map[string]string // resource name → an object that has it

	order []string       // node names by row
	rows  map[string]int // node name → row
	nodes map[string]*v1.Node
	pods  map[string]*podEntry
	bound map[string]map[string]*podEntry // node name → its counted pods, known node or not

	scratch, scratchNZ resource.Vector
}

type podEntry struct {
	pod *v1.Pod
	// plain and nonZero are the pod's requests in the current schema; set
	// for a counted pod.
	plain, nonZero resource.Vector
}

// NewSnapshot builds a snapshot of the nodes and pods (bound and pending;
// finished pods are kept but use nothing).
func NewSnapshot(nodes []*v1.Node, pods []*v1.Pod) (*Snapshot, error) {
	s := &Snapshot{
		names: map[string]string{},
		rows:  map[string]int{},
		nodes: map[string]*v1.Node{},
		pods:  map[string]*podEntry{},
		bound: map[string]map[string]*podEntry{},
	}
	for _, n := range nodes {
		if _, dup := s.nodes[n.Name]; dup {
			return nil, fmt.Errorf("node %s appears twice", n.Name)
		}
		if _, err := s.learn(nodeResourceNames(n), "node "+n.Name); err != nil {
			return nil, err
		}
		s.nodes[n.Name] = n
		s.order = append(s.order, n.Name)
	}
	for _, p := range pods {
		key := podKey(p)
		if _, dup := s.pods[key]; dup {
			return nil, fmt.Errorf("pod %s/%s appears twice", p.Namespace, p.Name)
		}
		if _, err := s.learn(ResourceNames(p), "pod "+p.Namespace+"/"+p.Name); err != nil {
			return nil, err
		}
		s.pods[key] = &podEntry{pod: p}
	}
	if err := s.rebuild(); err != nil {
		return nil, err
	}
	return s, nil
}

// Schema is the schema of Table.
func (s *Snapshot) Schema() *resource.Schema { return s.schema }

// Table is the cluster's table; it is replaced when the schema changes.
func (s *Snapshot) Table() *resource.Table { return s.table }

// SchemaChanges counts the times a new resource name made the snapshot
// build a new schema and table since NewSnapshot.
func (s *Snapshot) SchemaChanges() int { return s.changes }

// Row returns a node's row in Table.
func (s *Snapshot) Row(node string) (int, bool) {
	r, ok := s.rows[node]
	return r, ok
}

// Node returns a node by name, or nil.
func (s *Snapshot) Node(name string) *v1.Node { return s.nodes[name] }

// Pod returns the snapshot's pod by namespace and name, or nil.
func (s *Snapshot) Pod(namespace, name string) *v1.Pod {
	for _, e := range s.pods {
		if e.pod.Namespace == namespace && e.pod.Name == name {
			return e.pod
		}
	}
	return nil
}

// Pending returns the pods without a node (and not finished), by namespace
// and name.
func (s *Snapshot) Pending() []*v1.Pod {
	var out []*v1.Pod
	for _, e := range s.pods {
		if e.pod.Spec.NodeName == "" && !Finished(e.pod) {
			out = append(out, e.pod)
		}
	}
	slices.SortFunc(out, func(a, b *v1.Pod) int {
		if a.Namespace != b.Namespace {
			if a.Namespace < b.Namespace {
				return -1
			}
			return 1
		}
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}

// learn records the resource names an object brings and returns the new
// ones. A name Kubernetes would not accept is an error, and then nothing is
// recorded.
func (s *Snapshot) learn(names []string, owner string) ([]string, error) {
	var added []string
	for _, name := range names {
		if _, ok := s.names[name]; ok || slices.Contains(added, name) {
			continue
		}
		if err := resource.ValidateName(name); err != nil {
			return nil, fmt.Errorf("%s: %w", owner, err)
		}
		added = append(added, name)
	}
	for _, name := range added {
		s.names[name] = owner
	}
	return added, nil
}

func nodeResourceNames(n *v1.Node) []string {
	names := make([]string, 0, len(n.Status.Allocatable))
	for name := range n.Status.Allocatable {
		names = append(names, string(name))
	}
	slices.Sort(names)
	return names
}

// rebuild makes the schema and table from scratch, keeping the rows'
// order.
func (s *Snapshot) rebuild() error {
	schema, err := schemaOf(s.names)
	if err != nil {
		return err
	}
	table := resource.NewTable(schema, len(s.order))
	rows := make(map[string]int, len(s.order))
	for _, name := range s.order {
		alloc, err := Allocatable(schema, s.nodes[name])
		if err != nil {
			return err
		}
		r, err := table.Add(name, alloc, nil)
		if err != nil {
			return err
		}
		rows[name] = r
	}
	// Work out every counted pod's requests before changing anything, so
	// that a failure leaves the snapshot as it was.
	requests := map[*podEntry]Requests{}
	for _, key := range slices.Sorted(maps.Keys(s.pods)) {
		e := s.pods[key]
		if !Counts(e.pod) {
			continue
		}
		r, err := RequestsOf(schema, e.pod)
		if err != nil {
			return err
		}
		requests[e] = r
	}
	bound := map[string]map[string]*podEntry{}
	for key, e := range s.pods {
		r, counted := requests[e]
		e.plain, e.nonZero = r.Plain, r.NonZero
		if !counted {
			continue
		}
		node := e.pod.Spec.NodeName
		if bound[node] == nil {
			bound[node] = map[string]*podEntry{}
		}
		bound[node][key] = e
	}
	// From here a failure leaves derived state half made; grow rebuilds
	// again without the change, and NewSnapshot returns no snapshot.
	s.schema, s.table, s.rows, s.bound = schema, table, rows, bound
	s.scratch, s.scratchNZ = make(resource.Vector, schema.Len()), make(resource.Vector, schema.Len())
	for name, pods := range bound {
		if row, ok := rows[name]; ok {
			for _, e := range pods {
				if err := s.account(row, e, +1); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// account adds (sign +1) or takes away (−1) a counted pod's requests on a
// row, or changes nothing and reports why.
func (s *Snapshot) account(row int, e *podEntry, sign int64) error {
	used, nonZero := s.scratch, s.scratchNZ
	copy(used, s.table.Used(row))
	copy(nonZero, s.table.NonZeroUsed(row))
	for i := range used {
		used[i] += sign * e.plain[i]
		nonZero[i] += sign * e.plain[i]
	}
	for _, name := range [...]string{resource.CPU, resource.Memory} {
		i, _ := s.schema.Slot(name)
		nonZero[i] += sign * (e.nonZero[i] - e.plain[i])
	}
	pods, _ := s.schema.Slot(resource.Pods)
	used[pods] += sign
	nonZero[pods] += sign
	if err := s.schema.Check(used); err != nil {
		return fmt.Errorf("node %s used: %w", s.table.Name(row), err)
	}
	if err := s.schema.Check(nonZero); err != nil {
		return fmt.Errorf("node %s non-zero used: %w", s.table.Name(row), err)
	}
	if err := s.table.SetUsed(row, used); err != nil {
		return err
	}
	return s.table.SetNonZeroUsed(row, nonZero)
}

// AddNode adds a node, or replaces the node of that name (an update).
func (s *Snapshot) AddNode(n *v1.Node) error {
	added, err := s.learn(nodeResourceNames(n), "node "+n.Name)
	if err != nil {
		return err
	}
	if added != nil {
		old, known := s.nodes[n.Name]
		order := slices.Clone(s.order)
		return s.grow(added, func() { s.putNode(n) }, func() {
			s.order = order
			if known {
				s.nodes[n.Name] = old
			} else {
				delete(s.nodes, n.Name)
			}
		})
	}
	alloc, err := Allocatable(s.schema, n)
	if err != nil {
		return err
	}
	if row, ok := s.rows[n.Name]; ok {
		s.nodes[n.Name] = n
		return s.table.SetAllocatable(row, alloc)
	}
	row, err := s.table.Add(n.Name, alloc, nil)
	if err != nil {
		return err
	}
	s.putNode(n)
	s.rows[n.Name] = row
	for _, e := range s.bound[n.Name] {
		if err := s.account(row, e, +1); err != nil {
			return err
		}
	}
	return nil
}

// UpdateNode is AddNode.
func (s *Snapshot) UpdateNode(n *v1.Node) error { return s.AddNode(n) }

func (s *Snapshot) putNode(n *v1.Node) {
	if _, known := s.nodes[n.Name]; !known {
		s.order = append(s.order, n.Name)
	}
	s.nodes[n.Name] = n
}

// DeleteNode removes a node's row; its pods stay, and count again if the
// node comes back.
func (s *Snapshot) DeleteNode(name string) error {
	row, ok := s.rows[name]
	if !ok {
		return fmt.Errorf("node %s is not in the snapshot", name)
	}
	moved, err := s.table.Remove(row)
	if err != nil {
		return err
	}
	delete(s.rows, name)
	delete(s.nodes, name)
	last := len(s.order) - 1
	if moved != row {
		s.order[row] = s.order[last]
		s.rows[s.order[row]] = row
	}
	s.order = s.order[:last]
	return nil
}

// AddPod adds a pod, or replaces the pod with its key (its UID, else its
// namespace and name): an update, a binding, a finish.
func (s *Snapshot) AddPod(p *v1.Pod) error {
	key := podKey(p)
	added, err := s.learn(ResourceNames(p), "pod "+p.Namespace+"/"+p.Name)
	if err != nil {
		return err
	}
	if added != nil {
		old, known := s.pods[key]
		return s.grow(added, func() { s.pods[key] = &podEntry{pod: p} }, func() {
			if known {
				s.pods[key] = old
			} else {
				delete(s.pods, key)
			}
		})
	}
	next := &podEntry{pod: p}
	if Counts(p) {
		r, err := RequestsOf(s.schema, p)
		if err != nil {
			return err
		}
		next.plain, next.nonZero = r.Plain, r.NonZero
	}
	old, known := s.pods[key]
	if err := s.unbind(key); err != nil {
		return err
	}
	s.pods[key] = next
	if err := s.bind(key, next); err != nil {
		// Put the pod back as it was: it fitted before.
		delete(s.pods, key)
		if known {
			s.pods[key] = old
			if again := s.bind(key, old); again != nil {
				return fmt.Errorf("%w (and restoring the pod's old version: %v)", err, again)
			}
		}
		return err
	}
	return nil
}

// bind adds a counted pod's requests to its node.
func (s *Snapshot) bind(key string, e *podEntry) error {
	if e.plain == nil {
		return nil
	}
	node := e.pod.Spec.NodeName
	if row, ok := s.rows[node]; ok {
		if err := s.account(row, e, +1); err != nil {
			return err
		}
	}
	if s.bound[node] == nil {
		s.bound[node] = map[string]*podEntry{}
	}
	s.bound[node][key] = e
	return nil
}

// UpdatePod is AddPod.
func (s *Snapshot) UpdatePod(p *v1.Pod) error { return s.AddPod(p) }

// DeletePod removes a pod (by its key, as AddPod).
func (s *Snapshot) DeletePod(p *v1.Pod) error {
	key := podKey(p)
	if _, ok := s.pods[key]; !ok {
		return fmt.Errorf("pod %s/%s is not in the snapshot", p.Namespace, p.Name)
	}
	if err := s.unbind(key); err != nil {
		return err
	}
	delete(s.pods, key)
	return nil
}

// unbind takes a known pod's requests off its node.
func (s *Snapshot) unbind(key string) error {
	old, ok := s.pods[key]
	if !ok || old.plain == nil {
		return nil
	}
	node := old.pod.Spec.NodeName
	if row, ok := s.rows[node]; ok {
		if err := s.account(row, old, -1); err != nil {
			return err
		}
	}
	delete(s.bound[node], key)
	if len(s.bound[node]) == 0 {
		delete(s.bound, node)
	}
	return nil
}

// grow applies a change that brings new resource names and rebuilds; when
// the rebuild fails, it undoes the change and forgets the names.
func (s *Snapshot) grow(added []string, apply, undo func()) error {
	apply()
	if err := s.rebuild(); err != nil {
		undo()
		for _, name := range added {
			delete(s.names, name)
		}
		if again := s.rebuild(); again != nil {
			return fmt.Errorf("%w (and rebuilding without the change: %v)", err, again)
		}
		return err
	}
	s.changes++
	return nil
}

// Model returns a node's GPU model (resource.NodeModel of its labels), ""
// when it is not known or there is no such node.
func (s *Snapshot) Model(node string) string {
	if n := s.nodes[node]; n != nil {
		return resource.NodeModel(n.Labels)
	}
	return ""
}

// Models returns the GPU models of the snapshot's nodes, sorted, each
// once: what TaskOptions.Models resolves pods' annotations among.
func (s *Snapshot) Models() []string {
	models := make([]string, 0, len(s.nodes))
	for _, n := range s.nodes {
		models = append(models, resource.NodeModel(n.Labels))
	}
	return resource.DistinctModels(models)
}

// Devices builds a device view of the named device resource (such as
// nvidia.com/gpu) with Table's rows: a node has as many devices of 1000
// milli-units as it has of the resource allocatable (at most
// resource.MaxDevicesPerNode), of its GPU model (Model), and the pods that
// count on it take theirs, tightest first (TaskOptions.Devices reads what
// a pod asks of devices), in the order of their names. Kubernetes objects
// do not say which device a pod holds, so the view is what a placement in
// that order leaves; a pod that no longer fits is left out. Build it again
// after events: it is not kept up to date.
func (s *Snapshot) Devices(device string) (*resource.Devices, error) {
	devices, err := resource.NewDevices(device, 1000)
	if err != nil {
		return nil, err
	}
	slot, hasSlot := s.schema.Slot(device)
	for row, name := range s.order {
		count := int64(0)
		if hasSlot {
			count = s.table.Allocatable(row)[slot] / 1000
		}
		if _, err := devices.AddNode(int(min(count, resource.MaxDevicesPerNode))); err != nil {
			return nil, err
		}
		if err := devices.SetModel(row, s.Model(name)); err != nil {
			return nil, err
		}
		keys := slices.Sorted(maps.Keys(s.bound[name]))
		for _, key := range keys {
			e := s.bound[name][key]
			if e.plain == nil { // a pod that does not count
				continue
			}
			if r := deviceRequest(e.pod, device); r.Count > 0 && devices.Fits(row, r) {
				if _, err := devices.Allocate(row, r); err != nil {
					return nil, err
				}
			}
		}
	}
	return devices, nil
}
