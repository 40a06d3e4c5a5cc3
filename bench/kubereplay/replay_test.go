package kubereplay

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/utils/ptr"

	"github.com/resfit/resfit/bench/replay/sim"
	"github.com/resfit/resfit/examples/kubescheduler/testing/schedtest"
	"github.com/resfit/resfit/resource"
)

func TestMain(m *testing.M) { schedtest.Main(m) }

var (
	flagTrace    = flag.String("trace", "", "trace directory (default ../shared/traces/openb seen from the repository root)")
	flagPods     = flag.String("pods", "", "pod list to replay instead of "+sim.PodListFile+": a file name in the trace directory, or a path")
	flagSeeds    = flag.Int("seeds", 1, "number of seeds, from 42 up")
	flagFraction = flag.Float64("fraction", 0.02, "share of each seed's workload to replay, from its start (1: all of it)")
	flagPolicies = flag.String("policies", strings.Join(Policies, ","), "policies to replay")
	flagOut      = flag.String("out", "", "directory for replay.csv and summary.csv (bench/replay's columns); empty: none")
)

// The trace through the real kube-scheduler. By default (CI) one seed and
// the first 2% of its workload; the full run, seeds 42–44 and every
// pod, is the command in the README. On every pod of the short run
// kube-scheduler must choose the node bench/replay's own pipeline
// chooses, and the result must be bench/replay's to the digit; a full
// run reports how often they agree and writes bench/replay's files.
func TestTraceThroughKubeScheduler(t *testing.T) {
	dir := *flagTrace
	if dir == "" {
		dir = sim.FindTrace()
	}
	if dir == "" {
		if os.Getenv(sim.RequireTraceEnv) != "" {
			t.Fatalf("the openb trace is required (%s is set) but not found: set -trace or keep it at ../shared/traces/openb", sim.RequireTraceEnv)
		}
		t.Skip("no openb trace: set -trace or keep it at ../shared/traces/openb")
	}
	podList := *flagPods
	if podList == "" {
		podList = sim.PodListFile
	}
	if !strings.ContainsRune(podList, os.PathSeparator) {
		podList = filepath.Join(dir, podList)
	}
	in, err := sim.ReadTraceFiles(filepath.Join(dir, sim.NodeListFile), podList)
	if err != nil {
		t.Fatal(err)
	}
	policies, err := sim.Select(sim.Policies(), *flagPolicies)
	if err != nil {
		t.Fatal(err)
	}
	c, err := sim.NewCluster(sim.Schema(), in.Nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	short := *flagFraction < 1

	server := startAPIServer(t)
	var results []*sim.Result
	var lines []string
	for _, seed := range sim.Seeds(42, *flagSeeds) {
		workload := sim.Workload(in.Pods, c.CapacityMilliGPU, 1.3, seed)
		workload = workload[:int(float64(len(workload))**flagFraction)]
		removeNodes := createNodes(t, server, in.Nodes, seed)
		for _, policy := range policies {
			start := time.Now()
			env := sim.Env{Seed: seed, Classes: in.Classes, CoresPerGPU: in.CoresPerGPU()}
			own, err := sim.Run(policy, in.Nodes, workload, in.Classes, seed, sim.Options{}, env.CoresPerGPU)
			if err != nil {
				t.Fatal(err)
			}
			r, agreed := replay(t, server, in, workload, policy, env)
			results = append(results, r)
			line := fmt.Sprintf("%-14s seed %d: %d pods, kube-scheduler leaves %.2f%% unallocated (%d pending), bench/replay %.2f%% (%d pending); same node for %d of %d pods (%.1fs)",
				policy.Name, seed, len(workload), r.Unallocated(), r.Pending, own.Unallocated(), own.Pending, agreed, len(workload), time.Since(start).Seconds())
			t.Log(line)
			fmt.Fprintln(os.Stderr, line)
			lines = append(lines, line)
			if short && (agreed != len(workload) || r.Allocation != own.Allocation || r.Pending != own.Pending) {
				t.Errorf("%s seed %d: kube-scheduler and bench/replay differ", policy.Name, seed)
			}
			if d := math.Abs(r.Unallocated() - own.Unallocated()); d > 0.3 {
				t.Errorf("%s seed %d: kube-scheduler's unallocated GPU is %.2f points from bench/replay's", policy.Name, seed, d)
			}
		}
		removeNodes()
	}
	if *flagOut != "" {
		if err := sim.WriteFiles(*flagOut, results, sim.Summarize(policies, results)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(*flagOut, "kubereplay.log"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// startAPIServer starts kube-apiserver (schedtest) and a namespace to
// replay in.
func startAPIServer(t *testing.T) *apiServer {
	t.Helper()
	s := schedtest.StartAPIServer(t, schedtest.DisabledAdmission)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s.CreateNamespace(t, ctx, "kubereplay")
	return &apiServer{Server: s, ctx: ctx}
}

// apiServer is the replay's kube-apiserver, and the test's context.
type apiServer struct {
	*schedtest.Server
	ctx context.Context
}

// createNodes makes the cluster's nodes for one seed, each with its
// priority in the seed's order of ties, and returns what removes them. The
// policies of a seed replay on the same nodes: a replay changes only its
// pods, which it deletes when it is done (making the 1,213 nodes took
// about a fifth of a policy's replay under the race detector).
func createNodes(t *testing.T, server *apiServer, nodes []sim.Node, seed uint64) (remove func()) {
	t.Helper()
	ctx, cs := server.ctx, server.Client
	order, err := sim.NodeOrder(nodes, seed, sim.TiebreakPermutation)
	if err != nil {
		t.Fatal(err)
	}
	for row, k := range order {
		if _, err := cs.CoreV1().Nodes().Create(ctx, NodeObject(nodes[k], len(order)-1-row), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		if err := cs.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			t.Error(err)
		}
	}
}

// replay runs one policy and seed on the seed's nodes (createNodes): a
// fresh namespace, a scheduler with the policy's profile, the workload one
// pod at a time. It returns bench/replay's result of kube-scheduler's
// placements and how many pods kube-scheduler placed where bench/replay's
// pipeline would have. It deletes its pods when it is done.
func replay(t *testing.T, server *apiServer, in sim.Input, workload []sim.Pod, policy sim.Policy, env sim.Env) (*sim.Result, int) {
	t.Helper()
	ctx, cs := server.ctx, server.Client
	ns := fmt.Sprintf("replay-%s-%d", strings.ToLower(strings.ReplaceAll(policy.Name, "+", "-")), env.Seed)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	profile, err := Profile(policy, env, len(in.Nodes))
	if err != nil {
		t.Fatal(err)
	}
	schedCtx, stop := context.WithCancel(ctx)
	sched := schedtest.StartScheduler(t, schedCtx, server.Config, scheduler.WithProfiles(*profile), scheduler.WithFrameworkOutOfTreeRegistry(Registry()))
	if err := schedtest.WaitForNodes(ctx, sched, len(in.Nodes)); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stop()
		zero := metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}
		if err := cs.CoreV1().Pods(ns).DeleteCollection(ctx, zero, metav1.ListOptions{}); err != nil {
			t.Error(err)
		}
	}()

	pods := &podWatch{t: t, ctx: ctx, cs: cs, ns: ns}
	pods.start()
	defer pods.stop()
	agreed := 0
	r, err := sim.Run(policy, in.Nodes, workload, in.Classes, env.Seed, sim.Options{
		Choose: func(k int, p sim.Pod, best string) (string, error) {
			node, err := pods.schedule(k, p)
			if node == best {
				agreed++
			}
			if (k+1)%progressEvery == 0 {
				fmt.Fprintf(os.Stderr, "%s seed %d: %d of %d pods, %d on bench/replay's node\n", policy.Name, env.Seed, k+1, len(workload), agreed)
			}
			return node, err
		},
		Placements: func(k int, node string, devices []int) {
			if node == "" || len(devices) == 0 {
				return
			}
			patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
				resource.HAMiPodDevicesAnnotation: DevicesAnnotation(node, devices, workload[k])}}})
			if _, err := cs.CoreV1().Pods(ns).Patch(ctx, podName(k), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		},
	}, env.CoresPerGPU)
	if err != nil {
		t.Fatal(err)
	}
	return r, agreed
}

