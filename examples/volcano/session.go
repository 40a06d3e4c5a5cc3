//go:build volcano

package volcano

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/framework"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/dra"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
)

// sessionView is one Volcano session's view: the cluster's table (a row per
// node), its device view of the GPUs (rows the table's), and the pipelines
// for its schema, each with a Placer that scores a node for a class of
// tasks once and again only when its row changed. A row follows the
// session's node: read when the session opens, and again on every event
// of a task on the node (Volcano's session changes a node's tasks only
// with an event: allocate, pipeline, evict and their undoing). A node the
// session does not hold (a copy that preempt's simulation changes) is read
// for the call and its row read back from the session's node after it.
// Volcano asks about many nodes at once on several goroutines: the
// answers for a task are read without a lock, from a copy published once
// they are worked out (published), which stays the task's while the
// table's clock (clock, kept beside the table for these reads) is what it
// was; why a node is rejected, under the read lock; the table, device view
// and placers change only under the write lock (events, a task's first
// call, a copy's call).
type sessionView struct {
	name string
	// scores and filters are the configuration's two parts (Config.Apart),
	// both built over the device view.
	scores, filters *scoring.Pipeline
	table           *resource.Table
	// session are the session's nodes by name (Session.Nodes), rows the
	// rows that follow them, found from the node object Volcano hands a
	// plugin (kubebridge.RowIndex: its address, not a map's hash).
	session         map[string]*api.NodeInfo
	rows            kubebridge.RowIndex[api.NodeInfo]
	opts            scoring.TaskOptions
	onlyDeviceShare bool // the configuration has no filters of its own (kubebridge.OnlyDeviceShare)
	pods            int  // the "pods" slot
	gpu             int  // the GPU slot, -1 when the schema lacks it

	mu sync.RWMutex
	// clock is the table's clock as the last holder of mu left it; ranks
	// and checks are the ranked and checked answers as last published.
	clock         atomic.Uint64
	ranks, checks atomic.Pointer[published]
	// ranker places on the scores, checker on the filters.
	ranker, checker *scoring.Placer
	// ranked and checked are the ranker's and the checker's results for
	// the task Volcano asks about, taken at its first call for the task.
	ranked, checked answers
	used            resource.Vector
	devices         *resource.Devices
	saved           []int64 // a row's free devices while a copy has it (borrow)
	// held is what the tasks the session allocated hold on the devices.
	held  map[api.TaskID]kubebridge.Held
	tasks sync.Map // api.TaskID → taskOf
	// dra is what the session's DRA objects say (Session.SharedDRAManager,
	// read when the session opens; nil without), with the claims of the
	// tasks the session allocates allocated as dra.Reading.Allocate
	// chooses; writer puts its amounts into rows (kubebridge.RowWriter's
	// DRAAllocatable and DRAUsed).
	dra    *dra.Reading
	writer *kubebridge.RowWriter
	// ends is the session's view of when its nodes empty, for a
	// configuration that reads it (nil otherwise): its rows are read with
	// the table's, and a task's expected end is set on its task.
	ends *sessionEnds
}

type taskOf struct {
	task *kubebridge.PodTask
	err  error
}

