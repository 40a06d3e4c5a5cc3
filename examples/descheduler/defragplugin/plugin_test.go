package defragplugin

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/descheduler/pkg/descheduler/evictions"
	"sigs.k8s.io/descheduler/pkg/framework/plugins/defaultevictor"
	frameworktesting "sigs.k8s.io/descheduler/pkg/framework/testing"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	"github.com/resfit/resfit/examples/kubebridge/planning"
	"github.com/resfit/resfit/examples/kubebridge/testing/examplecluster"
	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
	"github.com/resfit/resfit/examples/kubebridge/testing/manifesttest"
)

// schedulerConfigMap is the kube-scheduler host's shipped ConfigMap: the
// configuration the scheduler runs, which the plugin reads.
func schedulerConfigMap(t testing.TB) *v1.ConfigMap {
	return manifesttest.ConfigMap(t, "../../kubescheduler/manifests/configmap.yaml")
}

// defragCluster is the defrag example cluster, each pod with a UID (as an
// apiserver gives it), the pending job the resfit scheduler's.
func defragCluster() ([]*v1.Node, []runtime.Object) {
	nodes, pods, budgets := examplecluster.DefragCluster()
	var objects []runtime.Object
	for _, n := range nodes {
		objects = append(objects, n)
	}
	for _, p := range pods {
		p.UID = types.UID("uid-" + p.Namespace + "-" + p.Name)
		if p.Spec.NodeName == "" {
			p.Spec.SchedulerName = "resfit-scheduler"
		}
		objects = append(objects, p)
	}
	for _, b := range budgets {
		objects = append(objects, b)
	}
	return nodes, objects
}

// newPlugin is the plugin with args over a fake clientset holding the
// objects, through the descheduler's own framework handle (its pod
// evictor and default evictor).
func newPlugin(t testing.TB, ctx context.Context, args *Args, objects ...runtime.Object) (*Plugin, *fake.Clientset) {
	t.Helper()
	client := fake.NewClientset(objects...)
	handle, _, err := frameworktesting.InitFrameworkHandle(ctx, client, evictions.NewOptions(), defaultevictor.DefaultEvictorArgs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	SetDefaults(args)
	plugin, err := New(ctx, args, handle)
	if err != nil {
		t.Fatal(err)
	}
	// The descheduler starts its informers after building its plugins;
	// the handle's were started before.
	f := handle.SharedInformerFactory()
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	return plugin.(*Plugin), client
}

// On the defrag example, make-room under the scheduler's shipped
// configuration plans what kubectl resfit defrag plans (resfitctl's
// TestDefragWorked): train/job-2 needs one move, notebook/notebook-0 from
// gpu-b's GPU 1 to gpu-a's GPU 6, which lets it in on gpu-b; infer-1's
// budget allows no disruption; the DaemonSet's pods and kube-system's may
// not move.
func TestPlanOnTheDefragExample(t *testing.T) {
	ctx := t.Context()
	nodes, objects := defragCluster()
	plugin, _ := newPlugin(t, ctx, &Args{ConfigMap: &ConfigMapRef{Namespace: "kube-system", Name: "resfit-scheduler-config"}, Mode: ModeMakeRoom},
		append(objects, schedulerConfigMap(t))...)
	plan, err := plugin.Plan(ctx, nodes)
	if err != nil {
		t.Fatal(err)
	}
	// The moves' table is kubectl resfit defrag's (its README's example,
	// line for line).
	want := `Plan (make-room) for train/job-2: 1 move.

MOVE  POD                  FROM   TO             FREES ON FROM
1     notebook/notebook-0  gpu-b  gpu-a (GPU 6)  cpu 2, memory 8Gi, nvidia.com/gpu 1 (GPU 1)

Then train/job-2 goes to gpu-b.

3 pods may not move: a DaemonSet's pod (2); system-critical or in kube-system (1).
`
	if got := plan.String(); got != want {
		t.Errorf("plan\n got %s\nwant %s", got, want)
	}
}

// A gang on the defrag example: job-2 (4 GPUs) and job-2b (1 GPU) of the
// pod group train/pair (spec.schedulingGroup). job-2b would fit alone, but
// a gang fits whole or waits: the run plans for both, the one move lets
// both in. With maxPods 1 the gang is more than a run plans for, and the
// run says so; a pod after it in the order is not planned for in its place.
func TestPlanForAGang(t *testing.T) {
	ctx := t.Context()
	nodes, objects := defragCluster()
	group := "pair"
	for _, o := range objects {
		if p, ok := o.(*v1.Pod); ok && p.Name == "job-2" {
			p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &group}
			b := p.DeepCopy()
			b.Name, b.UID = "job-2b", "uid-train-job-2b"
			b.Spec.Containers[0].Resources.Requests = kubetest.Resources("cpu", "2", "memory", "4Gi", kubetest.GPU, "1")
			b.Spec.Containers[0].Resources.Limits = b.Spec.Containers[0].Resources.Requests
			objects = append(objects, b)
			break
		}
	}
	for maxPods, want := range map[int]string{
		2: `Plan (make-room) for train/job-2, train/job-2b: 1 move.

MOVE  POD                  FROM   TO             FREES ON FROM
1     notebook/notebook-0  gpu-b  gpu-a (GPU 6)  cpu 2, memory 8Gi, nvidia.com/gpu 1 (GPU 1)

Then train/job-2 goes to gpu-b, train/job-2b goes to gpu-a.

3 pods may not move: a DaemonSet's pod (2); system-critical or in kube-system (1).
`,
		1: `Plan (make-room): no pending GPU pod to plan for.

3 pods may not move: a DaemonSet's pod (2); system-critical or in kube-system (1).
warning: pod group train/pair has 2 pending pods, more than args.maxPods (1): not planned for
`,
	} {
		plugin, _ := newPlugin(t, ctx, &Args{ConfigMap: &ConfigMapRef{Namespace: "kube-system", Name: "resfit-scheduler-config"}, Mode: ModeMakeRoom, MaxPods: &maxPods},
			append(objects, schedulerConfigMap(t))...)
		plan, err := plugin.Plan(ctx, nodes)
		if err != nil {
			t.Fatal(err)
		}
		if got := plan.String(); got != want {
			t.Errorf("maxPods %d: plan\n got %s\nwant %s", maxPods, got, want)
		}
	}
}

