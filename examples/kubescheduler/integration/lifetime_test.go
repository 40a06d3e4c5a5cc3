package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	kubeschedulerconfigv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/pkg/controller/job"
	"k8s.io/kubernetes/pkg/scheduler"
	configtesting "k8s.io/kubernetes/pkg/scheduler/apis/config/testing"
	"k8s.io/utils/ptr"

	"github.com/resfit/resfit/examples/kubebridge/planning"
	"github.com/resfit/resfit/examples/kubebridge/testing/fakekubelet"
	"github.com/resfit/resfit/examples/kubescheduler/plugins"
	resfitconfig "github.com/resfit/resfit/scoring/config"
)

// Nodes that empty together, end to end, with no descheduler: the real
// kube-scheduler under the README's ResfitFrag profile, the real Job
// controller, and the test playing the kubelet (fakekubelet: a pod ends
// after 70 to 100% of what its resfit.io/runs-for declares). Two nodes of
// 8 GPUs: seven Jobs of one 1-GPU pod each that runs 4 to 7 s, replaced as
// it ends, all on one node (they pack there as they start, the other node
// empty); then a pod of 1 GPU that runs an hour, bound to the other node;
// then big, a pod of 8 GPUs, which fits on neither.
//
//   - With the lifetime term (ResfitLifetime for declared ends at 10,
//     ResfitLearnedLifetime at 1000; ResfitNodeSize beside them ties the
//     two nodes, of one size), each new short pod goes to the node
//     that stays busy an hour rather than the one about to empty: the short
//     pods gather there, their old node empties, and big is bound to it
//     within 30 s of its creation.
//   - Without it (FGD and PackLeastUsed alone), each new short pod goes to
//     the fuller node, the one it left: neither node ever empties, and big
//     is not bound over four times as long as it took with the term (20 s
//     at least: three lifetimes of the short pods and more).
func TestLifetimeTermEmptiesANodeForBig(t *testing.T) {
	var took time.Duration
	for _, withTerm := range []bool{true, false} {
		t.Run(map[bool]string{true: "with the lifetime term", false: "without"}[withTerm], func(t *testing.T) {
			if !withTerm && took == 0 {
				t.Skip("big was not bound with the term")
			}
			c := startLifetimeCluster(t, withTerm)
			shorts := c.createShortJobs(7)
			c.createBoundLong(otherNode(shorts))
			big := c.createBig()
			if !withTerm {
				window := max(4*took, 20*time.Second)
				time.Sleep(time.Until(big.CreationTimestamp.Add(window)))
				if p, err := c.cs.CoreV1().Pods(c.ns).Get(c.ctx, "big", metav1.GetOptions{}); err != nil || p.Spec.NodeName != "" {
					t.Fatalf("without the term big is bound to %q within %v (%v): the short pods should keep both nodes busy\n%s", p.Spec.NodeName, window, err, c.state())
				}
				return
			}
			var bound *v1.Pod
			err := wait.PollUntilContextTimeout(c.ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
				p, err := c.cs.CoreV1().Pods(c.ns).Get(c.ctx, "big", metav1.GetOptions{})
				if err == nil && p.Spec.NodeName != "" {
					bound = p
				}
				return bound != nil, nil
			})
			if err != nil {
				t.Fatalf("big not bound within 30 s: %v\n%s", err, c.state())
			}
			took = time.Since(big.CreationTimestamp.Time)
			if bound.Spec.NodeName != shorts {
				t.Errorf("big bound to %s, want %s, where the short pods ran", bound.Spec.NodeName, shorts)
			}
			t.Logf("big bound to %s %v after its creation", bound.Spec.NodeName, took.Round(100*time.Millisecond))
		})
	}
}

// lifetimeCluster is a kube-apiserver, kube-scheduler with the ResfitFrag
// profile, the Job controller and the test's kubelet, in one namespace.
type lifetimeCluster struct {
	t   *testing.T
	ctx context.Context
	cs  kubernetes.Interface
	ns  string
}

