package kubebridge

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/resource"
)

// Snapshot is a cluster as resfit scores it, kept up to date from node and
// pod events as kube-scheduler's cache is: a resource.Table with a row per
// node (allocatable; used, the plain requests of the pods that count on
// it, with the "pods" slot their number; non-zero used, whose cpu and
// memory add kube-scheduler's non-zero defaults, as NodeInfo's
// NonZeroRequested does), a device view of the device resource with each
// node's model, and the pods, found by key or by namespace and name.
//
// An event changes only the rows it touches: a pod's requests are added to
// or taken from its node's row, and its devices taken from or given back to
// the node's, tightest first (Kubernetes objects do not say which device a
// pod holds, so the view is what placing the pods in the order of their
// events leaves; a pod whose devices do not fit holds none); a node's
// allocatable replaces its row's; a deleted node's row is refilled by the
// last row (resource.Table.Remove). A pod bound to a node the snapshot does
// not know yet counts once the node arrives, as in kube-scheduler's cache.
// Assume counts a pod on a node before its binding is seen, as
// kube-scheduler's AssumePod, and Forget takes it back.
//
// When an event brings a resource name the schema lacks, the snapshot
// builds a new schema, table and device view (SchemaChanges counts these;
// a pipeline built for the old schema must be rebuilt); the view then
// places each node's pods in the order of their namespaces and names, as
// NewSnapshot does.
//
// A Snapshot is stateful and not safe for concurrent use: informer
// handlers run on several goroutines, so serialise events and scoring
// (one mutex); Table's and Devices' results are valid until the next
// event.
type Snapshot struct {
	schema  *resource.Schema
	table   *resource.Table
	writer  *RowWriter
	device  string
	devices *resource.Devices
	dra     *DRA
	changes int
	names   map[string]string // resource name → an object that has it

	order []string       // node names by row
	rows  map[string]int // node name → row
	nodes map[string]*v1.Node
	// nodeDevs is what each known node says of its devices.
	nodeDevs map[string]nodeDevices
	pods     map[string]*podEntry            // by podKey
	byName   map[podName]string              // → podKey
	bound    map[string]map[string]*podEntry // node name → its counted pods, known node or not

	scratch resource.Vector
}

type podEntry struct {
	pod *v1.Pod
	// plain and nonZero are the pod's requests in the current schema, and
	// devices what it asks of devices; set for a counted pod.
	plain, nonZero resource.Vector
	devices        resource.DeviceRequest
	// held is what the pod holds on its node's devices.
	held Held
	// assumed says Assume made this entry; before is the pod as it was
	// then (nil: not known); claims is what allocating its DRA claims
	// changed, for Forget to give back.
	assumed bool
	before  *v1.Pod
	claims  draChange
}

// count works out what a counted pod uses: its requests in the schema and
// what it asks of the device resource, from one reading of the pod.
func (e *podEntry) count(schema *resource.Schema, device string) error {
	pod, err := PodOf(e.pod)
	if err != nil {
		return err
	}
	r, err := resource.RequestsOf(schema, pod)
	if err != nil {
		return fmt.Errorf("pod %s/%s: %w", e.pod.Namespace, e.pod.Name, err)
	}
	e.plain, e.nonZero, e.devices = r.Plain, r.NonZero, resource.DeviceRequestOf(pod, device)
	return nil
}

// Options say what a Snapshot keeps beside its table.
type Options struct {
	// Devices is the device resource whose device view the snapshot keeps;
	// empty means resource.GPU.
	Devices string
	// DRA, when not nil, is what the cluster's DRA objects say (ReadDRA):
	// the classes' resources are in the schema, each node's rows and
	// devices as DRA says where it does not report them itself (see
	// RowWriter.WithDRA, DRA.NodeDevices). SetDRA replaces it.
	DRA *DRA
}