// The arguments' defaults, and each bad argument named by its path with
// its value.
func TestArgs(t *testing.T) {
	a := &Args{ConfigFile: "resfit.yaml", Mode: ModeGiveBack}
	SetDefaults(a)
	if a.Order != OrderQueue || *a.MovesPerPod != 2 || *a.MaxMoves != 4 || *a.MaxPods != 8 || a.SearchTimeout.Duration != 10*time.Second || a.ReplacementTimeout.Duration != 2*time.Minute ||
		a.StarveAfter.Duration != time.Hour || a.Patience.Duration != 2*time.Hour || a.HoldFor.Duration != 10*time.Minute || *a.Holds != 1 {
		t.Errorf("defaults: %+v", a)
	}
	if err := Validate(a); err != nil {
		t.Errorf("valid arguments: %v", err)
	}
	for _, c := range []struct {
		change func(*Args)
		want   string
	}{
		{func(a *Args) { a.ConfigFile = "" }, "args.configFile: Required value"},
		{func(a *Args) { a.ConfigMap = &ConfigMapRef{Name: "x"} }, `args.configMap: Invalid value: "/x": give configFile or configMap, not both`},
		{func(a *Args) { a.ConfigFile, a.ConfigMap = "", &ConfigMapRef{Name: "x"} }, "args.configMap.namespace: Required value"},
		{func(a *Args) { a.Mode = "spread" }, `args.mode: Unsupported value: "spread": supported values: "make-room", "give-back"`},
		{func(a *Args) { a.Order = "newest" }, `args.order: Unsupported value: "newest"`},
		{func(a *Args) { a.MovesPerPod = new(-1) }, "args.movesPerPod: Invalid value: -1: must be at least 1 and at most 8"},
		{func(a *Args) { a.MovesPerPod = new(0) }, "args.movesPerPod: Invalid value: 0: must be at least 1 and at most 8"},
		{func(a *Args) { a.MovesPerPod = new(1_000_000_000) }, "args.movesPerPod: Invalid value: 1000000000: must be at least 1 and at most 8"},
		{func(a *Args) { a.MaxPods = new(0) }, "args.maxPods: Invalid value: 0: must be at least 1 and at most 1000"},
		{func(a *Args) { a.MaxPods = new(1_000_000_000) }, "args.maxPods: Invalid value: 1000000000: must be at least 1 and at most 1000"},
		{func(a *Args) { a.Holds = new(0) }, "args.holds: Invalid value: 0: must be at least 1 and at most 1000"},
		{func(a *Args) { a.Holds = new(5000) }, "args.holds: Invalid value: 5000: must be at least 1 and at most 1000"},
		{func(a *Args) { a.SearchTimeout = &metav1.Duration{Duration: 100000 * time.Hour} }, `args.searchTimeout: Invalid value: "100000h0m0s": must be above 0 and at most 10m0s`},
		{func(a *Args) { a.SearchTimeout = &metav1.Duration{} }, `args.searchTimeout: Invalid value: "0s": must be above 0`},
		{func(a *Args) { a.MaxMovesPerHour = "1e-300%" }, `args.maxMovesPerHour: Invalid value: "1e-300%": must be a percentage in [0.001%, 100%]`},
		{func(a *Args) { a.MaxMoves = new(5000) }, "args.maxMoves: Invalid value: 5000: must be at least 0 and at most 1000"},
		{func(a *Args) { a.MaxMovesPerNode = -2 }, "args.maxMovesPerNode: Invalid value: -2: must be at least 0 and at most 1000"},
		{func(a *Args) { a.ReplacementTimeout = &metav1.Duration{Duration: -time.Second} }, `args.replacementTimeout: Invalid value: "-1s": must be above 0`},
		{func(a *Args) { a.MaxMovesPerHour = "1" }, `args.maxMovesPerHour: Invalid value: "1": must be a percentage in [0.001%, 100%]`},
		{func(a *Args) { a.MaxMovesPerHour = "0%" }, `args.maxMovesPerHour: Invalid value: "0%"`},
	} {
		b := *a
		c.change(&b)
		if err := Validate(&b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

// world stands in for the ReplicaSet controller and the scheduler in the
// tests of carrying a plan out (the real ones run in the end-to-end
// test): an eviction deletes the pod and, when landOn says where, makes
// its replacement, bound there; the pending pod is then bound to bindTo.
type world struct {
	client         *fake.Clientset
	landOn, bindTo string
	pending        *v1.Pod
	rooms          *fakeRooms
	// heldAtEviction are the rooms held when the pod was evicted.
	heldAtEviction []string
}

// fakeRooms records the rooms held, by namespace/name, in the order made.
type fakeRooms struct {
	held []string
	all  []string
}

func (f *fakeRooms) Create(_ context.Context, room planning.Room) (string, error) {
	key := room.Namespace + "/" + room.Name + "-1 on " + room.Node
	f.held, f.all = append(f.held, key), append(f.all, key)
	return room.Name + "-1", nil
}

func (f *fakeRooms) List(context.Context) (map[string]planning.Room, error) { return nil, nil }

func (f *fakeRooms) Delete(_ context.Context, namespace, name string) error {
	f.held = slices.DeleteFunc(f.held, func(k string) bool { return strings.HasPrefix(k, namespace+"/"+name+" ") })
	return nil
}

func (w *world) react(action clienttesting.Action) (bool, runtime.Object, error) {
	ev, ok := action.(clienttesting.CreateAction)
	if !ok || action.GetSubresource() != "eviction" {
		return false, nil, nil
	}
	name := ev.GetObject().(metav1.Object).GetName()
	ns := action.GetNamespace()
	w.heldAtEviction = slices.Clone(w.rooms.held)
	tracker := w.client.Tracker()
	obj, err := tracker.Get(v1.SchemeGroupVersion.WithResource("pods"), ns, name)
	if err != nil {
		return true, nil, err
	}
	pod := obj.(*v1.Pod)
	if err := tracker.Delete(v1.SchemeGroupVersion.WithResource("pods"), ns, name); err != nil {
		return true, nil, err
	}
	if w.landOn != "" {
		repl := pod.DeepCopy()
		repl.Name, repl.UID, repl.Spec.NodeName, repl.ResourceVersion = name+"-again", pod.UID+"-again", w.landOn, ""
		if err := tracker.Add(repl); err != nil {
			return true, nil, err
		}
		if w.bindTo != "" {
			bound := w.pending.DeepCopy()
			bound.Spec.NodeName = w.bindTo
			if err := tracker.Update(v1.SchemeGroupVersion.WithResource("pods"), bound, bound.Namespace); err != nil {
				return true, nil, err
			}
		}
	}
	return true, nil, nil
}

// Carrying the plan out: rooms are held for notebook-0's replacement on
// gpu-a and for job-2 on gpu-b, then notebook-0 is evicted through the
// descheduler's evictor; its replacement landing on gpu-a and job-2 bound
// on gpu-b are a plan carried out, and the rooms are let go of whatever
// happens. A replacement that lands back on gpu-b stops the
// plan, and one that is never bound times out, each saying so.
func TestCarryOut(t *testing.T) {
	for _, c := range []struct {
		name, landOn, bindTo, err string
	}{
		{"as planned", "gpu-a", "gpu-b", ""},
		{"elsewhere", "gpu-b", "", "move 1: notebook/notebook-0's replacement notebook-0-again is bound to gpu-b, not gpu-a as planned; the plan stops"},
		{"never bound", "", "", "move 1: notebook/notebook-0's replacement was not bound within 1s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := t.Context()
			nodes, objects := defragCluster()
			args := &Args{ConfigMap: &ConfigMapRef{Namespace: "kube-system", Name: "resfit-scheduler-config"}, Mode: ModeMakeRoom,
				ReplacementTimeout: &metav1.Duration{Duration: time.Second}, MaxMovesPerHour: "100%"}
			plugin, client := newPlugin(t, ctx, args, append(objects, schedulerConfigMap(t))...)
			plugin.lastRun = plugin.lastRun.Add(-time.Hour) // an hour's worth held: a move for each running pod
			pods, err := plugin.pods.List(labels.Everything())
			if err != nil {
				t.Fatal(err)
			}
			before := running(pods)
			w := &world{client: client, landOn: c.landOn, bindTo: c.bindTo, rooms: &fakeRooms{}}
			plugin.rooms = w.rooms
			for _, o := range objects {
				if p, ok := o.(*v1.Pod); ok && p.Name == "job-2" {
					w.pending = p
				}
			}
			client.PrependReactor("create", "pods", w.react)
			status := plugin.Balance(ctx, nodes)
			switch {
			case c.err == "" && status != nil:
				t.Fatalf("balance: %v", status.Err)
			case c.err != "" && (status == nil || !strings.Contains(status.Err.Error(), c.err)):
				t.Fatalf("balance: %v, want %q", status, c.err)
			}
			if _, err := client.CoreV1().Pods("notebook").Get(ctx, "notebook-0", metav1.GetOptions{}); err == nil {
				t.Error("notebook-0 was not evicted")
			}
			want := []string{"notebook/move-notebook-0-1 on gpu-a", "train/pending-job-2-1 on gpu-b"}
			if !slices.Equal(w.heldAtEviction, want) {
				t.Errorf("rooms held at the eviction %v, want %v", w.heldAtEviction, want)
			}
			if len(w.rooms.held) > 0 {
				t.Errorf("rooms still held after the run: %v", w.rooms.held)
			}
			// The move made is spent from the hourly allowance.
			if held := plugin.allowance.Accrue(before+1, 0); c.err == "" && held != before-1 {
				t.Errorf("the allowance holds %d moves after one of %d was made, want %d", held, before, before-1)
			}
		})
	}
}

// The hourly allowance, as the churn replay's -per-hour: 100% of the 8
// running pods an hour, an hour after the last run, holds the one move
// job-2 needs; 1% holds none, and the run says so.
func TestHourlyAllowance(t *testing.T) {
	for _, c := range []struct {
		share string
		moves int
	}{{"100%", 1}, {"1%", 0}} {
		ctx := t.Context()
		nodes, objects := defragCluster()
		args := &Args{ConfigMap: &ConfigMapRef{Namespace: "kube-system", Name: "resfit-scheduler-config"}, Mode: ModeMakeRoom, MaxMovesPerHour: c.share}
		plugin, _ := newPlugin(t, ctx, args, append(objects, schedulerConfigMap(t))...)
		plugin.lastRun = plugin.lastRun.Add(-time.Hour)
		plugin.accrue()
		plan, err := plugin.Plan(ctx, nodes)
		if err != nil {
			t.Fatal(err)
		}
		if len(plan.Moves) != c.moves {
			t.Errorf("%s an hour: %s", c.share, plan)
		}
		if c.moves == 0 && !slices.ContainsFunc(plan.Warnings, func(w string) bool { return strings.Contains(w, "maxMovesPerHour") }) {
			t.Errorf("%s an hour: no move, and no word of the allowance: %s", c.share, plan)
		}
	}
}

// The cluster changed between plan and act: a pod without a controller
// came to gpu-b (2 GPUs) after the plan was made. Before its first move
// the run sees that the pods on gpu-b are not those the plan read, and
// plans again: with gpu-b this full no plan of at most 2 moves lets job-2
// in, so nothing is evicted.
func TestClusterChangedSincePlan(t *testing.T) {
	ctx := t.Context()
	plugin, client, nodes, plan := plannedOneMove(t)
	req := kubetest.Resources("cpu", "2", "memory", "4Gi", kubetest.GPU, "2")
	newcomer := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "newcomer", UID: "uid-newcomer"}, Spec: v1.PodSpec{NodeName: "gpu-b",
		Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: req, Limits: req}}}}, Status: v1.PodStatus{Phase: v1.PodRunning}}
	if _, err := client.CoreV1().Pods("web").Create(ctx, newcomer, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		_, err := plugin.pods.Pods("web").Get("newcomer")
		return err == nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	made, err := plugin.carryOut(ctx, nodes, plan)
	if err != nil || made != 0 {
		t.Fatalf("carried out: %d moves, %v", made, err)
	}
	if _, err := client.CoreV1().Pods("notebook").Get(ctx, "notebook-0", metav1.GetOptions{}); err != nil {
		t.Errorf("notebook-0 was evicted: %v", err)
	}
}

