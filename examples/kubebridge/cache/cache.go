package cache

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/dra"
	"github.com/resfit/resfit/resource"
)

// Cache is a cluster as resfit scores it, kept up to date from node and
// pod events as kube-scheduler's cache is (and named as kube-scheduler
// names it: a Cache takes events, assumes and forgets pods; a snapshot is
// a copy that does not change): a resource.Table with a row per
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
// last row (resource.Table.Remove). A pod bound to a node the cache does
// not know yet counts once the node arrives, as in kube-scheduler's cache.
// Assume counts a pod on a node before its binding is seen, as
// kube-scheduler's AssumePod, and Forget takes it back.
//
// When an event brings a resource name the schema lacks, the cache
// builds a new schema, table and device view (SchemaChanges counts these;
// a pipeline built for the old schema must be rebuilt); the view then
// places each node's pods in the order of their namespaces and names, as
// New does.
//
// A Cache is stateful and not safe for concurrent use: informer
// handlers run on several goroutines, so serialise events and scoring
// (one mutex); Table's and Devices' results are valid until the next
// event.
type Cache struct {
	objects // what the events said (events.go, assume.go)
	dense   // what is scored, worked out from them (rows.go)
	device  string
	dra     *dra.Reading
	changes int
}

// objects are the Kubernetes objects a Cache knows, as the events
// delivered them (kube-scheduler's cache's side): the nodes and pods, the
// pods that count on each node, what each node says of its devices, and
// the resource names they bring. The events change them first; the dense
// rows follow.
type objects struct {
	names map[string]string // resource name → an object that has it
	order []string          // node names by row
	nodes map[string]*v1.Node
	// nodeDevs is what each known node says of its devices.
	nodeDevs map[string]kubebridge.DeviceReading
	pods     map[string]*podEntry            // by podKey
	byName   map[podName]string              // → podKey
	bound    map[string]map[string]*podEntry // node name → its counted pods, known node or not
}

// dense is what a Cache's objects come to as resfit scores them: the
// schema, the table with a row per node (rows finds
// it), the device view, and the writer that puts a node into its row.
// An event changes the rows it touches (rows.go); a new resource
// name builds them again (rows.go: rebuild).
type dense struct {
	schema  *resource.Schema
	table   *resource.Table
	writer  *kubebridge.RowWriter
	devices *resource.Devices
	rows    map[string]int // node name → row
	scratch resource.Vector
}

type podEntry struct {
	pod *v1.Pod
	// plain and nonZero are the pod's requests in the current schema, and
	// devices what it asks of devices; set for a counted pod.
	plain, nonZero resource.Vector
	devices        resource.DeviceRequest
	// held is what the pod holds on its node's devices.
	held kubebridge.Held
	// assumed says Assume made this entry; before is the pod as it was
	// then (nil: not known); claims is what allocating its DRA claims
	// changed, for Forget to give back.
	assumed bool
	before  *v1.Pod
	claims  dra.Change
}

