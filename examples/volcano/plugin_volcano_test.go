//go:build volcano

package volcano

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v2"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	"pgregory.net/rapid"
	schedulingv1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
	"volcano.sh/volcano/cmd/scheduler/app/options"
	"volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/conf"
	"volcano.sh/volcano/pkg/scheduler/framework"
	rsf "volcano.sh/volcano/pkg/scheduler/plugins/resource-strategy-fit"
	"volcano.sh/volcano/pkg/scheduler/uthelper"
	"volcano.sh/volcano/pkg/scheduler/util"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/cache"
	"github.com/resfit/resfit/examples/kubebridge/planning"
	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
)

// released is a plugin configuration in Volcano's released form, parsed by
// yaml.v2 as volcano-scheduler.conf is.
const releasedConf = `
resourceStrategyFitWeight: 10
resources:
  nvidia.com/gpu: {type: MostAllocated, weight: 2}
  cpu: {type: LeastAllocated, weight: 1}
sra:
  enable: true
  resources: nvidia.com/gpu
  weight: 10
  resourceWeight: {nvidia.com/gpu: 1}
proportional:
  enable: true
  resources: nvidia.com/gpu
  resourceProportion: {nvidia.com/gpu.cpu: 8, nvidia.com/gpu.memory: 8}
`

// quirks is a configuration as Volcano reads it but not as written: an
// unknown key (ignored), floats where integers are read (truncated), field
// names in another case (matched), unknown fields in the sra object
// (ignored). resfit's compatibility mode must read it the same way.
const quirks = `
resourceStrategyFitWeight: 7.9
ResourceStrategyFitPlusWeight: 3
resources:
  nvidia.com/gpu: {Type: MostAllocated, WEIGHT: 2.5}
  cpu: {type: LeastAllocated, weight: 1, extra: x}
sra:
  Enable: true
  resources: nvidia.com/gpu
  weight: 10.9
  resourceWeight: {nvidia.com/gpu: 3.3}
  unknown: 1
`

func gpu(n string) api.ScalarResource { return api.ScalarResource{Name: "nvidia.com/gpu", Value: n} }

func gpuNode(name, cpu, mem, gpus string) *v1.Node {
	rl := api.BuildResourceList(cpu, mem, []api.ScalarResource{{Name: "pods", Value: "110"}, {Name: "nvidia.com/gpu", Value: gpus}}...)
	return util.BuildNode(name, rl, map[string]string{})
}

func cpuNode(name, cpu, mem string) *v1.Node {
	return util.BuildNode(name, api.BuildResourceList(cpu, mem, []api.ScalarResource{{Name: "pods", Value: "110"}}...), map[string]string{})
}

func pod(name, node string, phase v1.PodPhase, rl v1.ResourceList) *v1.Pod {
	return util.BuildPod("c1", name, node, phase, rl, "pg1", map[string]string{}, map[string]string{})
}

func session(t *testing.T, name string, builder framework.PluginBuilder, arguments string) *framework.Session {
	return sessionWith(t, name, builder, arguments, nil)
}

// sessionWith is session's cluster, with the pods keep keeps (all for nil)
// and more pods.
func sessionWith(t *testing.T, name string, builder framework.PluginBuilder, arguments string, keep func(*v1.Pod) bool, more ...*v1.Pod) *framework.Session {
	t.Helper()
	nodes := []*v1.Node{
		gpuNode("gpu-full", "74", "128G", "8"), gpuNode("gpu-empty", "74", "128G", "8"),
		cpuNode("cpu-a", "32", "64Gi"), cpuNode("cpu-b", "64", "128Gi"),
	}
	pods := append(slices.DeleteFunc([]*v1.Pod{
		pod("load-1", "gpu-full", v1.PodRunning, api.BuildResourceList("40", "64G", gpu("6"))),
		pod("load-2", "gpu-empty", v1.PodRunning, api.BuildResourceList("8", "8G")),
		pod("load-3", "cpu-a", v1.PodRunning, api.BuildResourceList("8", "16Gi")),
		pod("cpu-task", "", v1.PodPending, api.BuildResourceList("8", "8G")),
		pod("gpu-task", "", v1.PodPending, api.BuildResourceList("16", "32G", gpu("2"))),
		pod("big-cpu-task", "", v1.PodPending, api.BuildResourceList("30", "8G")),
	}, func(p *v1.Pod) bool { return keep != nil && !keep(p) }), more...)
	return sessionOf(t, name, builder, arguments, nodes, pods)
}