// NewSnapshot builds a snapshot of the nodes and pods (bound and pending;
// finished pods are kept but use nothing).
func NewSnapshot(nodes []*v1.Node, pods []*v1.Pod, opts Options) (*Snapshot, error) {
	s := &Snapshot{
		device:   cmp.Or(opts.Devices, resource.GPU),
		names:    map[string]string{},
		rows:     map[string]int{},
		nodes:    map[string]*v1.Node{},
		pods:     map[string]*podEntry{},
		nodeDevs: map[string]nodeDevices{},
		byName:   map[podName]string{},
		bound:    map[string]map[string]*podEntry{},
		dra:      opts.DRA,
	}
	if err := resource.ValidateName(s.device); err != nil {
		return nil, fmt.Errorf("device resource: %w", err)
	}
	if _, err := s.learnDRA(); err != nil {
		return nil, err
	}
	for _, n := range nodes {
		if _, dup := s.nodes[n.Name]; dup {
			return nil, fmt.Errorf("node %s appears twice", n.Name)
		}
		if _, err := s.learn(nodeResourceNames(n), "node "+n.Name); err != nil {
			return nil, err
		}
		s.putNode(n)
	}
	for _, p := range pods {
		key := podKey(p)
		if _, dup := s.pods[key]; dup {
			return nil, fmt.Errorf("pod %s/%s appears twice", p.Namespace, p.Name)
		}
		if _, err := s.learn(ResourceNames(p), "pod "+p.Namespace+"/"+p.Name); err != nil {
			return nil, err
		}
		s.putPod(key, &podEntry{pod: p})
	}
	if err := s.rebuild(); err != nil {
		return nil, err
	}
	return s, nil
}

// learnDRA records the resources of DRA's device classes and returns the
// new ones; on an error it records none.
func (s *Snapshot) learnDRA() ([]string, error) {
	if s.dra == nil {
		return nil, nil
	}
	var added []string
	for _, c := range s.dra.Classes() {
		names, err := s.learn([]string{c.Resource}, "deviceclass "+c.Name)
		if err != nil {
			for _, name := range added {
				delete(s.names, name)
			}
			return nil, err
		}
		added = append(added, names...)
	}
	return added, nil
}

// DRA is what the snapshot reads of DRA (Options.DRA), nil without.
func (s *Snapshot) DRA() *DRA { return s.dra }

// SetDRA replaces what the snapshot reads of DRA, after a change to a
// ResourceSlice, DeviceClass or ResourceClaim (or a pod's claims allocated,
// as Assume does). When the classes bring no resource the schema lacks,
// every node's row and devices are written again in place (the table
// stays, and a node whose devices changed has its pods counted again);
// otherwise the schema, table and device view are built again
// (SchemaChanges counts it). nil drops DRA.
func (s *Snapshot) SetDRA(d *DRA) error {
	before := s.dra
	s.dra = d
	added, err := s.learnDRA()
	if err != nil {
		s.dra = before
		return err
	}
	if added != nil {
		return s.grow(added, s.readNodeDevices, func() {
			s.dra = before
			s.readNodeDevices()
		})
	}
	s.writer.WithDRA(d)
	for row, name := range s.order {
		n := s.nodes[name]
		alloc, err := s.writer.allocatable(n, readNodeDevices(n, s.device, d).count)
		if err != nil {
			return err
		}
		if err := s.updateNode(row, n, alloc); err != nil {
			return err
		}
	}
	return nil
}

// readNodeDevices reads again what every node says of its devices.
func (s *Snapshot) readNodeDevices() {
	for name, n := range s.nodes {
		s.nodeDevs[name] = readNodeDevices(n, s.device, s.dra)
	}
}

// Schema is the schema of Table.
func (s *Snapshot) Schema() *resource.Schema { return s.schema }

// Table is the cluster's table; it is replaced when the schema changes.
func (s *Snapshot) Table() *resource.Table { return s.table }

// Devices is the device view of the device resource (Options.Devices),
// its rows the table's: a node has as many devices of 1000 milli-units as
// it has of the resource allocatable (at most
// resource.MaxDevicesPerNode), of its GPU model (Model), and the pods that
// count on it hold theirs (scoring.TaskOptions.Devices reads what a pod
// asks of devices). It is replaced with the table.
func (s *Snapshot) Devices() *resource.Devices { return s.devices }

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
	if e := s.pods[s.byName[podName{namespace, name}]]; e != nil {
		return e.pod
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
	slices.SortFunc(out, byNamespaceAndName)
	return out
}

func byNamespaceAndName(a, b *v1.Pod) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// Model returns a node's GPU model (resource.NodeModel of its labels, or
// its DRA devices' productName when they agree on one), "" when it is not
// known or there is no such node.
func (s *Snapshot) Model(node string) string {
	if n := s.nodes[node]; n != nil {
		return s.nodeDevs[node].modelOf(n)
	}
	return ""
}

