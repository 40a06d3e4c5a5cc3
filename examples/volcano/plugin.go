//go:build volcano

package volcano

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/framework"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/sra"
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

// fill converts a Volcano resource into dst without allocating.
func fill(schema *resource.Schema, dst resource.Vector, r *api.Resource) {
	Fill(schema, dst, r.MilliCPU, r.Memory, r.ScalarResources)
}

// OnSessionOpen builds the session's table and registers a batch node-order
// function (every node scored in one resfit batch) and a predicate: a task
// that asks for GPUs only on nodes of a GPU model its annotations accept
// (ModelReason) and, with sra proportional, the proportional check.
func (p *Plugin) OnSessionOpen(ssn *framework.Session) {
	if p.config == nil {
		return
	}
	var scalars []map[v1.ResourceName]float64
	var names []string
	for name, n := range ssn.Nodes {
		scalars = append(scalars, n.Allocatable.ScalarResources)
		names = append(names, name)
	}
	schema, err := Schema(scalars)
	if err != nil {
		klog.Errorf("%s: %v", PluginName, err)
		return
	}
	pipe, err := p.config.Scoring.Build(schema)
	if err != nil {
		klog.Errorf("%s: %v", PluginName, err)
		return
	}
	nodes := resource.NewTable(schema, len(names))
	row := map[string]int{}
	alloc, used := make(resource.Vector, schema.Len()), make(resource.Vector, schema.Len())
	for _, name := range names {
		n := ssn.Nodes[name]
		fill(schema, alloc, n.Allocatable)
		fill(schema, used, n.Used)
		r, err := nodes.Add(name, alloc, used)
		if err != nil {
			klog.Errorf("%s: %v", PluginName, err)
			return
		}
		row[name] = r
	}
	batch := pipe.NewBatch(nodes.Len())
	req := make(resource.Vector, schema.Len())
	ssn.AddBatchNodeOrderFn(PluginName, func(task *api.TaskInfo, candidates []*api.NodeInfo) (map[string]float64, error) {
		for _, n := range candidates { // used amounts change as the session allocates
			if r, ok := row[n.Name]; ok {
				fill(schema, used, n.Used)
				if err := nodes.SetUsed(r, used); err != nil {
					return nil, err
				}
			}
		}
		fill(schema, req, task.Resreq)
		t := &scoring.Task{Name: task.Name, Requests: req}
		if task.Pod != nil {
			t.Override = Override(schema, task.Pod.Annotations)
		}
		if err := pipe.Score(t, nodes, batch); err != nil {
			return nil, err
		}
		scores := make(map[string]float64, len(candidates))
		for _, n := range candidates {
			if r, ok := row[n.Name]; ok {
				scores[n.Name] = batch.Total(r)
			}
		}
		return scores, nil
	})
	models := sessionModels(ssn)
	var prop *sra.Proportional
	if p.config.Proportional != nil {
		if prop, err = sra.NewProportional(schema, p.config.Proportional); err != nil {
			klog.Errorf("%s: %v", PluginName, err)
			prop = nil
		}
	}
	var mu sync.Mutex // predicates run on several goroutines
	taskReq, nodeAlloc, nodeUsed := make(resource.Vector, schema.Len()), make(resource.Vector, schema.Len()), make(resource.Vector, schema.Len())
	ssn.AddPredicateFn(PluginName, func(task *api.TaskInfo, node *api.NodeInfo) error {
		if node.Node != nil {
			if why := models.reason(task, node.Node.Labels); why != "" {
				return api.NewFitErrWithStatus(task, node, &api.Status{Code: api.UnschedulableAndUnresolvable, Plugin: PluginName, Reason: why})
			}
		}
		if prop == nil {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		fill(schema, taskReq, task.Resreq)
		fill(schema, nodeAlloc, node.Allocatable)
		fill(schema, nodeUsed, node.Used)
		if ok, f := prop.CheckNode(taskReq, nodeAlloc, nodeUsed); !ok {
			return api.NewFitErrWithStatus(task, node, &api.Status{Code: api.UnschedulableAndUnresolvable, Plugin: PluginName, Reason: f.Explain(schema)})
		}
		return nil
	})
}

// taskModels is the GPU models of a session's nodes and, per task, the
// models its annotations accept, worked out once.
type taskModels struct {
	cluster []string
	tasks   sync.Map // api.TaskID → acceptance
}

type acceptance struct {
	gpus bool // the task asks for GPUs; without, any node's model will do
	set  resource.ModelSet
	err  error
}

func sessionModels(ssn *framework.Session) *taskModels {
	var labels []map[string]string
	for _, n := range ssn.Nodes {
		if n.Node != nil {
			labels = append(labels, n.Node.Labels)
		}
	}
	return &taskModels{cluster: ClusterModels(labels)}
}

// reason is ModelReason for a task on a node of these labels, "" for a
// task that asks for no GPU.
func (m *taskModels) reason(task *api.TaskInfo, nodeLabels map[string]string) string {
	a, ok := m.tasks.Load(task.UID)
	if !ok {
		var acc acceptance
		if acc.gpus = task.Resreq != nil && AsksForGPUs(task.Resreq.ScalarResources); acc.gpus {
			var annotations map[string]string
			if task.Pod != nil {
				annotations = task.Pod.Annotations
			}
			acc.set, acc.err = resource.AcceptedModels(annotations, m.cluster)
		}
		a, _ = m.tasks.LoadOrStore(task.UID, acc)
	}
	acc := a.(acceptance)
	if !acc.gpus {
		return ""
	}
	return ModelReason(acc.set, acc.err, nodeLabels)
}

func (p *Plugin) OnSessionClose(*framework.Session) {}