// sessionOf is a session of the nodes and pods (all of pod group pg1, in
// queue c1) with the one plugin, its node order and predicate enabled,
// configured by arguments (YAML, as volcano-scheduler.conf gives them).
func sessionOf(t *testing.T, name string, builder framework.PluginBuilder, arguments string, nodes []*v1.Node, pods []*v1.Pod) *framework.Session {
	t.Helper()
	var args framework.Arguments
	if err := yaml.Unmarshal([]byte(arguments), &args); err != nil {
		t.Fatal(err)
	}
	test := uthelper.TestCommonStruct{
		Name:      "resfit against Volcano",
		Plugins:   map[string]framework.PluginBuilder{name: builder},
		PodGroups: []*schedulingv1.PodGroup{util.BuildPodGroup("pg1", "c1", "c1", 0, nil, "")},
		Queues:    []*schedulingv1.Queue{util.BuildQueue("c1", 1, nil)},
		Nodes:     nodes,
		Pods:      pods,
	}
	yes := true
	tiers := []conf.Tier{{Plugins: []conf.PluginOption{{Name: name, EnabledNodeOrder: &yes, EnabledPredicate: &yes, Arguments: args}}}}
	ssn := test.RegisterSession(tiers, nil)
	t.Cleanup(test.Close)
	return ssn
}

// On the same session, resfit's batch node order gives every task on every
// node the score Volcano's own resource-strategy-fit plugin gives, and its
// proportional predicate the same decision: for the released form, and for
// arguments only Volcano's lenient decoding reads.
func TestMatchesVolcanoResourceStrategyFit(t *testing.T) {
	options.Default()
	for name, arguments := range map[string]string{"released": releasedConf, "quirks": quirks} {
		t.Run(name, func(t *testing.T) { matchVolcano(t, arguments) })
	}
}

func matchVolcano(t *testing.T, arguments string) {
	theirs := session(t, rsf.PluginName, rsf.New, arguments)
	ours := session(t, ResourceStrategyFitPluginName, Builders[ResourceStrategyFitPluginName], arguments)
	var ourNodes []*api.NodeInfo
	for _, n := range ours.Nodes {
		ourNodes = append(ourNodes, n)
	}
	compared := 0
	for _, job := range theirs.Jobs {
		for _, task := range job.Tasks {
			if task.NodeName != "" {
				continue
			}
			var ourTask *api.TaskInfo
			for _, j := range ours.Jobs {
				for _, tk := range j.Tasks {
					if tk.Name == task.Name {
						ourTask = tk
					}
				}
			}
			scores, err := nodeOrder(ours, ourTask, ourNodes)
			if err != nil {
				t.Fatal(err)
			}
			for name, node := range theirs.Nodes {
				want, err := theirs.NodeOrderFn(task, node)
				if err != nil {
					t.Fatal(err)
				}
				if got := scores[name]; math.Abs(got-want) > 1e-9*math.Max(1, want) {
					t.Errorf("%s on %s: resfit %v, Volcano %v", task.Name, name, got, want)
				}
				// Volcano's plugin leaves the GPU count to its predicates
				// plugin; resfit's DeviceShare checks it too.
				wantErr, gotErr := theirs.PredicateFn(task, node), ours.PredicateFn(ourTask, ours.Nodes[name])
				gpusFit := task.Resreq.ScalarResources["nvidia.com/gpu"] <= node.Idle.ScalarResources["nvidia.com/gpu"]
				if (wantErr == nil && gpusFit) != (gotErr == nil) {
					t.Errorf("%s on %s: resfit predicate %v, Volcano %v", task.Name, name, gotErr, wantErr)
				}
				compared++
			}
		}
	}
	if compared != 12 {
		t.Errorf("compared %d task×node pairs, want 12", compared)
	}
}

// nodeOrder is every node's total as Volcano's util.PrioritizeNodes sums
// it: the plugins' node-order functions node by node, and their batch
// ones.
func nodeOrder(ssn *framework.Session, task *api.TaskInfo, nodes []*api.NodeInfo) (map[string]float64, error) {
	scores, err := ssn.BatchNodeOrderFn(task, nodes)
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		_, score, err := ssn.NodeOrderMapFn(task, n)
		if err != nil {
			return nil, err
		}
		scores[n.Name] += score
	}
	return scores, nil
}