// newSessionView reads a session's nodes and pods through the host layer:
// the schema of their resources (kubebridge.SchemaFor), the GPU models of
// the nodes, each node's devices with its tasks' pods holding theirs
// (kubebridge.NodeDevices, the rule every host follows), and each node's
// allocatable and used amounts from Volcano's node info (Fill), the GPUs'
// as the device view holds them (kubebridge.DeviceAmounts: a share of a
// GPU counts as the share, where Volcano's node info counts the whole
// GPU a pod's nvidia.com/gpu: 1 says). A configuration that learns
// (FGD's classes) has seen the session's running pods, in the order of
// their namespaces and names. A configuration that reads when nodes empty
// has the session's view of it (sessionEnds), the plugin's model having
// learned from the pods that ended since the last session.
func newSessionView(c *Config, ssn *framework.Session) (*sessionView, error) {
	var nodes []*v1.Node
	var models []string
	for _, n := range ssn.Nodes {
		if n.Node != nil {
			nodes = append(nodes, n.Node)
			models = append(models, resource.NodeModel(n.Node.Labels))
		}
	}
	var pods []*v1.Pod
	for _, job := range ssn.Jobs {
		for _, t := range job.Tasks {
			if t.Pod != nil {
				pods = append(pods, t.Pod)
			}
		}
	}
	d, err := readDRA(c.Name, ssn, nodes)
	if err != nil {
		klog.Errorf("%s: %v; DRA devices are left out this session", c.Name, err)
	}
	schema, err := kubebridge.SchemaFor(d, nodes, pods)
	if err != nil {
		return nil, err
	}
	writer, err := kubebridge.NewRowWriter(schema)
	if err != nil {
		return nil, err
	}
	devices, err := resource.NewDevices(resource.GPU, 1000)
	if err != nil {
		return nil, err
	}
	s := &sessionView{
		name:  c.Name,
		table: resource.NewTable(schema, len(ssn.Nodes)), session: ssn.Nodes, rows: kubebridge.NewRowIndex[api.NodeInfo](len(ssn.Nodes)),
		opts:    scoring.TaskOptions{Devices: resource.GPU, Models: resource.DistinctModels(models)},
		used:    make(resource.Vector, schema.Len()),
		devices: devices, held: map[api.TaskID]kubebridge.Held{}, gpu: -1,
		dra: d, writer: writer.WithDRA(d),
	}
	if slot, ok := schema.Slot(resource.GPU); ok {
		s.gpu = slot
	}
	scores, filters := c.Apart()
	host := config.Host{Devices: devices, NoDeviceShare: true}
	if scores.ReadsLifetimes() {
		opts, err := scores.LifetimeModel()
		if err != nil {
			return nil, err
		}
		if s.ends, err = followEnds(c.Name, pods, len(ssn.Nodes), clock(), opts); err != nil {
			return nil, err
		}
		host.Lifetimes = s.ends.tracker.Nodes()
	}
	if s.scores, err = scores.BuildFor(schema, host); err != nil {
		return nil, err
	}
	if s.filters, err = filters.BuildFor(schema, config.Host{Devices: devices}); err != nil {
		return nil, err
	}
	s.onlyDeviceShare = kubebridge.OnlyDeviceShare(s.filters)
	s.pods, _ = schema.Slot(resource.Pods)
	alloc := make(resource.Vector, schema.Len())
	for name, n := range ssn.Nodes {
		row, err := devices.AddNode(0)
		if err != nil {
			return nil, err
		}
		if n.Node != nil {
			var unreadable *kubebridge.RegistrationError
			if err := kubebridge.NodeDevices(d, devices, row, n.Node, podsOf(n)); errors.As(err, &unreadable) {
				klog.Errorf("%s: %v", c.Name, err)
			} else if err != nil {
				return nil, fmt.Errorf("node %s: %v", name, err)
			}
		}
		fill(schema, alloc, n.Allocatable)
		s.writer.DRAAllocatable(name, alloc)
		if s.gpu >= 0 {
			alloc[s.gpu], _ = kubebridge.DeviceAmounts(devices, row)
		}
		s.fillUsed(row, n)
		if _, err := s.table.Add(name, alloc, s.used); err != nil {
			return nil, err
		}
		s.rows.Put(n, int32(row))
		if s.ends != nil {
			s.ends.read(row, n)
		}
	}
	if s.ranker, err = scoring.NewPlacer(s.scores, s.table, scoring.PlacerOptions{Devices: devices}); err != nil {
		return nil, err
	}
	if s.checker, err = scoring.NewPlacer(s.filters, s.table, scoring.PlacerOptions{Devices: devices}); err != nil {
		return nil, err
	}
	if s.scores.Volatile() {
		slices.SortFunc(pods, kubebridge.ByNamespaceAndName)
		for _, p := range pods {
			if p.Spec.NodeName == "" || !kubebridge.Counts(p) {
				continue
			}
			if t, err := kubebridge.NewPodTask(d, schema, p, s.opts); err == nil {
				s.scores.Observe(t.Placed(p.Spec.NodeName))
			}
		}
	}
	return s, nil
}

// podsOf are the pods of a node's tasks.
func podsOf(n *api.NodeInfo) []*v1.Pod {
	pods := make([]*v1.Pod, 0, len(n.Tasks))
	for _, t := range n.Tasks {
		if t.Pod != nil {
			pods = append(pods, t.Pod)
		}
	}
	return pods
}

// fill converts a Volcano resource into dst without allocating.
func fill(schema *resource.Schema, dst resource.Vector, r *api.Resource) {
	Fill(schema, dst, r.MilliCPU, r.Memory, r.ScalarResources)
}