// count works out what a counted pod uses: its requests in the schema and
// what it asks of the device resource, from one reading of the pod.
func (e *podEntry) count(schema *resource.Schema, device string) error {
	pod, err := kubebridge.PodOf(e.pod)
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

// Options say what a Cache keeps beside its table.
type Options struct {
	// Devices is the device resource whose device view the cache keeps;
	// empty means resource.GPU.
	Devices string
	// DRA, when not nil, is what the cluster's DRA objects say (dra.Read):
	// the classes' resources are in the schema, each node's rows and
	// devices as DRA says where it does not report them itself (see
	// kubebridge.RowWriter.WithDRA, kubebridge.NodeDevices). SetDRA replaces it.
	DRA *dra.Reading
}

// New builds a cache of the nodes and pods (bound and pending;
// finished pods are kept but use nothing).
func New(nodes []*v1.Node, pods []*v1.Pod, opts Options) (*Cache, error) {
	s := &Cache{
		device: cmp.Or(opts.Devices, resource.GPU),
		dra:    opts.DRA,
		objects: objects{
			names:    map[string]string{},
			nodes:    map[string]*v1.Node{},
			pods:     map[string]*podEntry{},
			nodeDevs: map[string]kubebridge.DeviceReading{},
			byName:   map[podName]string{},
			bound:    map[string]map[string]*podEntry{},
		},
		dense: dense{rows: map[string]int{}},
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
		s.putNode(n, s.readDevices(n))
	}
	for _, p := range pods {
		key := kubebridge.PodKey(p)
		if _, dup := s.pods[key]; dup {
			return nil, fmt.Errorf("pod %s/%s appears twice", p.Namespace, p.Name)
		}
		if _, err := s.learn(kubebridge.ResourceNames(p), "pod "+p.Namespace+"/"+p.Name); err != nil {
			return nil, err
		}
		s.putPod(key, &podEntry{pod: p})
	}
	if err := s.rebuild(); err != nil {
		return nil, err
	}
	return s, nil
}

// DRA is what the cache reads of DRA (Options.DRA), nil without.
func (s *Cache) DRA() *dra.Reading { return s.dra }

// Schema is the schema of Table.
func (s *Cache) Schema() *resource.Schema { return s.schema }

// Table is the cluster's table; it is replaced when the schema changes.
func (s *Cache) Table() *resource.Table { return s.table }

// Devices is the device view of the device resource (Options.Devices),
// its rows the table's: a node has as many devices of 1000 milli-units as
// it has of the resource allocatable (at most
// resource.MaxDevicesPerNode), of its GPU model (Model), and the pods that
// count on it hold theirs (scoring.TaskOptions.Devices reads what a pod
// asks of devices). It is replaced with the table.
func (s *Cache) Devices() *resource.Devices { return s.devices }

// SchemaChanges counts the times a new resource name made the cache
// build a new schema and table since New.
func (s *Cache) SchemaChanges() int { return s.changes }

// Row returns a node's row in Table.
func (s *Cache) Row(node string) (int, bool) {
	r, ok := s.rows[node]
	return r, ok
}

// Node returns a node by name, or nil.
func (s *Cache) Node(name string) *v1.Node { return s.nodes[name] }

// Pod returns the cache's pod by namespace and name, or nil.
func (s *Cache) Pod(namespace, name string) *v1.Pod {
	if e := s.pods[s.byName[podName{namespace, name}]]; e != nil {
		return e.pod
	}
	return nil
}

// Pending returns the pods without a node (and not finished), by namespace
// and name.
func (s *Cache) Pending() []*v1.Pod {
	var out []*v1.Pod
	for _, e := range s.pods {
		if e.pod.Spec.NodeName == "" && !kubebridge.Finished(e.pod) {
			out = append(out, e.pod)
		}
	}
	slices.SortFunc(out, kubebridge.ByNamespaceAndName)
	return out
}

// Model returns a node's GPU model (resource.NodeModel of its labels, or
// its DRA devices' productName when they agree on one), "" when it is not
// known or there is no such node.
func (s *Cache) Model(node string) string {
	if n := s.nodes[node]; n != nil {
		return s.nodeDevs[node].Model(n)
	}
	return ""
}

// Models returns the GPU models of the cache's nodes, sorted, each
// once: what scoring.TaskOptions.Models resolves pods' annotations among.
func (s *Cache) Models() []string {
	models := make([]string, 0, len(s.nodes))
	for name := range s.nodes {
		models = append(models, s.Model(name))
	}
	return resource.DistinctModels(models)
}

// DeviceErrors says, for each node whose GPU-sharing registration cannot
// be read (such a node has no devices here), why; in the order of the
// nodes' names.
func (s *Cache) DeviceErrors() []error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(s.nodeDevs)) {
		if err := s.nodeDevs[name].Err(); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// Holding reports where the cache counts a placed pod: its node's row,
// and the devices of the device view it holds there, each holding its
// device request's share (resource.DeviceRequestOf). ok is false for a
// pod the cache does not count on a node of its table, or whose
// holdings are not its request's (a sharing stack's allocation that gives
// the devices other shares, a request the devices could not hold).
func (s *Cache) Holding(pod *v1.Pod) (row int, devices []int, ok bool) {
	e := s.pods[kubebridge.PodKey(pod)]
	if e == nil || e.plain == nil || e.pod.Spec.NodeName == "" {
		return -1, nil, false
	}
	row, ok = s.rows[e.pod.Spec.NodeName]
	if !ok {
		return -1, nil, false
	}
	devices, ok = e.held.AsRequested(e.devices)
	return row, devices, ok
}