// Models returns the GPU models of the snapshot's nodes, sorted, each
// once: what scoring.TaskOptions.Models resolves pods' annotations among.
func (s *Snapshot) Models() []string {
	models := make([]string, 0, len(s.nodes))
	for name := range s.nodes {
		models = append(models, s.Model(name))
	}
	return resource.DistinctModels(models)
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

// rebuild makes the schema, table and device view from scratch, keeping
// the rows' order.
func (s *Snapshot) rebuild() error {
	schema, err := resource.SchemaOf(s.names)
	if err != nil {
		return err
	}
	writer, err := NewRowWriter(schema)
	if err != nil {
		return err
	}
	devices, err := resource.NewDevices(s.device, 1000)
	if err != nil {
		return err
	}
	writer.WithDevices(devices).WithDRA(s.dra)
	table := resource.NewTable(schema, len(s.order))
	rows := make(map[string]int, len(s.order))
	for _, name := range s.order {
		alloc, err := writer.allocatable(s.nodes[name], s.nodeDevs[name].count)
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
	counted := map[*podEntry]*podEntry{}
	for _, key := range slices.Sorted(maps.Keys(s.pods)) {
		e := s.pods[key]
		if !Counts(e.pod) {
			continue
		}
		c := &podEntry{pod: e.pod}
		if err := c.count(schema, s.device); err != nil {
			return err
		}
		counted[e] = c
	}
	bound := map[string]map[string]*podEntry{}
	for key, e := range s.pods {
		e.plain, e.nonZero, e.devices, e.held = nil, nil, resource.DeviceRequest{}, Held{}
		c, ok := counted[e]
		if !ok {
			continue
		}
		e.plain, e.nonZero, e.devices = c.plain, c.nonZero, c.devices
		node := e.pod.Spec.NodeName
		if bound[node] == nil {
			bound[node] = map[string]*podEntry{}
		}
		bound[node][key] = e
	}
	// From here a failure leaves derived state half made; grow rebuilds
	// again without the change, and NewSnapshot returns no snapshot.
	s.schema, s.table, s.writer, s.devices, s.rows, s.bound = schema, table, writer, devices, rows, bound
	s.scratch = make(resource.Vector, schema.Len())
	for row, name := range s.order {
		if err := s.addDevices(row, name); err != nil {
			return err
		}
		if err := s.countPods(name); err != nil {
			return err
		}
	}
	return nil
}

// addDevices appends a new row's devices, free (DRA's: as its claims
// hold them), of the node's model, and writes DRA's used amounts.
func (s *Snapshot) addDevices(row int, name string) error {
	if _, err := s.devices.AddNode(s.nodeDevs[name].count); err != nil {
		return err
	}
	if nd := s.nodeDevs[name]; nd.fromDRA {
		if err := writeNodeDevices(s.devices, row, s.nodes[name], nd, nil); err != nil {
			return err
		}
	}
	if err := s.devices.SetModel(row, s.Model(name)); err != nil {
		return err
	}
	return s.writeUsed(row)
}

// writeUsed writes a row's used amounts again as they are, which puts
// DRA's and the device view's in (RowWriter.SetUsed).
func (s *Snapshot) writeUsed(row int) error {
	used := s.scratch
	copy(used, s.table.Used(row))
	cpu, _ := s.schema.Slot(resource.CPU)
	memory, _ := s.schema.Slot(resource.Memory)
	nonZero := s.table.NonZeroUsed(row)
	return s.writer.SetUsed(s.table, row, used, nonZero[cpu], nonZero[memory])
}

// countPods counts a node's pods on its row, whose used amounts and
// devices hold none of them: when the node has devices for them to take
// (the order decides which), in the order a host that reads a node's pods
// at once takes them (NodeDevices).
func (s *Snapshot) countPods(name string) error {
	row, ok := s.rows[name]
	if !ok {
		return nil
	}
	pods := s.bound[name]
	if len(s.devices.Free(row)) == 0 || len(pods) < 2 {
		for _, e := range pods {
			if err := s.account(row, e, +1); err != nil {
				return err
			}
		}
		return nil
	}
	entries := make(map[*v1.Pod]*podEntry, len(pods))
	for _, e := range pods {
		entries[e.pod] = e
	}
	for _, p := range s.nodeDevs[name].ordered(slices.Collect(maps.Keys(entries))) {
		if err := s.account(row, entries[p], +1); err != nil {
			return err
		}
	}
	return nil
}

// account adds (sign +1) or takes away (−1) a counted pod's requests on a
// row and its devices, or changes nothing and reports why.
func (s *Snapshot) account(row int, e *podEntry, sign int64) error {
	used := s.scratch
	copy(used, s.table.Used(row))
	for i := range used {
		if i != s.writer.device { // the device view's, below
			used[i] += sign * e.plain[i]
		}
	}
	pods, _ := s.schema.Slot(resource.Pods)
	used[pods] += sign
	cpu, _ := s.schema.Slot(resource.CPU)
	memory, _ := s.schema.Slot(resource.Memory)
	nonZero := s.table.NonZeroUsed(row)
	nonZeroCPU, nonZeroMemory := nonZero[cpu]+sign*e.nonZero[cpu], nonZero[memory]+sign*e.nonZero[memory]
	if err := s.schema.Check(used); err != nil {
		return fmt.Errorf("node %s used: %w", s.table.Name(row), err)
	}
	if nonZeroCPU < 0 || nonZeroCPU > resource.MaxAmount || nonZeroMemory < 0 || nonZeroMemory > resource.MaxAmount {
		return fmt.Errorf("node %s non-zero used: cpu %d or memory %d is outside [0, 2^53]", s.table.Name(row), nonZeroCPU, nonZeroMemory)
	}
	if sign < 0 && e.held.Holds() {
		if err := e.held.Return(s.devices, row); err != nil {
			return err
		}
		e.held = Held{}
	}
	if sign > 0 {
		held, err := s.nodeDevs[e.pod.Spec.NodeName].hold(s.devices, row, e.pod, e.devices)
		if err != nil {
			return err
		}
		e.held = held
	}
	return s.writer.SetUsed(s.table, row, used, nonZeroCPU, nonZeroMemory)
}

// AddNode adds a node, or replaces the node of that name (an update).
func (s *Snapshot) AddNode(n *v1.Node) error {
	if err := checkNode(n); err != nil {
		return err
	}
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
				s.putNode(old)
			} else {
				delete(s.nodes, n.Name)
				delete(s.nodeDevs, n.Name)
			}
		})
	}
	alloc, err := s.writer.allocatable(n, readNodeDevices(n, s.device, s.dra).count)
	if err != nil {
		return err
	}
	if row, ok := s.rows[n.Name]; ok {
		return s.updateNode(row, n, alloc)
	}
	row, err := s.table.Add(n.Name, alloc, nil)
	if err != nil {
		return err
	}
	s.putNode(n)
	s.rows[n.Name] = row
	if err := s.addDevices(row, n.Name); err != nil {
		return err
	}
	return s.countPods(n.Name)
}