// fillUsed reads a node's used amounts into s.used: its "pods" slot the
// number of its tasks (as kube-scheduler's NodeInfo counts pods), its GPUs
// what the device view holds on its row.
func (s *sessionView) fillUsed(row int, n *api.NodeInfo) {
	fill(s.table.Schema(), s.used, n.Used)
	s.writer.DRAUsed(n.Name, s.used)
	s.used[s.pods] = resource.Clamp(int64(len(n.Tasks)))
	if s.gpu >= 0 {
		_, s.used[s.gpu] = kubebridge.DeviceAmounts(s.devices, row)
	}
}

// node is the session's node of that name and its row.
func (s *sessionView) node(name string) (*api.NodeInfo, int, bool) {
	info, ok := s.session[name]
	if !ok {
		return nil, 0, false
	}
	row, ok := s.rows.Get(info)
	return info, int(row), ok
}

// read reads a node's used amounts into its row, and its pods' ends where
// the session follows them. The caller holds s.mu.
func (s *sessionView) read(row int, n *api.NodeInfo) error {
	if s.ends != nil {
		s.ends.read(row, n)
	}
	s.fillUsed(row, n)
	return s.table.SetUsed(row, s.used)
}

// reread brings the row of a session's node up to date after an event of
// one of its tasks. The caller holds s.mu.
func (s *sessionView) reread(node string) {
	n, row, ok := s.node(node)
	if !ok {
		return
	}
	if err := s.read(row, n); err != nil {
		klog.Errorf("%s: node %s: %v", s.name, node, err)
	}
}

// allocated holds the devices of a task the session allocates on its node
// (tightest first, kubebridge.HoldDevices, as every host holds a pod it
// places) and shows the task to a configuration that learns. A task
// Volcano pipelines onto resources still being released, or puts back
// after an eviction, holds nothing new: Volcano's node info does not count
// it either.
func (s *sessionView) allocated(e *framework.Event) {
	t := e.Task
	s.mu.Lock()
	defer s.unlock()
	defer s.reread(t.NodeName)
	if t.Status != api.Allocated || t.Pod == nil {
		return
	}
	task, err := s.task(t)
	n, row, ok := s.node(t.NodeName)
	if !ok || n.Node == nil {
		return
	}
	if _, dup := s.held[t.UID]; dup {
		return
	}
	held, herr := kubebridge.HoldDevices(s.dra, s.devices, row, n.Node, t.Pod)
	if herr != nil {
		klog.Errorf("%s: task %s/%s on node %s: %v", s.name, t.Namespace, t.Name, t.NodeName, herr)
		return
	}
	s.held[t.UID] = held
	if s.dra != nil && len(t.Pod.Spec.ResourceClaims) > 0 {
		s.setDRA(row, n, func() (*dra.Reading, error) { return s.dra.Allocate(t.Pod, t.NodeName) })
	}
	if err == nil && s.scores.Volatile() {
		s.scores.Observe(task.Placed(t.NodeName))
	}
}

// deallocated gives back what a task the session allocated held, as the
// session takes the allocation back. An evicted task keeps its devices
// until it has gone, as Volcano's node info keeps its resources.
func (s *sessionView) deallocated(e *framework.Event) {
	t := e.Task
	s.mu.Lock()
	defer s.unlock()
	defer s.reread(t.NodeName)
	held, ok := s.held[t.UID]
	if !ok {
		return
	}
	delete(s.held, t.UID)
	if n, row, ok := s.node(t.NodeName); ok {
		if err := held.Return(s.devices, row); err != nil {
			klog.Errorf("%s: task %s/%s on node %s: %v", s.name, t.Namespace, t.Name, t.NodeName, err)
		}
		if s.dra != nil && t.Pod != nil && len(t.Pod.Spec.ResourceClaims) > 0 && n.Node != nil {
			s.setDRA(row, n, func() (*dra.Reading, error) { return s.dra.Unallocate(t.Pod), nil })
		}
	}
}

// setDRA replaces the session's DRA reading with one a task's claims
// allocated or gave back on a node, and writes the node's devices again
// from it (its row's amounts are read after the event). The caller holds
// s.mu.
func (s *sessionView) setDRA(row int, n *api.NodeInfo, next func() (*dra.Reading, error)) {
	d, err := next()
	if err != nil {
		klog.Errorf("%s: node %s: %v", s.name, n.Name, err)
		return
	}
	s.dra = d
	s.writer.WithDRA(d)
	var unreadable *kubebridge.RegistrationError
	if err := kubebridge.NodeDevices(d, s.devices, row, n.Node, podsOf(n)); err != nil && !errors.As(err, &unreadable) {
		klog.Errorf("%s: node %s: %v", s.name, n.Name, err)
	}
}

