//go:build volcano

package volcano

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"

	"gopkg.in/yaml.v2"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
	"volcano.sh/volcano/cmd/scheduler/app/options"
	"volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/conf"
	"volcano.sh/volcano/pkg/scheduler/framework"
	rsf "volcano.sh/volcano/pkg/scheduler/plugins/resource-strategy-fit"
	"volcano.sh/volcano/pkg/scheduler/uthelper"
	"volcano.sh/volcano/pkg/scheduler/util"

	"github.com/resfit/resfit/examples/kubebridge/testing/inturn"
)

// The session benchmark: one task through what Volcano's allocate action
// does with it, on a session of 1000 or 5000 nodes — the predicates on
// every node (util.PredicateHelper, with the allocate action's own check
// that the task fits the node's future idle resources first), the node
// order of the nodes that passed (util.PrioritizeNodes: the map, reduce
// and batch functions of every plugin), the best node chosen, the task
// allocated there through a statement and the statement discarded (the
// Allocate and Deallocate events every plugin's handler sees). Three
// plugins do the scoring, each alone in the session: Volcano's own
// resource-strategy-fit, resfit's under its own name with the same
// arguments, and a plugin that does nothing (noop: the cost of Volcano's
// session itself, the floor). Reported per node and task.
//
//	VOLCANO_SRC=../../../shared/volcano ./check.sh bench

// benchArguments are resource-strategy-fit's arguments in the benchmark:
// GPUs packed, CPU spread, sra retention, the proportional predicate.
const benchArguments = releasedConf

// noop is the floor: a plugin in both of the allocate action's phases
// that does nothing in either (a predicate that passes every node, a node
// order that gives each 0).
type noop struct{}

func (noop) Name() string { return "noop" }
func (noop) OnSessionOpen(ssn *framework.Session) {
	ssn.AddPredicateFn("noop", func(*api.TaskInfo, *api.NodeInfo) error { return nil })
	ssn.AddNodeOrderFn("noop", func(*api.TaskInfo, *api.NodeInfo) (float64, error) { return 0, nil })
}
func (noop) OnSessionClose(*framework.Session) {}

// rejecting is noop that rejects the nodes resfit's predicate rejects for
// the task (found before the session is benchmarked), with a fixed reason:
// the floor under the same decisions, Volcano's own cost of the nodes a
// plugin turns down (the FitErrors it records), which the floor that
// passes every node does not pay.
type rejecting struct{ nodes map[string]bool }

func (rejecting) Name() string { return "noop-rejecting" }
func (r rejecting) OnSessionOpen(ssn *framework.Session) {
	ssn.AddPredicateFn("noop-rejecting", func(t *api.TaskInfo, n *api.NodeInfo) error {
		if r.nodes[n.Name] {
			return api.NewFitErrWithStatus(t, n, &api.Status{Code: api.UnschedulableAndUnresolvable, Plugin: "noop-rejecting", Reason: "rejected"})
		}
		return nil
	})
	ssn.AddNodeOrderFn("noop-rejecting", func(*api.TaskInfo, *api.NodeInfo) (float64, error) { return 0, nil })
}
func (rejecting) OnSessionClose(*framework.Session) {}

// benchCluster is n nodes, a quarter of them with 8 GPUs, each running a
// load of its own size, and a pending job of one CPU task and one GPU task.
func benchCluster(n int) (nodes []*v1.Node, pods []*v1.Pod) {
	for i := range n {
		name := fmt.Sprintf("node-%05d", i)
		load := api.BuildResourceList(strconv.Itoa(1+i%24), fmt.Sprintf("%dGi", 2+i%48))
		if i%4 == 0 {
			nodes = append(nodes, gpuNode(name, "96", "512Gi", "8"))
			load = api.BuildResourceList(strconv.Itoa(4+i%40), fmt.Sprintf("%dGi", 16+i%200), gpu(strconv.Itoa(i/4%8)))
		} else {
			nodes = append(nodes, cpuNode(name, "64", "256Gi"))
		}
		pods = append(pods, pod("load-"+name, name, v1.PodRunning, load))
	}
	pods = append(pods,
		pod("cpu-task", "", v1.PodPending, api.BuildResourceList("8", "16Gi")),
		pod("gpu-task", "", v1.PodPending, api.BuildResourceList("16", "64Gi", gpu("2"))))
	return nodes, pods
}

// benchPlugin is a plugin of the benchmark: its label in the results, its
// name (which the session's tier must use: a plugin's functions are
// registered under its own name) and its builder.
type benchPlugin struct {
	label, name string
	builder     framework.PluginBuilder
}