// updateNode replaces a known node: its allocatable, its devices' model,
// and when its devices change (their number, or the GPUs a sharing stack
// registers), its devices, which its pods then take again.
func (s *Snapshot) updateNode(row int, n *v1.Node, alloc resource.Vector) error {
	before := s.nodeDevs[n.Name]
	s.putNode(n)
	if err := s.table.SetAllocatable(row, alloc); err != nil {
		return err
	}
	if err := s.devices.SetModel(row, s.Model(n.Name)); err != nil {
		return err
	}
	devs := s.nodeDevs[n.Name]
	if devs.same(before) {
		return s.writeUsed(row)
	}
	for _, e := range s.bound[n.Name] {
		if err := s.account(row, e, -1); err != nil {
			return err
		}
	}
	if err := writeNodeDevices(s.devices, row, n, devs, nil); err != nil && devs.err == nil {
		return err
	}
	if err := s.countPods(n.Name); err != nil {
		return err
	}
	return s.writeUsed(row)
}

// UpdateNode is AddNode.
func (s *Snapshot) UpdateNode(n *v1.Node) error { return s.AddNode(n) }

// putNode keeps a node and what it says of its devices.
func (s *Snapshot) putNode(n *v1.Node) {
	if _, known := s.nodes[n.Name]; !known {
		s.order = append(s.order, n.Name)
	}
	s.nodes[n.Name] = n
	s.nodeDevs[n.Name] = readNodeDevices(n, s.device, s.dra)
}