// Volcano's preempt action asks the plugins about copies of the session's
// nodes with tasks taken off (NodeInfo.Clone, RemoveTask). resfit answers
// for a copy as for a node without those tasks, and for the session's
// node as before: a 4-GPU task on gpu-full's copy without its 6-GPU load
// scores and passes as on gpu-full in a session without the load, and on
// gpu-full itself as it did (no room: 2 GPUs free).
func TestCopiesOfNodes(t *testing.T) {
	options.Default()
	gpu4 := pod("gpu-4", "", v1.PodPending, api.BuildResourceList("8", "8G", gpu("4")))
	plugin := Builders[ResourceStrategyFitPluginName]
	ssn := sessionWith(t, ResourceStrategyFitPluginName, plugin, releasedConf, nil, gpu4.DeepCopy())
	task := taskNamed(t, ssn, "gpu-4")
	full := ssn.Nodes["gpu-full"]
	before, err := nodeOrder(ssn, task, []*api.NodeInfo{full})
	if err != nil {
		t.Fatal(err)
	}
	if err := ssn.PredicateFn(task, full); err == nil {
		t.Fatalf("gpu-4 passes gpu-full (2 of 8 GPUs free)")
	}
	cp := full.Clone()
	for _, held := range cp.Tasks {
		if held.Name == "load-1" {
			cp.RemoveTask(held)
		}
	}
	onCopy, err := nodeOrder(ssn, task, []*api.NodeInfo{cp})
	if err != nil {
		t.Fatal(err)
	}
	if err := ssn.PredicateFn(task, cp); err != nil {
		t.Errorf("gpu-4 on gpu-full's copy without load-1: %v", err)
	}
	after, err := nodeOrder(ssn, task, []*api.NodeInfo{full})
	if err != nil {
		t.Fatal(err)
	}
	if after["gpu-full"] != before["gpu-full"] || ssn.PredicateFn(task, full) == nil {
		t.Errorf("gpu-full after a copy was asked about: %v and passes %v, want %v and not passing", after["gpu-full"], ssn.PredicateFn(task, full) == nil, before["gpu-full"])
	}
	// The reference: a session without load-1.
	unloaded := sessionWith(t, ResourceStrategyFitPluginName, plugin, releasedConf, func(p *v1.Pod) bool { return p.Name != "load-1" }, gpu4.DeepCopy())
	want, err := nodeOrder(unloaded, taskNamed(t, unloaded, "gpu-4"), []*api.NodeInfo{unloaded.Nodes["gpu-full"]})
	if err != nil {
		t.Fatal(err)
	}
	if onCopy["gpu-full"] != want["gpu-full"] || onCopy["gpu-full"] == before["gpu-full"] {
		t.Errorf("gpu-4 on gpu-full's copy without load-1 scores %v, want %v (with the load %v)", onCopy["gpu-full"], want["gpu-full"], before["gpu-full"])
	}
}

// Volcano asks the predicates and node orders of a task on many nodes at
// once (util.PredicateHelper, util.PrioritizeNodes: 16 goroutines); the
// answers are those of asking node by node, for every task of the
// session, before and after one is allocated and the allocation is taken
// back (run with -race: check.sh race).
func TestConcurrentAsVolcanoAsks(t *testing.T) {
	options.Default()
	ssn := session(t, ResourceStrategyFitPluginName, Builders[ResourceStrategyFitPluginName], releasedConf)
	var nodes []*api.NodeInfo
	for _, n := range ssn.Nodes {
		nodes = append(nodes, n)
	}
	slices.SortFunc(nodes, func(a, b *api.NodeInfo) int { return strings.Compare(a.Name, b.Name) })
	compare := func(when string) {
		for _, job := range ssn.Jobs {
			for _, task := range job.Tasks {
				if task.NodeName != "" {
					continue
				}
				var serial []string
				for _, n := range nodes {
					if ssn.PredicateFn(task, n) == nil {
						serial = append(serial, n.Name)
					}
				}
				passed, _ := util.NewPredicateHelper().PredicateNodes(task, nodes, ssn.PredicateFn, false, nil)
				var parallel []string
				for _, n := range passed {
					parallel = append(parallel, n.Name)
				}
				slices.Sort(parallel)
				if !slices.Equal(serial, parallel) {
					t.Errorf("%s, %s: passes %v node by node, %v at once", when, task.Name, serial, parallel)
				}
				want, err := nodeOrder(ssn, task, nodes)
				if err != nil {
					t.Fatal(err)
				}
				got := map[string]float64{}
				for score, ns := range util.PrioritizeNodes(task, nodes, ssn.BatchNodeOrderFn, ssn.NodeOrderMapFn, ssn.NodeOrderReduceFn) {
					for _, n := range ns {
						got[n.Name] = score
					}
				}
				if !maps.Equal(want, got) {
					t.Errorf("%s, %s: scores %v node by node, %v at once", when, task.Name, want, got)
				}
			}
		}
	}
	compare("at the start")
	stmt := framework.NewStatement(ssn)
	if err := stmt.Allocate(taskNamed(t, ssn, "gpu-task"), ssn.Nodes["gpu-empty"]); err != nil {
		t.Fatal(err)
	}
	compare("gpu-task allocated")
	stmt.Discard()
	compare("the allocation taken back")
}