func benchPlugins() []benchPlugin {
	return []benchPlugin{
		{"floor", "noop", func(framework.Arguments) framework.Plugin { return noop{} }},
		{"volcano", rsf.PluginName, rsf.New},
		{"resfit", ResourceStrategyFitPluginName, Builders[ResourceStrategyFitPluginName]},
	}
}

func BenchmarkSession(b *testing.B) { benchCases(b, benchAllocate) }

// benchCases runs a benchmark for every size, task and plugin, each on a
// session of its own.
func benchCases(b *testing.B, bench func(b *testing.B, ssn *framework.Session, task *api.TaskInfo, all []*api.NodeInfo)) {
	args := benchArgs(b)
	plugins := benchPlugins()
	for _, n := range []int{1000, 5000} {
		nodes, pods := benchCluster(n)
		for _, task := range []string{"cpu-task", "gpu-task"} {
			floor := rejectingFloor(b, plugins[2], args, nodes, pods, task)
			for _, p := range append(plugins[:1:1], append([]benchPlugin{floor}, plugins[1:]...)...) {
				b.Run(fmt.Sprintf("nodes=%d/task=%s/plugin=%s", n, task, p.label), func(b *testing.B) {
					ssn, t, all := benchSession(b, p.name, p.builder, args, nodes, pods, task)
					bench(b, ssn, t, all)
				})
			}
		}
	}
}

// benchSession opens a session on the cluster with one plugin and returns
// it, the pending task of that name and the session's nodes. The session
// closes when the benchmark ends.
func benchSession(b *testing.B, name string, builder framework.PluginBuilder, args framework.Arguments, nodes []*v1.Node, pods []*v1.Pod, taskName string) (*framework.Session, *api.TaskInfo, []*api.NodeInfo) {
	copies := make([]*v1.Pod, len(pods))
	for i, p := range pods {
		copies[i] = p.DeepCopy() // the session's tasks point at their pods, which Allocate changes
	}
	test := uthelper.TestCommonStruct{
		Plugins:   map[string]framework.PluginBuilder{name: builder},
		PodGroups: []*schedulingv1.PodGroup{util.BuildPodGroup("pg1", "c1", "c1", 0, nil, "")},
		Queues:    []*schedulingv1.Queue{util.BuildQueue("c1", 1, nil)},
		Nodes:     nodes,
		Pods:      copies,
	}
	yes := true
	tiers := []conf.Tier{{Plugins: []conf.PluginOption{{Name: name, EnabledNodeOrder: &yes, EnabledPredicate: &yes, Arguments: args}}}}
	ssn := test.RegisterSession(tiers, nil)
	b.Cleanup(func() {
		framework.CloseSession(ssn)
		test.Close()
	})
	var task *api.TaskInfo
	for _, job := range ssn.Jobs {
		for _, t := range job.Tasks {
			if t.Name == taskName {
				task = t
			}
		}
	}
	if task == nil {
		b.Fatalf("no task %s", taskName)
	}
	all := make([]*api.NodeInfo, 0, len(ssn.Nodes))
	for _, n := range ssn.Nodes {
		all = append(all, n)
	}
	return ssn, task, all
}

// benchArgs are the benchmark's arguments (benchArguments), with
// Volcano's options at their defaults.
func benchArgs(b *testing.B) framework.Arguments {
	options.Default()
	var args framework.Arguments
	if err := yaml.Unmarshal([]byte(benchArguments), &args); err != nil {
		b.Fatal(err)
	}
	return args
}

// rejectingFloor is the floor that rejects the nodes p's predicate rejects
// for the task (rejecting).
func rejectingFloor(b *testing.B, p benchPlugin, args framework.Arguments, nodes []*v1.Node, pods []*v1.Pod, task string) benchPlugin {
	rejected := rejectedBy(b, p, args, nodes, pods, task)
	return benchPlugin{"floor-rejecting", "noop-rejecting", func(framework.Arguments) framework.Plugin { return rejecting{rejected} }}
}

// rejectedBy are the nodes a plugin's predicate rejects for the task, in a
// session of its own.
func rejectedBy(b *testing.B, p benchPlugin, args framework.Arguments, nodes []*v1.Node, pods []*v1.Pod, task string) map[string]bool {
	ssn, t, all := benchSession(b, p.name, p.builder, args, nodes, pods, task)
	rejected := map[string]bool{}
	for _, n := range all {
		if ssn.PredicateForAllocateAction(t, n) != nil {
			rejected[n.Name] = true
		}
	}
	framework.CloseSession(ssn)
	return rejected
}

