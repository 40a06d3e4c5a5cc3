package plugins

import (
	"bytes"
	"errors"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/dra"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
)

// nodes is what the plugins of a profile keep from cycle to cycle and
// share (profile): the node table with each row's NodeInfo generation,
// the device view and DRA's reading. Each plugin scores it with its own
// pipeline (scorer). Its methods that change it run under the profile's
// mutex; lookup only reads, from Score and Filter, after the cycle's
// evaluation.
type nodes struct {
	schema *resource.Schema
	table  *resource.Table
	// gen numbers the schema and table: rebuild makes new ones, and each
	// plugin's scorer builds its pipeline again for them.
	gen  uint64
	rows map[string]int32
	gens []int64 // per row, the NodeInfo generation it was read from
	// byNode finds a row from the v1.Node a NodeInfo holds (Score looks a
	// row up for every node); rowNode is each row's v1.Node, to drop a
	// replaced one.
	byNode  kubebridge.RowIndex[v1.Node]
	rowNode []*v1.Node

	// The last list of NodeInfos and their rows: the next cycle usually
	// passes the same list, and then needs no lookup by name.
	lastInfos []fwk.NodeInfo
	lastRows  []int32
	// rowInfo is the NodeInfo each row was read from. kube-scheduler
	// updates a changed node's NodeInfo in place, so a cycle does not read
	// every NodeInfo's generation (a cache miss each): lookup notices a
	// changed one, works its outcome out afresh, and marks the row stale,
	// to be read again in the next cycle.
	rowInfo []fwk.NodeInfo
	staleMu sync.Mutex
	stale   []int32

	writer *kubebridge.RowWriter
	// devices, when the plugin reads devices (ResourceStrategyFit), is the
	// device view of the GPUs, its rows the table's, each read from its
	// NodeInfo with the row (kubebridge.NodeDevices); models counts the
	// nodes of each GPU model, and modelList is its keys, sorted.
	withDevices bool
	devices     *resource.Devices
	models      map[string]int
	modelList   []string

	// dra is what the cluster's DRA objects said when last read (nil:
	// none read), at the plugin's draWatch count draRead.
	dra     *dra.Reading
	draRead uint64

	// ends, when a plugin of the profile reads when nodes empty, follows
	// the pods of every row (lifetimes.go); nil otherwise.
	ends *lifetimes
}

// prepare makes the table hold the given NodeInfos as they are: a new
// schema and pipeline when a node or the pod brings a resource name the
// schema lacks, a row for a node not seen before, a row read again for a
// node whose generation changed. With all (PreFilter's list of every
// node), rows of nodes no longer listed are dropped.
//
// hinted are nodes a pod was reserved on or unreserved from since the last
// cycle; their rows are read again.
func (n *nodes) prepare(pod *v1.Pod, infos []fwk.NodeInfo, all bool, hinted []string) error {
	if n.schema == nil || !n.coversPod(pod) {
		if err := n.rebuild(pod, infos); err != nil {
			return err
		}
	}
	same := len(infos) == len(n.lastInfos)
	if !same {
		n.lastInfos = append(n.lastInfos[:0], make([]fwk.NodeInfo, len(infos))...)
		n.lastRows = append(n.lastRows[:0], make([]int32, len(infos))...)
	}
	walk := infos
	if same && sameInfos(n.lastInfos, infos) {
		walk = nil // every row read from these NodeInfos; lookup sees changes
	}
	for i, info := range walk {
		if same && sameInfo(n.lastInfos[i], info) {
			continue // the row read from this NodeInfo; lookup sees changes
		}
		r, ok := n.rows[info.Node().Name]
		if !ok {
			if !n.coversNode(info) {
				return n.rebuild(pod, infos)
			}
			var err error
			if r, err = n.add(info); err != nil {
				return err
			}
		} else if err := n.refresh(r, info); err != nil {
			return n.rebuild(pod, infos)
		}
		n.lastInfos[i], n.lastRows[i] = info, r
	}
	// Rows lookup found stale since the last cycle, and nodes pods were
	// reserved on.
	n.staleMu.Lock()
	for _, name := range hinted {
		if row, ok := n.rows[name]; ok {
			n.stale = append(n.stale, row)
		}
	}
	stale := n.stale
	n.stale = n.stale[:0]
	n.staleMu.Unlock()
	for _, row := range stale {
		if err := n.refresh(row, n.rowInfo[row]); err != nil {
			return n.rebuild(pod, infos)
		}
	}
	if all && len(infos) != n.table.Len() {
		// A node left the cluster: start again from this list (rare).
		return n.rebuild(pod, infos)
	}
	return nil
}