// resfitFragProfile is the README's ResfitFrag profile (FGD at 101 over
// the stream's 1-GPU pods, ResourceStrategyFit's PackLeastUsed at 1), with
// the lifetime term at ResfitFrag's default weights when withTerm:
// ResfitLifetime following the declared ends, ResfitLearnedLifetime the
// learned ones, and ResfitNodeSize (both nodes are of one size, so it
// adds nothing here).
func resfitFragProfile(withTerm bool) kubeschedulerconfigv1.KubeSchedulerProfile {
	enabled := []kubeschedulerconfigv1.Plugin{{Name: plugins.FGDName}, {Name: plugins.ResourceStrategyFitName}}
	scores := []kubeschedulerconfigv1.Plugin{{Name: plugins.FGDName, Weight: ptr.To[int32](101)}, {Name: plugins.ResourceStrategyFitName, Weight: ptr.To[int32](1)}}
	if withTerm {
		enabled = append(enabled, kubeschedulerconfigv1.Plugin{Name: plugins.LifetimeName}, kubeschedulerconfigv1.Plugin{Name: plugins.LearnedLifetimeName},
			kubeschedulerconfigv1.Plugin{Name: plugins.NodeSizeName})
		scores = append(scores, kubeschedulerconfigv1.Plugin{Name: plugins.LifetimeName, Weight: ptr.To[int32](resfitconfig.DefaultLifetimeWeight)},
			kubeschedulerconfigv1.Plugin{Name: plugins.LearnedLifetimeName, Weight: ptr.To[int32](resfitconfig.DefaultLearnedLifetimeWeight)},
			kubeschedulerconfigv1.Plugin{Name: plugins.NodeSizeName, Weight: ptr.To[int32](resfitconfig.DefaultNodeSizeWeight)})
	}
	raw := func(s string) runtime.RawExtension { return runtime.RawExtension{Raw: []byte(s)} }
	return kubeschedulerconfigv1.KubeSchedulerProfile{
		SchedulerName:            ptr.To(v1.DefaultSchedulerName),
		PercentageOfNodesToScore: ptr.To[int32](100),
		Plugins: &kubeschedulerconfigv1.Plugins{
			MultiPoint: kubeschedulerconfigv1.PluginSet{Enabled: enabled},
			Score:      kubeschedulerconfigv1.PluginSet{Disabled: []kubeschedulerconfigv1.Plugin{{Name: "*"}}, Enabled: scores},
		},
		PluginConfig: []kubeschedulerconfigv1.PluginConfig{
			{Name: plugins.FGDName, Args: raw(`{"classes": [{"cpu": 1, "gpus": 1}]}`)},
			{Name: plugins.ResourceStrategyFitName, Args: raw(`{"plugins": [{"name": "PackLeastUsed"}]}`)},
			{Name: plugins.LifetimeName, Args: raw(`{"ends": "declared"}`)},
		},
	}
}

func startLifetimeCluster(t *testing.T, withTerm bool) *lifetimeCluster {
	cfg := configtesting.V1ToInternalWithDefaults(t, kubeschedulerconfigv1.KubeSchedulerConfiguration{
		Profiles: []kubeschedulerconfigv1.KubeSchedulerProfile{resfitFragProfile(withTerm)}})
	registry := plugins.Registry()
	// No backoff: big is tried again as soon as the cluster changes.
	testCtx := startScheduler(t, "lifetime", scheduler.WithProfiles(cfg.Profiles...), scheduler.WithFrameworkOutOfTreeRegistry(registry),
		scheduler.WithPodInitialBackoffSeconds(0), scheduler.WithPodMaxBackoffSeconds(0))
	c := &lifetimeCluster{t: t, ctx: testCtx.Ctx, cs: testCtx.ClientSet, ns: testCtx.NS.Name}
	for _, n := range []string{"gpu-a", "gpu-b"} {
		alloc := list("cpu", "96", "memory", "512Gi", "pods", "110", gpu, "8")
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{"kubernetes.io/hostname": n}},
			Status: v1.NodeStatus{Capacity: alloc, Allocatable: alloc, Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}}}
		c.must(c.cs.CoreV1().Nodes().Create(c.ctx, node, metav1.CreateOptions{}))
	}
	f := informers.NewSharedInformerFactory(kubernetes.NewForConfigOrDie(rest.AddUserAgent(testCtx.KubeConfig, "job-informers")), 0)
	jc, err := job.NewController(klog.NewContext(c.ctx, klog.Background()), kubernetes.NewForConfigOrDie(rest.AddUserAgent(testCtx.KubeConfig, "job-controller")),
		f.Core().V1().Pods(), f.Batch().V1().Jobs(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.Start(c.ctx.Done())
	go jc.Run(c.ctx, 2)
	go fakekubelet.Run(c.ctx, c.cs, c.ns, nil)
	return c
}

func (c *lifetimeCluster) must(_ any, err error) {
	c.t.Helper()
	if err != nil {
		c.t.Fatal(err)
	}
}

// gpuPod is a pod of gpus GPUs and as many cores that runs for runsFor
// ("" for nothing declared).
func gpuPod(gpus, runsFor string) v1.PodTemplateSpec {
	req := list("cpu", gpus, "memory", "1Gi", gpu, gpus)
	t := v1.PodTemplateSpec{Spec: v1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](0), RestartPolicy: v1.RestartPolicyNever,
		Containers: []v1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{Requests: req, Limits: req}}}}}
	if runsFor != "" {
		t.Annotations = map[string]string{planning.RunsForAnnotation: runsFor}
	}
	return t
}