// benchAllocate is BenchmarkSession's: the task through the allocate
// action's steps.
func benchAllocate(b *testing.B, ssn *framework.Session, task *api.TaskInfo, all []*api.NodeInfo) {
	place := allocator(b, ssn, task, all)
	first := place()
	perNode(b, len(all), func() {
		for range b.N {
			place()
		}
	})
	b.Logf("%s on %s", task.Name, first.Name)
}

// allocator puts the task through what Volcano's allocate action does
// with it — the predicates, the node order of the nodes that passed, the
// best node chosen, the task allocated there through a statement and the
// statement discarded — and returns the node it chose.
func allocator(b *testing.B, ssn *framework.Session, task *api.TaskInfo, all []*api.NodeInfo) func() *api.NodeInfo {
	predicate := func(task *api.TaskInfo, node *api.NodeInfo) error {
		// The allocate action's own predicate: the task fits the node's
		// future idle resources, then the plugins'.
		if ok, _ := task.InitResreq.LessEqualWithResourcesName(node.FutureIdle(), api.Zero); !ok {
			return api.NewFitError(task, node, "insufficient resources")
		}
		return ssn.PredicateForAllocateAction(task, node)
	}
	helper := util.NewPredicateHelper()
	return func() *api.NodeInfo {
		feasible, _ := helper.PredicateNodes(task, all, predicate, false, ssn.NodesInShard)
		scores := util.PrioritizeNodes(task, feasible, ssn.BatchNodeOrderFn, ssn.NodeOrderMapFn, ssn.NodeOrderReduceFn)
		best, _ := util.SelectBestNodeAndScore(scores)
		if best == nil {
			b.Fatalf("no node for %s", task.Name)
		}
		stmt := framework.NewStatement(ssn)
		if err := stmt.Allocate(task, best); err != nil {
			b.Fatal(err)
		}
		stmt.Discard()
		task.Pod.Spec.NodeName = "" // Allocate wrote it on the pod; Discard leaves it
		return best
	}
}

// BenchmarkSessionVsFloor is BenchmarkSession with resfit's session and
// the rejecting floor's open side by side, a task through each in turn in
// one loop (whichever goes first alternating), so that both see the
// machine alike: BenchmarkSession's rounds move with the order of its
// rows within a process. It reports resfit's ns per node and task, the
// floor's (floor-ns/node) and their ratio (×floor).
func BenchmarkSessionVsFloor(b *testing.B) {
	args := benchArgs(b)
	resfit := benchPlugins()[2]
	for _, n := range []int{1000, 5000} {
		nodes, pods := benchCluster(n)
		for _, task := range []string{"cpu-task", "gpu-task"} {
			floor := rejectingFloor(b, resfit, args, nodes, pods, task)
			b.Run(fmt.Sprintf("nodes=%d/task=%s", n, task), func(b *testing.B) {
				var places [2]func()
				for k, p := range []benchPlugin{floor, resfit} {
					ssn, t, all := benchSession(b, p.name, p.builder, args, nodes, pods, task)
					place := allocator(b, ssn, t, all)
					places[k] = func() { place() }
				}
				inturn.Measure(b, n, places[0], places[1])
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// BenchmarkPluginFunctions calls the session's predicate and node-order
// functions (each plugin's, through the session's dispatch) for one task,
// serially, on the nodes the allocate action asks the plugins about (those
// the task fits, by its own check), with nothing of the action around
// them: the plugins' own cost per node asked.
func BenchmarkPluginFunctions(b *testing.B) {
	benchCases(b, func(b *testing.B, ssn *framework.Session, task *api.TaskInfo, all []*api.NodeInfo) {
		var asked []*api.NodeInfo
		for _, n := range all {
			if task.InitResreq.LessEqual(n.FutureIdle(), api.Zero) {
				asked = append(asked, n)
			}
		}
		perNode(b, len(asked), func() {
			for range b.N {
				for _, node := range asked {
					_ = ssn.PredicateFn(task, node)
					if _, _, err := ssn.NodeOrderMapFn(task, node); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := ssn.BatchNodeOrderFn(task, asked); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// perNode times run (b.N tasks) and reports its time and allocations per
// task and node of the n it works on.
func perNode(b *testing.B, n int, run func()) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	run()
	b.StopTimer()
	runtime.ReadMemStats(&after)
	per := float64(b.N) * float64(n)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/per, "ns/node")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/per, "allocs/node")
	b.ReportMetric(float64(n), "nodes")
	b.ReportMetric(0, "ns/op")
}