// The answers for a task follow the session's events: asked right before
// and right after the GPU task is allocated on gpu-empty, and after it is
// taken back, the CPU task's score there changes, and comes back.
func TestAnswersFollowEvents(t *testing.T) {
	options.Default()
	ssn := session(t, ResourceStrategyFitPluginName, Builders[ResourceStrategyFitPluginName], releasedConf)
	node, task := ssn.Nodes["gpu-empty"], taskNamed(t, ssn, "cpu-task")
	score := func() float64 {
		_ = ssn.PredicateFn(task, node)
		_, score, err := ssn.NodeOrderMapFn(task, node)
		if err != nil {
			t.Fatal(err)
		}
		return score
	}
	before := score()
	stmt := framework.NewStatement(ssn)
	if err := stmt.Allocate(taskNamed(t, ssn, "gpu-task"), node); err != nil {
		t.Fatal(err)
	}
	during := score()
	stmt.Discard()
	if after := score(); before == during || after != before {
		t.Errorf("cpu-task on gpu-empty: %v, %v with gpu-task there, %v after it (want a change, then %v)", before, during, after, before)
	}
}

// A task whose pod cannot be read (its GPU models annotation names no
// model a node label could carry) is kept off every node with the reason,
// and scores 0 everywhere without an error (Volcano would log one for
// every node).
func TestUnreadableTask(t *testing.T) {
	options.Default()
	p := pod("bad-models", "", v1.PodPending, api.BuildResourceList("4", "8G", gpu("1")))
	p.Annotations["resfit.io/gpu-models"] = "Tesla V100!"
	ssn := sessionWith(t, ResourceStrategyFitPluginName, Builders[ResourceStrategyFitPluginName], releasedConf, nil, p)
	task := taskNamed(t, ssn, "bad-models")
	for name, n := range ssn.Nodes {
		err := ssn.PredicateFn(task, n)
		if err == nil || !strings.Contains(err.Error(), "resfit.io/gpu-models") {
			t.Errorf("%s: predicate %v, want the annotation's error", name, err)
		}
		if _, score, err := ssn.NodeOrderMapFn(task, n); score != 0 || err != nil {
			t.Errorf("%s: node order %v, %v; want 0 and no error", name, score, err)
		}
	}
}

// A task whose Volcano scoring annotations are there but unusable scores 0
// on every node, as under Volcano, and the session logs why once, naming
// the pod and the annotation (Volcano logs it for every node).
func TestUnusableAnnotationsAreLogged(t *testing.T) {
	options.Default()
	mark := logged.Len()
	p := pod("bad-weights", "", v1.PodPending, api.BuildResourceList("4", "8G", gpu("1")))
	p.Annotations["volcano.sh/resource-strategy-scoring-type"] = "MostAllocated"
	p.Annotations["volcano.sh/resource-strategy-weight"] = `{"nvidia.com/gpu": -1}`
	ssn := sessionWith(t, ResourceStrategyFitPluginName, Builders[ResourceStrategyFitPluginName], releasedConf, nil, p)
	task := taskNamed(t, ssn, "bad-weights")
	for name, n := range ssn.Nodes {
		if _, score, err := ssn.NodeOrderMapFn(task, n); score != 0 || err != nil {
			t.Errorf("%s: node order %v, %v; want 0 and no error", name, score, err)
		}
	}
	want := `pod c1/bad-weights: annotation volcano.sh/resource-strategy-weight: "nvidia.com/gpu": weight must be in [0, 1000000], got -1: resource-strategy-fit scores it 0 on every node, as Volcano does`
	quoted := strconv.Quote(want) // as the logger writes the line
	said := logged.Since(mark)
	if n := strings.Count(said, quoted[1:len(quoted)-1]); n != 1 {
		t.Errorf("said %d times, want once: %s\n%s", n, want, said)
	}
}