// task is a Volcano task as resfit scores it, made once per session from
// its pod by the host layer's rule (dra.Reading.NewPodTask: NewTask
// with what its DRA claims take), with its expected end where the session
// follows ends. Unusable Volcano scoring annotations are logged once a
// session, as Volcano's resource-strategy-fit logs them; the task scores
// 0 on every node, as there.
func (s *sessionView) task(t *api.TaskInfo) (*kubebridge.PodTask, error) {
	if v, ok := s.tasks.Load(t.UID); ok {
		return v.(taskOf).task, v.(taskOf).err
	}
	var made taskOf
	if t.Pod == nil {
		made.err = fmt.Errorf("task %s/%s has no pod", t.Namespace, t.Name)
	} else {
		made.task, made.err = kubebridge.NewPodTask(s.dra, s.table.Schema(), t.Pod, s.opts)
		if made.err == nil && s.ends != nil {
			made.task.SetEnds(s.ends.expect(t.Pod))
		}
	}
	v, loaded := s.tasks.LoadOrStore(t.UID, made)
	if !loaded && made.err == nil {
		if err := s.scores.OverrideError(made.task.Task); err != nil {
			klog.Errorf("%s: pod %s/%s: %v", s.name, t.Namespace, t.Name, err)
		}
	}
	return v.(taskOf).task, v.(taskOf).err
}

// borrow gives row r to n, a copy of the session's node of its name: its
// used amounts, and its devices as its tasks' pods hold them (the host
// layer's rule, kubebridge.NodeDevices). restore gives the row back to the
// session's node: its devices as they were, its amounts read again. The
// caller holds s.mu for writing.
func (s *sessionView) borrow(r int, n *api.NodeInfo) (restore func(), err error) {
	s.saved = append(s.saved[:0], s.devices.Free(r)...)
	restore = func() {
		if err := s.devices.SetFree(r, s.saved); err != nil {
			klog.Errorf("%s: node %s: %v", s.name, n.Name, err)
		}
		s.reread(n.Name)
	}
	if n.Node != nil {
		var unreadable *kubebridge.RegistrationError
		if err := kubebridge.NodeDevices(s.dra, s.devices, r, n.Node, podsOf(n)); err != nil && !errors.As(err, &unreadable) {
			restore()
			return nil, fmt.Errorf("node %s: %v", n.Name, err)
		}
	}
	if err := s.read(r, n); err != nil {
		restore()
		return nil, err
	}
	return restore, nil
}

// readDRA reads the session's DRA objects from the scheduler cache's
// SharedDRAManager by the host layer's rule (dra.Reader.ReadFrom:
// ResourceSlices with device taint rules applied, DeviceClasses, and the
// claims with the allocations made in memory and not yet written); nil
// when the cache has none (DRA off) or the cluster has no DRA objects. A
// claim allocated already binds its pod to the session's nodes its
// nodeSelector selects.
// Volcano builds its plugins again for every session, so the reader that
// reuses the compiled classes and the slices' devices from one session to
// the next is kept by plugin name (sessionReaders).
func readDRA(plugin string, ssn *framework.Session, nodes []*v1.Node) (*dra.Reading, error) {
	m := ssn.SharedDRAManager()
	if m == nil {
		return nil, nil
	}
	v, _ := sessionReaders.LoadOrStore(plugin, &sessionReader{})
	r := v.(*sessionReader)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reader.ReadFrom(dra.Listers{
		Slices: m.ResourceSlices().ListWithDeviceTaintRules, Classes: m.DeviceClasses().List,
		Claims: m.ResourceClaims().List, Pending: m.ResourceClaims().GetPendingAllocation,
		Nodes: func() ([]*v1.Node, error) { return nodes, nil },
	})
}

// sessionReaders are the DRA readers of the plugins, by name, kept across
// sessions; a session opens at a time, but a reader is used under its
// mutex all the same.
var sessionReaders sync.Map // plugin name → *sessionReader

type sessionReader struct {
	mu     sync.Mutex
	reader dra.Reader
}