// createShortJobs creates n Jobs of one 1-GPU pod each, replaced as it
// ends, the i-th declaring 4 s + i/2 s, and returns the node their pods
// gathered on once all n run there. Their ends, spread over seconds, keep
// the node that has them fuller than the long pod's even when the Job
// controller is slow to replace them (as it is on a loaded machine, under
// the race detector): pods of one Job, started together, would all end
// within a fraction of a second, and their node empty with no term at all.
func (c *lifetimeCluster) createShortJobs(n int) string {
	for i := range n {
		runsFor := (4*time.Second + time.Duration(i)*time.Second/2).String()
		c.must(c.cs.BatchV1().Jobs(c.ns).Create(c.ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("short-%d", i)}, Spec: batchv1.JobSpec{
			Parallelism: ptr.To[int32](1), Completions: ptr.To[int32](100000), BackoffLimit: ptr.To[int32](1000), Template: gpuPod("1", runsFor)}}, metav1.CreateOptions{}))
	}
	var node string
	c.poll(fmt.Sprintf("%d short pods running on one node", n), func() bool {
		running := c.running()
		for name, count := range running {
			if count == n && len(running) == 1 {
				node = name
			}
		}
		return node != ""
	})
	return node
}

// createBoundLong creates a pod of 1 GPU that runs an hour, bound to node,
// and waits until it runs.
func (c *lifetimeCluster) createBoundLong(node string) {
	long := gpuPod("1", "1h")
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "long", Annotations: long.Annotations}, Spec: long.Spec}
	p.Spec.NodeName = node
	c.must(c.cs.CoreV1().Pods(c.ns).Create(c.ctx, p, metav1.CreateOptions{}))
	c.poll("the long pod running", func() bool {
		p, err := c.cs.CoreV1().Pods(c.ns).Get(c.ctx, "long", metav1.GetOptions{})
		return err == nil && p.Status.Phase == v1.PodRunning
	})
}

// createBig creates the 8-GPU pod, which declares nothing, and waits until
// the scheduler has found no node for it.
func (c *lifetimeCluster) createBig() *v1.Pod {
	big := gpuPod("8", "")
	created, err := c.cs.CoreV1().Pods(c.ns).Create(c.ctx, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "big"}, Spec: big.Spec}, metav1.CreateOptions{})
	c.must(created, err)
	c.poll("big unschedulable", func() bool {
		p, err := c.cs.CoreV1().Pods(c.ns).Get(c.ctx, "big", metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == v1.PodScheduled && cond.Status == v1.ConditionFalse && cond.Reason == v1.PodReasonUnschedulable {
				return true
			}
		}
		return p.Spec.NodeName != ""
	})
	return created
}

// running counts the running pods on each node.
func (c *lifetimeCluster) running() map[string]int {
	list, err := c.cs.CoreV1().Pods(c.ns).List(c.ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	out := map[string]int{}
	for _, p := range list.Items {
		if p.Status.Phase == v1.PodRunning {
			out[p.Spec.NodeName]++
		}
	}
	return out
}

func (c *lifetimeCluster) poll(what string, cond func() bool) {
	c.t.Helper()
	if err := wait.PollUntilContextTimeout(c.ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		c.t.Fatalf("waiting for %s: %v\n%s", what, err, c.state())
	}
}

// state is where the pods are, for a failure's message.
func (c *lifetimeCluster) state() string {
	list, err := c.cs.CoreV1().Pods(c.ns).List(c.ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range list.Items {
		fmt.Fprintf(&b, "pod %s on %q, phase %s\n", p.Name, p.Spec.NodeName, p.Status.Phase)
	}
	return b.String()
}

// otherNode is the other of the two GPU nodes.
func otherNode(node string) string {
	if node == "gpu-a" {
		return "gpu-b"
	}
	return "gpu-a"
}