// refresh reads a row again from a NodeInfo whose generation differs from
// the one read; an error means the node brings a resource the schema lacks
// (rebuild).
func (n *nodes) refresh(row int32, info fwk.NodeInfo) error {
	if info.GetGeneration() == n.gens[row] && sameInfo(n.rowInfo[row], info) {
		return nil
	}
	if !n.coversNode(info) {
		return errNewResource
	}
	return n.read(row, info)
}

var errNewResource = errors.New("a node offers a resource the schema lacks")

// coversPod reports whether the schema has every resource the pod asks for;
// coversNode, every resource the node offers.
func (n *nodes) coversPod(pod *v1.Pod) bool {
	for l := range kubebridge.RequestLists(pod) {
		for name := range l {
			if _, ok := n.schema.Slot(string(name)); !ok {
				return false
			}
		}
	}
	return true
}

func (n *nodes) coversNode(info fwk.NodeInfo) bool {
	for name := range info.GetAllocatable().GetScalarResources() {
		if _, ok := n.schema.Slot(string(name)); !ok {
			return false
		}
	}
	return true
}

// rebuild makes the schema and table afresh from the nodes and the pod,
// the schema by the rule every host shares (resource.SchemaOf).
func (n *nodes) rebuild(pod *v1.Pod, infos []fwk.NodeInfo) error {
	seen := map[string]string{}
	if n.schema != nil {
		for _, name := range n.schema.Names() {
			seen[name] = "the schema so far"
		}
	}
	for _, name := range kubebridge.ResourceNames(pod) {
		seen[name] = "pod " + pod.Namespace + "/" + pod.Name
	}
	for _, info := range infos {
		for name := range info.GetAllocatable().GetScalarResources() {
			seen[string(name)] = "node " + info.Node().Name
		}
	}
	if n.dra != nil {
		for _, name := range n.dra.ResourceNames() {
			seen[name] = "a device class"
		}
	}
	schema, err := resource.SchemaOf(seen)
	if err != nil {
		return err
	}
	writer, err := kubebridge.NewRowWriter(schema)
	if err != nil {
		return err
	}
	var devices *resource.Devices
	if n.withDevices {
		if devices, err = resource.NewDevices(resource.GPU, 1000); err != nil {
			return err
		}
		writer.WithDevices(devices)
	}
	writer.WithDRA(n.dra)
	*n = nodes{
		schema: schema, table: resource.NewTable(schema, len(infos)), gen: n.gen + 1, writer: writer,
		rows: make(map[string]int32, len(infos)), byNode: kubebridge.NewRowIndex[v1.Node](len(infos)),
		withDevices: n.withDevices, devices: devices, models: map[string]int{},
		dra: n.dra, draRead: n.draRead, ends: n.ends,
	}
	if n.ends != nil {
		n.ends.rows(len(infos))
	}
	for _, info := range infos {
		if _, err := n.add(info); err != nil {
			return err
		}
	}
	return nil
}

// add appends a row for a node and reads it.
func (n *nodes) add(info fwk.NodeInfo) (int32, error) {
	name := info.Node().Name
	r, err := n.table.Add(name, make(resource.Vector, n.schema.Len()), nil)
	if err != nil {
		return 0, err
	}
	row := int32(r)
	n.rows[name] = row
	n.rowNode = append(n.rowNode, nil)
	n.rowInfo = append(n.rowInfo, nil)
	n.gens = append(n.gens, 0)
	if n.devices != nil {
		if _, err := n.devices.AddNode(0); err != nil {
			return 0, err
		}
	}
	return row, n.read(row, info)
}