// DeviceErrors says, for each node whose GPU-sharing registration cannot
// be read (such a node has no devices here), why; in the order of the
// nodes' names.
func (s *Snapshot) DeviceErrors() []error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(s.nodeDevs)) {
		if err := s.nodeDevs[name].err; err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// DeleteNode removes a node's row; its pods stay, and count again if the
// node comes back.
func (s *Snapshot) DeleteNode(name string) error {
	row, ok := s.rows[name]
	if !ok {
		return fmt.Errorf("node %s is not in the snapshot", name)
	}
	if _, err := s.table.Remove(row); err != nil {
		return err
	}
	if _, err := s.devices.Remove(row); err != nil {
		return err
	}
	for _, e := range s.bound[name] {
		e.held = Held{}
	}
	delete(s.rows, name)
	delete(s.nodes, name)
	delete(s.nodeDevs, name)
	last := len(s.order) - 1
	if last != row {
		s.order[row] = s.order[last]
		s.rows[s.order[row]] = row
	}
	s.order = s.order[:last]
	return nil
}

// AddPod adds a pod, or replaces the pod with its key (its UID, else its
// namespace and name): an update, a binding, a finish. A pod that was
// assumed is the pod as its event now says.
func (s *Snapshot) AddPod(p *v1.Pod) error {
	return s.replacePod(&podEntry{pod: p})
}

// replacePod puts a pod's entry in place of the one with its key.
func (s *Snapshot) replacePod(next *podEntry) error {
	p := next.pod
	key := podKey(p)
	added, err := s.learn(ResourceNames(p), "pod "+p.Namespace+"/"+p.Name)
	if err != nil {
		return err
	}
	old, known := s.pods[key]
	if added != nil {
		return s.grow(added, func() { s.putPod(key, next) }, func() {
			s.dropPod(key)
			if known {
				s.putPod(key, old)
			}
		})
	}
	if Counts(p) {
		if err := next.count(s.schema, s.device); err != nil {
			return err
		}
	}
	if err := s.unbind(key); err != nil {
		return err
	}
	s.dropPod(key)
	s.putPod(key, next)
	if err := s.bind(key, next); err != nil {
		// Put the pod back as it was: it fitted before.
		s.dropPod(key)
		if known {
			s.putPod(key, old)
			if again := s.bind(key, old); again != nil {
				return fmt.Errorf("%w (and restoring the pod's old version: %v)", err, again)
			}
		}
		return err
	}
	return nil
}

// podName is a pod's namespace and name.
type podName struct{ namespace, name string }

func (s *Snapshot) putPod(key string, e *podEntry) {
	s.pods[key] = e
	s.byName[podName{e.pod.Namespace, e.pod.Name}] = key
}

func (s *Snapshot) dropPod(key string) {
	if e, ok := s.pods[key]; ok {
		if n := (podName{e.pod.Namespace, e.pod.Name}); s.byName[n] == key {
			delete(s.byName, n)
		}
		delete(s.pods, key)
	}
}

// bind adds a counted pod's requests and devices to its node.
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
	s.dropPod(key)
	return nil
}

// unbind takes a known pod's requests and devices off its node.
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

// Assume counts a pod on a node before its binding is seen, as
// kube-scheduler's cache assumes a pod it has chosen a node for: the pod
// (pending, or not known to the snapshot) uses the node's resources and
// devices from now on, until an event for the pod replaces it or Forget
// takes it back. The pod is not changed; the snapshot holds a copy bound
// to the node. A pod the snapshot holds as bound, or already assumed, a
// finished pod and a node it does not know are errors.
func (s *Snapshot) Assume(p *v1.Pod, node string) error {
	if _, ok := s.nodes[node]; !ok {
		return fmt.Errorf("assuming pod %s/%s: node %s is not in the snapshot", p.Namespace, p.Name, node)
	}
	if Finished(p) {
		return fmt.Errorf("assuming pod %s/%s: it has finished", p.Namespace, p.Name)
	}
	e := &podEntry{pod: p.DeepCopy(), assumed: true}
	e.pod.Spec.NodeName = node
	if old, ok := s.pods[podKey(p)]; ok {
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
		e.claims = s.dra.changeTo(after)
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

// Forget takes back an assumed pod (Assume): the snapshot holds the pod as
// it was before, or no longer holds it when it did not then. A pod that is
// not assumed is an error.
func (s *Snapshot) Forget(p *v1.Pod) error {
	e, ok := s.pods[podKey(p)]
	if !ok || !e.assumed {
		return fmt.Errorf("forgetting pod %s/%s: it is not assumed", p.Namespace, p.Name)
	}
	if !e.claims.empty() {
		if err := s.SetDRA(s.dra.undo(e.claims)); err != nil {
			return err
		}
		e.claims = draChange{}
	}
	if e.before != nil {
		return s.AddPod(e.before)
	}
	return s.DeletePod(e.pod)
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