// logged holds what klog wrote during the tests. klog's logger is set once,
// in TestMain, before any test starts a session: Volcano's test sessions
// start informers whose goroutines log, and klog.SetLogger beside them is a
// data race.
var logged teeLog

// teeLog writes to standard error and keeps a copy; safe for concurrent use.
type teeLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *teeLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.buf.Write(p)
	l.mu.Unlock()
	return os.Stderr.Write(p)
}

// Len is how much has been written so far, a mark for Since.
func (l *teeLog) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Len()
}

// Since is what was written after the mark.
func (l *teeLog) Since(mark int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.buf.Bytes()[mark:])
}

func TestMain(m *testing.M) {
	klog.SetLogger(textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(&logged))))
	os.Exit(m.Run())
}

// taskNamed is the session's task of that name.
func taskNamed(t *testing.T, ssn *framework.Session, name string) *api.TaskInfo {
	t.Helper()
	for _, job := range ssn.Jobs {
		for _, task := range job.Tasks {
			if task.Name == name {
				return task
			}
		}
	}
	t.Fatalf("no task %s", name)
	return nil
}

// In a Volcano session, a task that asks for GPUs and accepts only some
// models (HAMi's nvidia.com/use-gputype here, resfit's exact annotation
// for the other) is kept off nodes of other models, with a reason naming
// them; a CPU task goes anywhere, a GPU task without annotations to any
// node with GPUs.
func TestGPUModelPredicateInSession(t *testing.T) {
	options.Default()
	labelled := func(name, model string) *v1.Node {
		rl := api.BuildResourceList("64", "256Gi", []api.ScalarResource{{Name: "pods", Value: "110"}, gpu("8")}...)
		return util.BuildNode(name, rl, map[string]string{"nvidia.com/gpu.product": model})
	}
	annotated := func(p *v1.Pod, key, value string) *v1.Pod {
		p.Annotations[key] = value // beside the pod group's
		return p
	}
	test := uthelper.TestCommonStruct{
		Name:      "GPU models",
		Plugins:   map[string]framework.PluginBuilder{ResourceStrategyFitPluginName: Builders[ResourceStrategyFitPluginName]},
		PodGroups: []*schedulingv1.PodGroup{util.BuildPodGroup("pg1", "c1", "c1", 0, nil, "")},
		Queues:    []*schedulingv1.Queue{util.BuildQueue("c1", 1, nil)},
		Nodes:     []*v1.Node{labelled("a100", "NVIDIA-A100-SXM4-80GB"), labelled("t4", "Tesla-T4"), cpuNode("cpu", "32", "64Gi")},
		Pods: []*v1.Pod{
			annotated(pod("wants-a100", "", v1.PodPending, api.BuildResourceList("8", "8G", gpu("1"))), "nvidia.com/use-gputype", "a100"),
			annotated(pod("wants-t4", "", v1.PodPending, api.BuildResourceList("8", "8G", gpu("1"))), "resfit.io/gpu-models", "Tesla-T4"),
			annotated(pod("cpu-only", "", v1.PodPending, api.BuildResourceList("8", "8G")), "nvidia.com/use-gputype", "a100"),
			pod("any-gpu", "", v1.PodPending, api.BuildResourceList("8", "8G", gpu("1"))),
		},
	}
	args := framework.Arguments{"resources": map[any]any{"nvidia.com/gpu": map[any]any{"type": "MostAllocated", "weight": 1}}}
	yes := true
	ssn := test.RegisterSession([]conf.Tier{{Plugins: []conf.PluginOption{{Name: ResourceStrategyFitPluginName, EnabledNodeOrder: &yes, EnabledPredicate: &yes, Arguments: args}}}}, nil)
	t.Cleanup(test.Close)
	want := map[string]map[string]string{
		"wants-a100": {"a100": "", "t4": "nvidia.com/gpu model Tesla-T4 is not one the task accepts (NVIDIA-A100-SXM4-80GB)", "cpu": "nvidia.com/gpu model unknown; the task accepts only NVIDIA-A100-SXM4-80GB"},
		"wants-t4":   {"a100": "nvidia.com/gpu model NVIDIA-A100-SXM4-80GB is not one the task accepts (Tesla-T4)", "t4": "", "cpu": "nvidia.com/gpu model unknown; the task accepts only Tesla-T4"},
		"cpu-only":   {"a100": "", "t4": "", "cpu": ""},
		"any-gpu":    {"a100": "", "t4": "", "cpu": "Insufficient nvidia.com/gpu devices: 0 of 0 have 1 free, 1 needed"},
	}
	checked := 0
	for _, job := range ssn.Jobs {
		for _, task := range job.Tasks {
			for node, reason := range want[task.Name] {
				err := ssn.PredicateFn(task, ssn.Nodes[node])
				got := ""
				if err != nil {
					got = err.Error()
				}
				if !strings.Contains(got, reason) || (reason == "") != (err == nil) {
					t.Errorf("%s on %s: %v, want %q", task.Name, node, err, reason)
				}
				checked++
			}
		}
	}
	if checked != 12 {
		t.Errorf("checked %d task×node pairs, want 12", checked)
	}
}