// read copies a NodeInfo into its row by the bridge's rules
// (kubebridge.RowWriter): allocatable, requested and the non-zero
// requested amounts kube-scheduler scores with; with a device view, the
// node's devices first, which the row's amounts of the GPUs come from.
func (n *nodes) read(row int32, info fwk.NodeInfo) error {
	if n.devices != nil {
		pods := make([]*v1.Pod, len(info.GetPods()))
		for i, p := range info.GetPods() {
			pods[i] = p.GetPod()
		}
		var unreadable *kubebridge.RegistrationError
		if err := kubebridge.NodeDevices(n.dra, n.devices, int(row), info.Node(), pods); errors.As(err, &unreadable) {
			klog.ErrorS(err, "GPU registration unreadable", "node", info.Node().Name)
		} else if err != nil {
			return err
		}
	}
	alloc, nonZero := info.GetAllocatable(), info.GetNonZeroRequested()
	if err := n.writer.Report(n.table, int(row), kubebridge.NodeReport{
		Allocatable: alloc, AllowedPods: int64(alloc.GetAllowedPodNumber()),
		Requested: info.GetRequested(), Pods: int64(len(info.GetPods())),
		NonZeroCPU: nonZero.GetMilliCPU(), NonZeroMemory: nonZero.GetMemory(),
	}); err != nil {
		return err
	}
	if n.ends != nil {
		n.ends.read(row, info)
	}
	n.gens[row] = info.GetGeneration()
	n.rowInfo[row] = info
	if node := info.Node(); n.rowNode[row] != node {
		n.countModel(n.rowNode[row], -1)
		n.countModel(node, +1)
		n.byNode.Remove(n.rowNode[row])
		n.byNode.Put(node, row)
		n.rowNode[row] = node
	}
	return nil
}

// countModel counts a node's GPU model in or out of the cluster's models.
func (n *nodes) countModel(node *v1.Node, sign int) {
	if node == nil || n.models == nil {
		return
	}
	m := resource.NodeModel(node.Labels)
	if m == "" {
		return
	}
	n.models[m] += sign
	if n.models[m] == 0 {
		delete(n.models, m)
	}
	n.modelList = nil
}

// taskOptions are how the plugin reads a pod: with a device view, the GPUs
// it asks for and the models it accepts among the cluster's.
func (n *nodes) taskOptions() scoring.TaskOptions {
	if n.devices == nil {
		return scoring.TaskOptions{}
	}
	if n.modelList == nil {
		n.modelList = slices.Sorted(maps.Keys(n.models))
	}
	return scoring.TaskOptions{Devices: resource.GPU, Models: n.modelList}
}

// scorer is one plugin's part of a cycle: its pipeline over the
// profile's table, a placer that remembers each pod class's results by
// row and scores a row again only when it changed, and the last
// evaluation's results for every row (valid until the next).
type scorer struct {
	gen      uint64 // the table's (nodes.gen) the pipeline is built for
	pipe     *scoring.Pipeline
	placer   *scoring.Placer
	cycle    uint64
	scores   kubebridge.PodScores
	maxScore float64
	// onlyDeviceShare says the pipeline's filters are DeviceShare alone
	// or none (kubebridge.OnlyDeviceShare).
	onlyDeviceShare bool
}

// ready builds the pipeline and placer for the profile's table, when it
// is new (a schema the pipeline was not built for).
func (s *scorer) ready(cfg *config.Config, n *nodes) error {
	if s.pipe != nil && s.gen == n.gen {
		return nil
	}
	var host config.Host
	if n.devices != nil {
		host.Devices = n.devices
	}
	if n.ends != nil {
		host.Lifetimes = n.ends.tracker.Nodes()
	}
	pipe, err := cfg.BuildFor(n.schema, host)
	if err != nil {
		return err
	}
	placer, err := scoring.NewPlacer(pipe, n.table, scoring.PlacerOptions{})
	if err != nil {
		return err
	}
	*s = scorer{gen: n.gen, pipe: pipe, placer: placer, maxScore: pipe.MaxScore(), cycle: s.cycle,
		onlyDeviceShare: kubebridge.OnlyDeviceShare(pipe)}
	return nil
}

// score brings every row's result for the pod up to date: the placer
// scores the rows of a pod class it has not seen on every node, and
// otherwise only the rows that changed since it last did (a pod whose
// claims take different devices on different nodes: per distinct take,
// kubebridge.PodTask.Score).
func (s *scorer) score(pt *kubebridge.PodTask, table *resource.Table, cycle uint64) error {
	if err := pt.Score(s.placer, table, &s.scores); err != nil {
		return err
	}
	s.cycle = cycle
	return nil
}

// refreshSome reads the given nodes' rows again where they changed: when
// kube-scheduler scores a sample of the nodes (percentageOfNodesToScore),
// reading the sample's generations costs less than working a changed node
// out alone in Score.
func (n *nodes) refreshSome(given []fwk.NodeInfo) {
	sampledRefreshes.Add(1)
	for _, info := range given {
		row, ok := n.byNode.Get(info.Node())
		if !ok {
			if row, ok = n.rows[info.Node().Name]; !ok {
				continue // not a node of the snapshot: Score works it out alone
			}
		}
		_ = n.refresh(row, info) // a resource the schema lacks: likewise
	}
}