// refusingHandle is a descheduler handle whose evictor's last check, made
// right before an eviction, refuses every pod; its filter accepts them.
type refusingHandle struct{ frameworktypes.Handle }

func (h refusingHandle) Evictor() frameworktypes.Evictor { return refusingEvictor{h.Handle.Evictor()} }

type refusingEvictor struct{ frameworktypes.Evictor }

func (refusingEvictor) PreEvictionFilter(*v1.Pod) bool { return false }

// The evictor's PreEvictionFilter is asked at act time, right before each
// eviction: when it refuses, nothing is evicted and the run says why.
func TestPreEvictionFilterAtActTime(t *testing.T) {
	ctx := t.Context()
	plugin, client, nodes, plan := plannedOneMove(t)
	plugin.handle = refusingHandle{plugin.handle}
	made, err := plugin.carryOut(ctx, nodes, plan)
	if made != 0 || err == nil || err.Error() != "move 1: the evictor refuses to evict notebook/notebook-0 now" {
		t.Errorf("carried out %d moves, %v", made, err)
	}
	if _, err := client.CoreV1().Pods("notebook").Get(ctx, "notebook-0", metav1.GetOptions{}); err != nil {
		t.Errorf("notebook-0 was evicted: %v", err)
	}
}

// plannedOneMove is make-room's plugin on the defrag example, rooms held
// in memory, with its plan of one move (notebook-0 to gpu-a for job-2).
func plannedOneMove(t *testing.T) (*Plugin, *fake.Clientset, []*v1.Node, *Plan) {
	t.Helper()
	nodes, objects := defragCluster()
	args := &Args{ConfigMap: &ConfigMapRef{Namespace: "kube-system", Name: "resfit-scheduler-config"}, Mode: ModeMakeRoom,
		ReplacementTimeout: &metav1.Duration{Duration: time.Second}}
	plugin, client := newPlugin(t, t.Context(), args, append(objects, schedulerConfigMap(t))...)
	plugin.rooms = &fakeRooms{}
	plan, err := plugin.Plan(t.Context(), nodes)
	if err != nil || len(plan.Moves) != 1 {
		t.Fatalf("plan %v, %v", plan, err)
	}
	return plugin, client, nodes, plan
}