// fragClasses are the workload's classes the fgd and resfit-frag plugins
// are given in the tests.
const fragClasses = `[{cpu: 4, gpus: 1, weight: 3}, {cpu: 8, gpus: 2, weight: 2}, {cpu: 2, gpus: 1, gpuShare: 300, weight: 2}, {cpu: 2, weight: 1}]`

// oneAnswerPlugins are the plugins and arguments the one-answer test runs:
// resource-strategy-fit in its released form, binpack and nodeorder's
// resource scores in Volcano's arguments, the fragmentation plugins
// (resfit-frag with its proportional reserve), and resfit with a whole
// configuration (binpack beside NodeResourcesFit's MostAllocated, and
// resource-strategy-fit's proportional reserve as a filter only).
var oneAnswerPlugins = map[string]string{
	ResourceStrategyFitPluginName: releasedConf,
	FGDPluginName:                 "classes: " + fragClasses,
	ResfitFragPluginName:          "{coresPerIdleGPU: 4, classes: " + fragClasses + "}",
	BinpackPluginName:             "{binpack.weight: 3, binpack.cpu: 1, binpack.resources: nvidia.com/gpu, binpack.resources.nvidia.com/gpu: 2}",
	NodeOrderPluginName:           "{leastrequested.weight: 2, balancedresource.weight: 1}",
	ResfitPluginName: `
plugins:
- {name: binpack, weight: 2, args: {binpack.weight: 3, binpack.resources: nvidia.com/gpu, binpack.resources.nvidia.com/gpu: 2}}
- {name: NodeResourcesFit, args: {scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 1}, {name: nvidia.com/gpu, weight: 1}]}}}
- name: resource-strategy-fit
  scores: false
  args: {sra: {policy: proportional, resources: nvidia.com/gpu, proportional: {nvidia.com/gpu.cpu: 4}}}
- {name: ResfitLifetime, weight: 3}
`,
}

// One pod, one cluster, one answer, in Volcano: for random clusters and
// pods in a Volcano session (GPUs whole or shared, HAMi's
// nvidia.com/gpucores), each plugin's node-order score of every node is
// the score of the same configuration's pipeline on the table and device
// view kubebridge builds from the same nodes and pods (the host layer
// every host shares), within Volcano's float units, and its predicate
// rejects exactly the nodes the pipeline's filters reject there; and so
// again after the session allocates a first pending task (its devices
// held on its node, as the cache's Assume holds them).
func TestOnePodOneClusterOneAnswerInVolcano(t *testing.T) {
	options.Default()
	for name, arguments := range oneAnswerPlugins {
		t.Run(name, func(t *testing.T) { oneAnswer(t, name, arguments) })
	}
}