// lookup returns a node's outcome from the cycle's evaluation, when it is
// this cycle's and read the NodeInfo at its current generation.
func (s *scorer) lookup(n *nodes, cycle uint64, info fwk.NodeInfo, reason bool) (nodeResult, bool, error) {
	if cycle != s.cycle || s.gen != n.gen {
		return nodeResult{}, false, nil
	}
	row, ok := n.byNode.Get(info.Node())
	if !ok {
		// The node object changed: find the row by name.
		if row, ok = n.rows[info.Node().Name]; ok {
			n.markStale(row)
		}
		return nodeResult{}, false, nil
	}
	if int(row) >= s.scores.Len() {
		return nodeResult{}, false, nil
	}
	if n.gens[row] != info.GetGeneration() {
		if sameInfo(n.rowInfo[row], info) {
			n.markStale(row) // changed in place since the last cycle
		}
		return nodeResult{}, false, nil
	}
	if !s.scores.Feasible(int(row)) {
		if !reason {
			return nodeResult{}, true, nil
		}
		task := s.scores.Task(int(row))
		if task == nil {
			return nodeResult{reason: errClaimsUnsatisfiable}, true, nil
		}
		why, err := s.pipe.Reason(task, n.table, int(row))
		return nodeResult{reason: why}, true, err
	}
	return nodeResult{feasible: true, score: toScore(s.scores.Total(int(row)), s.maxScore)}, true, nil
}

// errClaimsUnsatisfiable is why a node is rejected whose devices cannot
// satisfy the pod's claims.
const errClaimsUnsatisfiable = "the node's DRA devices cannot satisfy the pod's resource claims"

// markStale queues a row to be read again in the next cycle. It is called
// from Score and Filter, which run in parallel.
func (n *nodes) markStale(row int32) {
	n.staleMu.Lock()
	n.stale = append(n.stale, row)
	n.staleMu.Unlock()
}

// evaluateOne works one node's outcome out afresh, for a NodeInfo the
// cycle's batch did not read as it is (a node changed since the last
// cycle, a preemption dry run, nominated pods added). It reads the node in
// the cycle's schema, grown by any resource the node now offers (scarce
// resource avoidance counts what a node has, not only what the task asks
// for). It allocates; it is the rare path.
func evaluateOne(cfg *config.Config, withDevices bool, s *cycleState, info fwk.NodeInfo) (nodeResult, error) {
	singleEvaluations.Add(1)
	one := nodes{schema: s.schema, withDevices: withDevices, dra: s.dra, ends: s.ends.one(s.endsAt)}
	if err := one.rebuild(s.pod, []fwk.NodeInfo{info}); err != nil {
		return nodeResult{}, err
	}
	var sc scorer
	if err := sc.ready(cfg, &one); err != nil {
		return nodeResult{}, err
	}
	pt := s.podTask
	if one.schema.Len() != s.schema.Len() {
		var err error
		if pt, err = kubebridge.NewPodTask(s.dra, one.schema, s.pod, s.opts); err != nil {
			return nodeResult{}, err
		}
	}
	if err := sc.score(pt, one.table, 1); err != nil {
		return nodeResult{}, err
	}
	r, _, err := sc.lookup(&one, 1, info, true)
	return r, err
}

// singleEvaluations counts evaluateOne's calls, sampledRefreshes
// refreshSome's, for tests.
var singleEvaluations, sampledRefreshes atomic.Int64

// sameInfos reports whether two lists hold the same NodeInfos in the same
// order, comparing their memory (an interface value is its type's word
// and its pointer): false means only that some may differ.
func sameInfos(a, b []fwk.NodeInfo) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 {
		return true
	}
	words := len(a) * int(unsafe.Sizeof(a[0]))
	return bytes.Equal(unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), words), unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), words))
}

// sameInfo reports whether two NodeInfos are the same object: for
// kube-scheduler's own *framework.NodeInfo by comparing the pointers, since
// comparing interfaces is a call (runtime.ifaceeq), which PreScore would
// make for every node of every cycle.
func sameInfo(a, b fwk.NodeInfo) bool {
	if pa, ok := a.(*framework.NodeInfo); ok {
		pb, ok := b.(*framework.NodeInfo)
		return ok && pa == pb
	}
	return a == b
}