// progressEvery is how many pods a replay schedules between progress lines
// on stderr.
const progressEvery = 1000

func podName(k int) string { return fmt.Sprintf("pod-%05d", k) }

// podWatch creates the workload's pods and watches them through one watch
// of their namespace.
type podWatch struct {
	t       *testing.T
	ctx     context.Context
	cs      clientset.Interface
	ns      string
	watcher *watchtools.RetryWatcher
}

func (w *podWatch) start() {
	list, err := w.cs.CoreV1().Pods(w.ns).List(w.ctx, metav1.ListOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	w.watcher, err = watchtools.NewRetryWatcherWithContext(w.ctx, list.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			return w.cs.CoreV1().Pods(w.ns).Watch(ctx, options)
		},
	})
	if err != nil {
		w.t.Fatal(err)
	}
}

func (w *podWatch) stop() { w.watcher.Stop() }

// schedule creates the k-th pod and waits until kube-scheduler binds it
// (its node) or finds it unschedulable ("", and the pod is deleted: in the
// replay a pod that fits nowhere stays pending for good).
func (w *podWatch) schedule(k int, p sim.Pod) (string, error) {
	pod, err := PodObject(p, w.ns, podName(k), SchedulerName)
	if err != nil {
		return "", err
	}
	if _, err := w.cs.CoreV1().Pods(w.ns).Create(w.ctx, pod, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	timeout := time.After(time.Minute)
	for {
		select {
		case e, ok := <-w.watcher.ResultChan():
			if !ok {
				return "", fmt.Errorf("the watch of pods ended while waiting for %s", pod.Name)
			}
			got, isPod := e.Object.(*v1.Pod)
			if !isPod || got.Name != pod.Name {
				continue
			}
			if got.Spec.NodeName != "" {
				return got.Spec.NodeName, nil
			}
			for _, c := range got.Status.Conditions {
				if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Reason == v1.PodReasonUnschedulable {
					zero := metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}
					return "", w.cs.CoreV1().Pods(w.ns).Delete(w.ctx, pod.Name, zero)
				}
			}
		case <-timeout:
			return "", fmt.Errorf("pod %s (%+v) neither bound nor unschedulable after a minute", pod.Name, p)
		}
	}
}