func oneAnswer(t *testing.T, plugin, arguments string) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	atNow(t, now)
	var args framework.Arguments
	if err := yaml.Unmarshal([]byte(arguments), &args); err != nil {
		t.Fatal(err)
	}
	c, err := Decode(plugin, args, true)
	if err != nil {
		t.Fatal(err)
	}
	scores, filters := c.Apart()
	rapid.Check(t, func(rt *rapid.T) {
		var nodes []*v1.Node
		for i := range rapid.IntRange(1, 5).Draw(rt, "nodes") {
			scalars := []api.ScalarResource{{Name: "pods", Value: "110"}}
			if g := rapid.SampledFrom([]string{"", "4", "8"}).Draw(rt, "gpus"); g != "" {
				scalars = append(scalars, api.ScalarResource{Name: "nvidia.com/gpu", Value: g})
			}
			labels := map[string]string{}
			if rapid.Bool().Draw(rt, "labelled") {
				labels["nvidia.com/gpu.product"] = "Tesla-T4"
			}
			rl := api.BuildResourceList(fmt.Sprint(rapid.IntRange(4, 96).Draw(rt, "cpu")), fmt.Sprint(rapid.IntRange(8, 512).Draw(rt, "memory"), "Gi"), scalars...)
			nodes = append(nodes, util.BuildNode(fmt.Sprintf("node-%d", i), rl, labels))
		}
		drawRequest := func(name string) v1.ResourceList {
			var scalars []api.ScalarResource
			switch g := rapid.IntRange(0, 4).Draw(rt, name+" gpus"); {
			case g > 0 && g < 4:
				scalars = append(scalars, api.ScalarResource{Name: "nvidia.com/gpu", Value: fmt.Sprint(g)})
			case g == 4: // a share of one GPU, in HAMi's form
				scalars = append(scalars, api.ScalarResource{Name: "nvidia.com/gpu", Value: "1"},
					api.ScalarResource{Name: resource.HAMiCoresResource, Value: fmt.Sprint(rapid.IntRange(1, 99).Draw(rt, name+" gpu cores"))})
			}
			return api.BuildResourceList(fmt.Sprint(rapid.IntRange(1, 16000).Draw(rt, name+" milli-cpu"), "m"), fmt.Sprint(rapid.IntRange(1, 64).Draw(rt, name+" memory"), "Gi"), scalars...)
		}
		// Pods start before now or not yet, and may declare how long they
		// run; finished pods teach the lifetime model, some of them of the
		// first pending pod's shape.
		declare := func(p *v1.Pod, name string) *v1.Pod {
			if rapid.Bool().Draw(rt, name+" declares") {
				p.Annotations[planning.RunsForAnnotation] = fmt.Sprint(rapid.IntRange(1, 1200).Draw(rt, name+" runs for"), "m")
			}
			return p
		}
		first, second := declare(pod("pending-0", "", v1.PodPending, drawRequest("pending-0")), "pending-0"), declare(pod("pending-1", "", v1.PodPending, drawRequest("pending-1")), "pending-1")
		var pods []*v1.Pod
		for i := range rapid.IntRange(0, 6).Draw(rt, "running pods") {
			name := fmt.Sprintf("bound-%d", i)
			p := declare(pod(name, rapid.SampledFrom(nodes).Draw(rt, "on").Name, v1.PodRunning, drawRequest(name)), name)
			if ago := rapid.IntRange(-1, 600).Draw(rt, name+" started, minutes ago"); ago >= 0 {
				kubetest.Running(p, now.Add(-time.Duration(ago)*time.Minute))
			}
			pods = append(pods, p)
		}
		for i := range rapid.IntRange(0, 10).Draw(rt, "finished pods") {
			name := fmt.Sprintf("done-%d", i)
			rl := first.Spec.Containers[0].Resources.Requests
			if rapid.Bool().Draw(rt, name+" of another shape") {
				rl = drawRequest(name)
			}
			p := pod(name, rapid.SampledFrom(nodes).Draw(rt, "on").Name, v1.PodSucceeded, rl)
			pods = append(pods, kubetest.Succeeded(p, now.Add(-10*time.Hour), time.Duration(rapid.IntRange(1, 500).Draw(rt, name+" ran, minutes"))*time.Minute))
		}
		pods = append(pods, first, second)
		first, second = first.DeepCopy(), second.DeepCopy()
		forgetLearned() // the model learns from this session's pods alone, as the scene does
		test := uthelper.TestCommonStruct{
			Name:      "one answer",
			Plugins:   map[string]framework.PluginBuilder{plugin: Builders[plugin]},
			PodGroups: []*schedulingv1.PodGroup{util.BuildPodGroup("pg1", "c1", "c1", 0, nil, "")},
			Queues:    []*schedulingv1.Queue{util.BuildQueue("c1", 1, nil)},
			Nodes:     nodes,
			Pods:      pods,
		}
		yes := true
		ssn := test.RegisterSession([]conf.Tier{{Plugins: []conf.PluginOption{{Name: plugin, EnabledNodeOrder: &yes, EnabledPredicate: &yes, Arguments: args}}}}, nil)
		defer test.Close()

		// The same configuration on the host layer's table and device view,
		// of copies of the pods (Volcano's allocation writes its pod's node).
		copies := make([]*v1.Pod, len(pods))
		for i, p := range pods {
			copies[i] = p.DeepCopy()
		}
		snap, err := cache.New(nodes, copies, cache.Options{})
		if err != nil {
			rt.Fatal(err)
		}
		// The scores as every host builds them, without the DeviceShare
		// filter (Volcano's node order scores every node), over explain's
		// scene's view of when the nodes empty (ends followed as at now),
		// the running pods observed; tasks as the scene reads them.
		scene, scorePipe, filterPipe := reference(rt, snap, scores, filters, copies, now)
		vtask := map[string]*api.TaskInfo{}
		for _, job := range ssn.Jobs {
			for _, tk := range job.Tasks {
				vtask[tk.Name] = tk
			}
		}
		var infos []*api.NodeInfo
		for _, n := range ssn.Nodes {
			infos = append(infos, n)
		}
		compare := func(p *v1.Pod) (feasible []string) {
			pt, err := scene.Task(p)
			if err != nil {
				rt.Fatal(err)
			}
			task := pt.Task
			batch := scorePipe.NewBatch(snap.Table().Len())
			if err := scorePipe.Score(task, snap.Table(), batch); err != nil {
				rt.Fatal(err)
			}
			got, err := nodeOrder(ssn, vtask[p.Name], infos)
			if err != nil {
				rt.Fatal(err)
			}
			for _, n := range nodes {
				row, _ := snap.Row(n.Name)
				if want := batch.Total(row); math.Abs(got[n.Name]-want) > 1e-9*math.Max(1, want) {
					rt.Fatalf("%s on %s: Volcano session %v, pipeline %v", p.Name, n.Name, got[n.Name], want)
				}
				why, err := filterPipe.Reason(task, snap.Table(), row)
				if err != nil {
					rt.Fatal(err)
				}
				if perr := ssn.PredicateFn(vtask[p.Name], ssn.Nodes[n.Name]); (perr == nil) != (why == "") {
					rt.Fatalf("%s on %s: Volcano predicate %v, filters %q", p.Name, n.Name, perr, why)
				}
				if why == "" {
					feasible = append(feasible, n.Name)
				}
			}
			return feasible
		}
		feasible := compare(first)
		if len(feasible) == 0 {
			return
		}
		// The session allocates the first task; the cache assumes it.
		on := rapid.SampledFrom(feasible).Draw(rt, "allocate on")
		if err := framework.NewStatement(ssn).Allocate(vtask[first.Name], ssn.Nodes[on]); err != nil {
			return // Volcano's node info has no room for it: rolled back
		}
		// The scene again, with the first pod bound there, observed last
		// (as the session saw it allocated) and starting now.
		first.Spec.NodeName = on
		copies = append(slices.DeleteFunc(copies, func(p *v1.Pod) bool { return p.Name == first.Name }), first)
		if snap, err = cache.New(nodes, copies, cache.Options{}); err != nil {
			rt.Fatal(err)
		}
		scene, scorePipe, filterPipe = reference(rt, snap, scores, filters, copies, now)
		compare(second)
	})
}

