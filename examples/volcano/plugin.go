//go:build volcano

package volcano

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/framework"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// Plugin is resfit as Volcano's resource-strategy-fit plugin. Register it
// with framework.RegisterPluginBuilder(volcano.PluginName, volcano.New).
type Plugin struct {
	config *Config
}

// New builds the plugin from Volcano's arguments, in compatibility mode:
// bad values are changed as Volcano changes them, with a warning logged.
// Arguments that cannot be read at all leave the plugin inert, logged,
// where Volcano would exit the process.
func New(arguments framework.Arguments) framework.Plugin {
	c, err := Decode(arguments, true)
	if err != nil {
		klog.Errorf("%s: %v; the plugin scores nothing", PluginName, err)
		return &Plugin{}
	}
	for _, w := range c.Warnings {
		klog.Warningf("%s: %s", PluginName, w)
	}
	return &Plugin{config: c}
}

func (p *Plugin) Name() string { return PluginName }

// OnSessionOpen builds the session's table and the configuration's scores
// and filters (Config.Apart) and registers a batch node-order function
// (every node scored in one resfit batch) and a predicate: a task that
// asks for GPUs goes only to nodes of a GPU model it accepts, and to no
// node the configuration's filters reject (sra's proportional filter, when
// configured).
func (p *Plugin) OnSessionOpen(ssn *framework.Session) {
	if p.config == nil {
		return
	}
	s, err := newSessionView(p.config, ssn)
	if err != nil {
		klog.Errorf("%s: %v; the plugin scores nothing this session", PluginName, err)
		return
	}
	ssn.AddBatchNodeOrderFn(PluginName, s.nodeOrder)
	ssn.AddPredicateFn(PluginName, s.predicate)
}

func (p *Plugin) OnSessionClose(*framework.Session) {}

// sessionView is one Volcano session's view: the cluster's table (a row per
// node, used amounts read again as the session allocates) and the
// pipeline for its schema. Volcano runs predicates on several goroutines,
// so the table and batch are behind a mutex.
type sessionView struct {
	// scores and filters are the configuration's two parts (Config.Apart).
	scores, filters *scoring.Pipeline
	table           *resource.Table
	rows            map[string]int
	opts            scoring.TaskOptions
	filtered        bool // the predicate has filters to run
	pods            int  // the "pods" slot

	mu    sync.Mutex
	batch *scoring.Batch
	used  resource.Vector
	tasks sync.Map // api.TaskID → taskOf
}

type taskOf struct {
	task *scoring.Task
	err  error
}

// newSessionView reads a session's nodes and pods through the host layer: the
// schema of their resources (kubebridge.SchemaFor), the GPU models of the
// nodes, and each node's allocatable and used amounts from Volcano's node
// info (Fill).
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
	schema, err := kubebridge.SchemaFor(nodes, pods)
	if err != nil {
		return nil, err
	}
	scores, filters := c.Apart()
	s := &sessionView{
		table: resource.NewTable(schema, len(ssn.Nodes)), rows: map[string]int{},
		opts: scoring.TaskOptions{Devices: resource.GPU, Models: resource.DistinctModels(models)},
		used: make(resource.Vector, schema.Len()),
	}
	if s.scores, err = scores.Build(schema); err != nil {
		return nil, err
	}
	if s.filters, err = filters.Build(schema); err != nil {
		return nil, err
	}
	s.filtered = len(s.filters.FilterNames()) > 0
	s.pods, _ = schema.Slot(resource.Pods)
	alloc := make(resource.Vector, schema.Len())
	for name, n := range ssn.Nodes {
		fill(schema, alloc, n.Allocatable)
		s.fillUsed(n)
		r, err := s.table.Add(name, alloc, s.used)
		if err != nil {
			return nil, err
		}
		s.rows[name] = r
	}
	s.batch = s.scores.NewBatch(s.table.Len())
	return s, nil
}

// fill converts a Volcano resource into dst without allocating.
func fill(schema *resource.Schema, dst resource.Vector, r *api.Resource) {
	Fill(schema, dst, r.MilliCPU, r.Memory, r.ScalarResources)
}

// fillUsed reads a node's used amounts into s.used, its "pods" slot the
// number of its tasks (as kube-scheduler's NodeInfo counts pods).
func (s *sessionView) fillUsed(n *api.NodeInfo) {
	fill(s.table.Schema(), s.used, n.Used)
	s.used[s.pods] = resource.Clamp(int64(len(n.Tasks)))
}

// refresh reads a node's used amounts again (they change as the session
// allocates) and returns its row. The caller holds s.mu.
func (s *sessionView) refresh(n *api.NodeInfo) (int, bool, error) {
	r, ok := s.rows[n.Name]
	if !ok {
		return 0, false, nil
	}
	s.fillUsed(n)
	return r, true, s.table.SetUsed(r, s.used)
}

// task is a Volcano task as resfit scores it, made once per session from
// its pod by the host layer's rule (kubebridge.NewTask).
func (s *sessionView) task(t *api.TaskInfo) (*scoring.Task, error) {
	if v, ok := s.tasks.Load(t.UID); ok {
		return v.(taskOf).task, v.(taskOf).err
	}
	var made taskOf
	if t.Pod == nil {
		made.err = fmt.Errorf("task %s/%s has no pod", t.Namespace, t.Name)
	} else {
		made.task, made.err = kubebridge.NewTask(s.table.Schema(), t.Pod, s.opts)
	}
	v, _ := s.tasks.LoadOrStore(t.UID, made)
	return v.(taskOf).task, v.(taskOf).err
}

// nodeOrder scores the task on every node in one batch and returns the
// candidates' totals.
func (s *sessionView) nodeOrder(t *api.TaskInfo, candidates []*api.NodeInfo) (map[string]float64, error) {
	task, err := s.task(t)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range candidates {
		if _, _, err := s.refresh(n); err != nil {
			return nil, err
		}
	}
	if err := s.scores.Score(task, s.table, s.batch); err != nil {
		return nil, err
	}
	scores := make(map[string]float64, len(candidates))
	for _, n := range candidates {
		if r, ok := s.rows[n.Name]; ok {
			scores[n.Name] = s.batch.Total(r)
		}
	}
	return scores, nil
}

// predicate keeps a task off a node of a GPU model it does not accept and
// off a node the pipeline's filters reject.
func (s *sessionView) predicate(t *api.TaskInfo, n *api.NodeInfo) error {
	task, err := s.task(t)
	if err != nil {
		return s.unfit(t, n, err.Error())
	}
	if task.Devices.Count > 0 && n.Node != nil {
		if why := task.Models.Rejection(resource.GPU, resource.NodeModel(n.Node.Labels)); why != "" {
			return s.unfit(t, n, why)
		}
	}
	if !s.filtered {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok, err := s.refresh(n)
	if err != nil || !ok {
		return err
	}
	why, err := s.filters.Reason(task, s.table, r)
	if err != nil {
		return err
	}
	if why != "" {
		return s.unfit(t, n, why)
	}
	return nil
}

func (s *sessionView) unfit(t *api.TaskInfo, n *api.NodeInfo, reason string) error {
	return api.NewFitErrWithStatus(t, n, &api.Status{Code: api.UnschedulableAndUnresolvable, Plugin: PluginName, Reason: reason})
}