// reference is the scene of the cache and pods as at now, and the
// configuration's scores and filters built over it as a host builds them
// (the scores without the DeviceShare filter, over the scene's view of
// when nodes empty, having observed the running pods in order).
func reference(rt *rapid.T, snap *cache.Cache, scores, filters *config.Config, pods []*v1.Pod, now time.Time) (*planning.Scene, *scoring.Pipeline, *scoring.Pipeline) {
	scene, err := planning.NewSceneAt(snap, scores, pods, planning.Ends{Now: now})
	if err != nil {
		rt.Fatal(err)
	}
	scorePipe, err := scores.BuildFor(snap.Schema(), config.Host{Devices: snap.Devices(), NoDeviceShare: true, Lifetimes: scene.Lifetimes()})
	if err != nil {
		rt.Fatal(err)
	}
	filterPipe, err := filters.BuildFor(snap.Schema(), config.Host{Devices: snap.Devices()})
	if err != nil {
		rt.Fatal(err)
	}
	if scorePipe.Volatile() {
		for _, p := range pods {
			if kubebridge.Counts(p) {
				task, _ := kubebridge.NewTask(snap.Schema(), p, scoring.TaskOptions{Devices: resource.GPU, Models: snap.Models()})
				scorePipe.Observe(task)
			}
		}
	}
	return scene, scorePipe, filterPipe
}
