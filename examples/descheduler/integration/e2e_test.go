// Package integration runs resfit's descheduler end to end on a real
// kube-apiserver (its whole server chain, so that the Room CRD is served)
// and a real etcd, run as processes (schedtest; .ci/test builds them): the real
// kube-scheduler running the shipped resfit profile with ResfitRooms, the
// real ReplicaSet, Deployment and disruption controllers of
// kube-controller-manager, in-process, and the real descheduler framework
// and evictor running the shipped policy once.
package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	cacheddiscovery "k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
	"k8s.io/client-go/util/retry"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/deployment"
	"k8s.io/kubernetes/pkg/controller/disruption"
	"k8s.io/kubernetes/pkg/controller/replicaset"
	"k8s.io/kubernetes/pkg/controller/resourceclaim"
	kubefeatures "k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/descheduler/cmd/descheduler/app/options"
	"sigs.k8s.io/descheduler/pkg/descheduler"
	"sigs.k8s.io/descheduler/pkg/features"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	"github.com/resfit/resfit/examples/descheduler/defragplugin"
	"github.com/resfit/resfit/examples/kubebridge/planning"
	"github.com/resfit/resfit/examples/kubebridge/testing/examplecluster"
	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
	"github.com/resfit/resfit/examples/kubebridge/testing/manifesttest"
	"github.com/resfit/resfit/examples/kubescheduler/plugins"
	"github.com/resfit/resfit/examples/kubescheduler/testing/schedtest"
)

func TestMain(m *testing.M) { schedtest.Main(m) }

// cluster is a running control plane: the apiserver, the scheduler, the
// controllers.
type cluster struct {
	t      *testing.T
	ctx    context.Context
	cs     kubernetes.Interface
	config *rest.Config
	// caFile is the CA of the apiserver's serving certificate, for a
	// client outside the test's process.
	caFile string
	// startReplicaSets starts the ReplicaSet controller, which
	// createDefragExample holds back until the pods its ReplicaSets are to
	// adopt are there.
	startReplicaSets func()
	// startClaims starts kube-controller-manager's resourceclaim
	// controller (claims from templates), which createDefragExample holds
	// back until the running pods' claims are there.
	startClaims func()
	// dra makes createDefragExample make the example with its GPUs
	// through DRA (examplecluster.DRADefragCluster).
	dra bool
	// register adds resfit's plugin to the descheduler's registry for
	// deschedule; nil is defragplugin.Register, as the command does.
	register func(pluginregistry.Registry)
}

// startCluster starts the apiserver with the Room CRD, the ReplicaSet,
// Deployment and disruption controllers, and the scheduler with the
// shipped profile (../../kubescheduler/manifests/configmap.yaml) and
// ResfitRooms.
func startCluster(t *testing.T, flags ...string) *cluster {
	server := schedtest.StartAPIServer(t, append([]string{"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition"}, flags...)...)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c := &cluster{t: t, ctx: ctx, cs: server.Client, config: server.Config, caFile: server.CAFile}
	manifesttest.InstallRoomCRD(t, ctx, c.config, c.cs, "../../kubescheduler/manifests/rooms.yaml")

	// kube-controller-manager's controllers, in-process.
	f := informers.NewSharedInformerFactory(kubernetes.NewForConfigOrDie(rest.AddUserAgent(c.config, "informers")), 0)
	controllers := kubernetes.NewForConfigOrDie(rest.AddUserAgent(c.config, "controllers"))
	dc, err := deployment.NewDeploymentController(ctx, f.Apps().V1().Deployments(), f.Apps().V1().ReplicaSets(), f.Core().V1().Pods(), controllers)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cacheddiscovery.NewMemCacheClient(controllers.Discovery()))
	scaleClient, err := scale.NewForConfig(c.config, mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(controllers.Discovery()))
	if err != nil {
		t.Fatal(err)
	}
	pdbc := disruption.NewDisruptionController(ctx, f.Core().V1().Pods(), f.Policy().V1().PodDisruptionBudgets(), f.Core().V1().ReplicationControllers(),
		f.Apps().V1().ReplicaSets(), f.Apps().V1().Deployments(), f.Apps().V1().StatefulSets(), controllers, mapper, scaleClient, controllers.Discovery())
	// The ReplicaSet and resourceclaim controllers are made only when
	// started: a controller that never runs leaves its queue's goroutines
	// behind.
	c.startClaims = func() {
		claims, err := resourceclaim.NewController(klog.FromContext(ctx), controllers, f.Core().V1().Pods(), f.Scheduling().V1beta1().PodGroups(),
			f.Resource().V1().ResourceClaims(), f.Resource().V1().ResourceClaimTemplates())
		if err != nil {
			t.Fatal(err)
		}
		f.Start(ctx.Done())
		go claims.Run(ctx, 2)
	}
	f.Start(ctx.Done())
	go dc.Run(ctx, 2)
	go pdbc.Run(ctx, 1)
	c.startReplicaSets = func() {
		rsc := replicaset.NewReplicaSetController(ctx, f.Apps().V1().ReplicaSets(), f.Core().V1().Pods(), controllers, replicaset.BurstReplicas)
		f.Start(ctx.Done())
		go rsc.Run(ctx, 2)
	}

	// The scheduler, with the shipped profile (ResfitRooms in it).
	// The scheduler's ConfigMap, which the descheduler reads too.
	cm := manifesttest.ConfigMap(t, "../../kubescheduler/manifests/configmap.yaml")
	c.poll("namespace kube-system", func() (bool, error) {
		_, err := c.cs.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
		return err == nil, nil
	})
	_, err = c.cs.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{})
	c.must(err)
	data := cm.Data["scheduler-config.yaml"]
	obj, _, err := schedulerscheme.Codecs.UniversalDecoder().Decode([]byte(data), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := obj.(*schedconfig.KubeSchedulerConfiguration)
	profile := &cfg.Profiles[0]
	if !slices.ContainsFunc(profile.Plugins.MultiPoint.Enabled, func(p schedconfig.Plugin) bool { return p.Name == plugins.RoomsName }) {
		t.Fatal("the shipped profile does not enable ResfitRooms, which the descheduler needs")
	}
	registry := plugins.Registry()
	// No backoff: the queue's order, not when a pod was last tried,
	// decides which pending pod goes first.
	schedtest.StartScheduler(t, ctx, c.config, scheduler.WithProfiles(cfg.Profiles...), scheduler.WithFrameworkOutOfTreeRegistry(registry),
		scheduler.WithPodInitialBackoffSeconds(0), scheduler.WithPodMaxBackoffSeconds(0))
	return c
}

func (c *cluster) poll(what string, cond func() (bool, error)) {
	c.t.Helper()
	if err := wait.PollUntilContextTimeout(c.ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) { return cond() }); err != nil {
		c.t.Fatalf("waiting for %s: %v\n%s", what, err, c.state())
	}
}

// state is what the controllers and the scheduler made of the workload,
// for a failure's message.
func (c *cluster) state() string {
	var b strings.Builder
	if list, err := c.cs.AppsV1().ReplicaSets("").List(c.ctx, metav1.ListOptions{}); err == nil {
		for _, rs := range list.Items {
			fmt.Fprintf(&b, "ReplicaSet %s/%s: generation %d, status %+v\n", rs.Namespace, rs.Name, rs.Generation, rs.Status)
		}
	}
	if list, err := c.cs.PolicyV1().PodDisruptionBudgets("").List(c.ctx, metav1.ListOptions{}); err == nil {
		for _, pdb := range list.Items {
			fmt.Fprintf(&b, "PodDisruptionBudget %s/%s: generation %d, status %+v\n", pdb.Namespace, pdb.Name, pdb.Generation, pdb.Status)
		}
	}
	if list, err := c.cs.ResourceV1().ResourceClaims("").List(c.ctx, metav1.ListOptions{}); err == nil {
		for _, claim := range list.Items {
			var held, users []string
			if a := claim.Status.Allocation; a != nil {
				for _, r := range a.Devices.Results {
					held = append(held, r.Pool+"/"+r.Device)
				}
			}
			for _, r := range claim.Status.ReservedFor {
				users = append(users, r.Name)
			}
			fmt.Fprintf(&b, "ResourceClaim %s/%s: allocated %v, reserved for %v, deleting %v\n", claim.Namespace, claim.Name, held, users, claim.DeletionTimestamp != nil)
		}
	}
	if list, err := c.cs.CoreV1().Pods("").List(c.ctx, metav1.ListOptions{}); err == nil {
		for _, p := range list.Items {
			fmt.Fprintf(&b, "pod %s/%s on %q, phase %s, deleting %v\n", p.Namespace, p.Name, p.Spec.NodeName, p.Status.Phase, p.DeletionTimestamp != nil)
		}
	}
	return b.String()
}

func (c *cluster) must(err error) {
	c.t.Helper()
	if err != nil {
		c.t.Fatal(err)
	}
}

// The defrag example's workload, run by real controllers where it moves.
const scheduler_ = "resfit-scheduler"

// createDefragExample makes the defrag example cluster
// (examplecluster.DefragCluster), its pods as edit leaves them: its nodes,
// and its pods where the
// example has them, each with the controller it names. notebook is a
// Deployment and infer a ReplicaSet, run by the real controllers: each
// adopts its running pod (created bound, owned by the ReplicaSet, as
// the pod its controller made there); the Jobs', the DaemonSet's and the
// other ReplicaSets' pods stand as they are (no controller of theirs runs:
// nothing here moves them). infer's PodDisruptionBudget is the example's,
// its status the real disruption controller's. Every pod is the resfit
// scheduler's, with no grace period (no kubelet runs to end one).
func (c *cluster) createDefragExample(withBudget bool, edit ...func([]*v1.Pod) []*v1.Pod) {
	nodes, pods, budgets := examplecluster.DefragCluster()
	var draObjects []runtime.Object
	if c.dra {
		nodes, pods, budgets, draObjects = examplecluster.DRADefragCluster()
	}
	for _, e := range edit {
		pods = e(pods)
	}
	if !withBudget {
		budgets = nil
	}
	ctx, cs := c.ctx, c.cs
	// The training jobs do not preempt: kube-scheduler's preemption would
	// otherwise evict notebook-0 (priority 0) for job-2 (100), and the
	// descheduler's case is the pending pod that may not.
	never := v1.PreemptNever
	class := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: examplecluster.TrainingPriorityClass}, Value: examplecluster.TrainingPriority, PreemptionPolicy: &never}
	_, err := cs.SchedulingV1().PriorityClasses().Create(ctx, class, metav1.CreateOptions{})
	c.must(err)
	for _, n := range nodes {
		n.CreationTimestamp = metav1.Time{}
		_, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		c.must(err)
	}
	for _, p := range pods {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.Namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			c.t.Fatal(err)
		}
	}
	// DRA: the classes, the driver's slices, the templates; the running
	// pods' claims once their pods are there.
	claims := map[string]*resourcev1.ResourceClaim{}
	for _, obj := range draObjects {
		var err error
		switch o := obj.(type) {
		case *resourcev1.DeviceClass:
			_, err = cs.ResourceV1().DeviceClasses().Create(ctx, o, metav1.CreateOptions{})
		case *resourcev1.ResourceSlice:
			_, err = cs.ResourceV1().ResourceSlices().Create(ctx, o, metav1.CreateOptions{})
		case *resourcev1.ResourceClaimTemplate:
			o.CreationTimestamp = metav1.Time{}
			_, err = cs.ResourceV1().ResourceClaimTemplates(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *resourcev1.ResourceClaim:
			claims[o.Namespace+"/"+o.OwnerReferences[0].Name] = o
		}
		c.must(err)
	}
	template := func(p *v1.Pod, labels map[string]string) v1.PodTemplateSpec {
		spec := p.Spec.DeepCopy()
		spec.NodeName = ""
		return v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: *spec}
	}
	// The controllers' objects first: the Deployment controller makes
	// notebook's ReplicaSet; the ReplicaSet controller waits until their
	// pods are there, and then adopts them, as if it had made them.
	selector := map[string]string{"app": "notebook"}
	var notebook, infer *v1.Pod
	for _, p := range pods {
		p.Spec.SchedulerName, p.Spec.TerminationGracePeriodSeconds = scheduler_, ptr.To[int64](0)
		switch p.Namespace + "/" + p.Name {
		case "notebook/notebook-0":
			notebook = p
		case "infer/infer-1":
			infer = p
		}
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "notebook", Name: "notebook"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: selector}, Template: template(notebook, selector)}}
	_, err = cs.AppsV1().Deployments("notebook").Create(ctx, d, metav1.CreateOptions{})
	c.must(err)
	c.poll("notebook's ReplicaSet", func() (bool, error) {
		list, err := cs.AppsV1().ReplicaSets("notebook").List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) == 0 {
			return false, err
		}
		notebook.Labels = list.Items[0].Spec.Template.Labels // with the template's hash
		return true, nil
	})
	inferSelector := map[string]string{"app": "infer"}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "infer", Name: "infer-7d4f9"}, Spec: appsv1.ReplicaSetSpec{
		Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: inferSelector}, Template: template(infer, inferSelector)}}
	_, err = cs.AppsV1().ReplicaSets("infer").Create(ctx, rs, metav1.CreateOptions{})
	c.must(err)
	notebook.OwnerReferences, infer.OwnerReferences = nil, nil // orphans, until adopted
	for _, p := range pods {
		claim := claims[p.Namespace+"/"+p.Name]
		c.create(p, func(pod *v1.Pod) {
			if claim == nil {
				return
			}
			// The claim its template made, allocated and reserved for the
			// pod, as the resourceclaim controller and the scheduler
			// leave it; the pod's status names it.
			claim.CreationTimestamp, claim.OwnerReferences[0].UID, claim.Status.ReservedFor[0].UID = metav1.Time{}, pod.UID, pod.UID
			status := claim.Status
			made, err := cs.ResourceV1().ResourceClaims(claim.Namespace).Create(ctx, claim, metav1.CreateOptions{})
			c.must(err)
			made.Status = status
			_, err = cs.ResourceV1().ResourceClaims(claim.Namespace).UpdateStatus(ctx, made, metav1.UpdateOptions{})
			c.must(err)
		})
	}
	if c.dra {
		c.startClaims()
	}
	c.startReplicaSets()
	for _, b := range budgets {
		b.Status = policyv1.PodDisruptionBudgetStatus{}
		_, err := cs.PolicyV1().PodDisruptionBudgets(b.Namespace).Create(ctx, b, metav1.CreateOptions{})
		c.must(err)
	}
	c.poll("the controllers settled", func() (bool, error) {
		for _, ns := range []string{"notebook", "infer"} {
			list, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
			if err != nil || len(list.Items) != 1 || list.Items[0].Status.Replicas != 1 || list.Items[0].Status.ObservedGeneration != list.Items[0].Generation {
				return false, err
			}
			pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil || len(pods.Items) != 1 || metav1.GetControllerOf(&pods.Items[0]) == nil {
				return false, err
			}
		}
		if !withBudget {
			return true, nil
		}
		pdb, err := cs.PolicyV1().PodDisruptionBudgets("infer").Get(ctx, "infer", metav1.GetOptions{})
		return err == nil && pdb.Status.ObservedGeneration == pdb.Generation && pdb.Status.CurrentHealthy == 1, err
	})
	// The scheduler has tried job-2 and found no node.
	c.unschedulable("train", "job-2")

}

// unschedulable waits until the scheduler has tried a pod and found no
// node for it.
func (c *cluster) unschedulable(namespace, name string) {
	c.t.Helper()
	c.poll(name+" unschedulable", func() (bool, error) {
		p, err := c.cs.CoreV1().Pods(namespace).Get(c.ctx, name, metav1.GetOptions{})
		if err != nil || p.Spec.NodeName != "" {
			return false, err
		}
		return slices.ContainsFunc(p.Status.Conditions, func(c v1.PodCondition) bool {
			return c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse
		}), nil
	})
}

// create makes a pod, bound where it says, and reports it running and
// ready as a kubelet would, with the claims its status names (made by
// then: before, each with the created pod).
func (c *cluster) create(p *v1.Pod, before ...func(created *v1.Pod)) {
	c.t.Helper()
	ctx, cs := c.ctx, c.cs
	phase, claims := p.Status.Phase, p.Status.ResourceClaimStatuses
	p.CreationTimestamp, p.Status = metav1.Time{}, v1.PodStatus{}
	created, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
	c.must(err)
	for _, b := range before {
		b(created)
	}
	if phase != v1.PodRunning {
		return
	}
	c.must(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got, err := cs.CoreV1().Pods(p.Namespace).Get(ctx, created.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		got.Status = v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}, ResourceClaimStatuses: claims}
		_, err = cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, got, metav1.UpdateOptions{})
		return err
	}))
}

// deschedule runs the descheduler once with the shipped policy, in its own
// framework (descheduler.RunDeschedulerStrategies), with resfit's plugin
// registered as the command registers it (or by c.register).
func (c *cluster) deschedule(edit ...func(policy string) string) {
	c.t.Helper()
	path := filepath.Join(c.t.TempDir(), "policy.yaml")
	policy := manifesttest.ConfigMap(c.t, "../manifests/policy.yaml").Data["policy.yaml"]
	for _, e := range edit {
		policy = e(policy)
	}
	c.must(os.WriteFile(path, []byte(policy), 0o600))
	descheduler.SetupPlugins()
	register := defragplugin.Register
	if c.register != nil {
		register = c.register
	}
	register(pluginregistry.PluginRegistry)
	loaded, err := descheduler.LoadPolicyConfig(path, c.cs, pluginregistry.PluginRegistry)
	c.must(err)
	rs, err := options.NewDeschedulerServer()
	c.must(err)
	rs.Client, rs.EventClient = c.cs, c.cs
	rs.DefaultFeatureGates = features.DefaultMutableFeatureGate // as the command's Apply sets them
	c.must(descheduler.RunDeschedulerStrategies(c.ctx, rs, loaded, "policy/v1"))
}

// versions are the resource versions of the pods, by namespace/name.
func (c *cluster) versions() map[string]string {
	list, err := c.cs.CoreV1().Pods("").List(c.ctx, metav1.ListOptions{})
	c.must(err)
	out := map[string]string{}
	for _, p := range list.Items {
		out[p.Namespace+"/"+p.Name] = p.ResourceVersion
	}
	return out
}

// The defrag example end to end: train/job-2 (4 GPUs) is pending; one
// descheduler run under the shipped policy evicts notebook/notebook-0
// (infer-1's PodDisruptionBudget allows no disruption), its Deployment's
// ReplicaSet makes a replacement, which the scheduler binds to gpu-a,
// where the plan put it, and job-2 is bound to gpu-b, where the move
// freed room. No other pod changed (their resource versions), and no room
// is left held.
func TestDeschedulerCarriesThePlanOut(t *testing.T) {
	c := startCluster(t)
	c.createDefragExample(true)
	before := c.versions()
	c.deschedule()
	cs, ctx := c.cs, c.ctx
	if _, err := cs.CoreV1().Pods("notebook").Get(ctx, "notebook-0", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("notebook-0 is still there: %v", err)
	}
	list, err := cs.CoreV1().Pods("notebook").List(ctx, metav1.ListOptions{LabelSelector: labels.Set{"app": "notebook"}.String()})
	c.must(err)
	if len(list.Items) != 1 || list.Items[0].Spec.NodeName != "gpu-a" {
		t.Fatalf("notebook's pods after the run: %v", podPlaces(list.Items))
	}
	job2, err := cs.CoreV1().Pods("train").Get(ctx, "job-2", metav1.GetOptions{})
	c.must(err)
	if job2.Spec.NodeName != "gpu-b" {
		t.Errorf("job-2 bound to %q, want gpu-b", job2.Spec.NodeName)
	}
	after := c.versions()
	for name, version := range before {
		if name == "notebook/notebook-0" || name == "train/job-2" {
			continue
		}
		if after[name] != version {
			t.Errorf("pod %s changed (resource version %s, then %s)", name, version, after[name])
		}
	}
	rooms, err := dynamic.NewForConfigOrDie(c.config).Resource(planning.RoomResource).List(ctx, metav1.ListOptions{})
	c.must(err)
	if len(rooms.Items) != 0 {
		t.Errorf("%d rooms left held", len(rooms.Items))
	}
}

func podPlaces(pods []v1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name+" on "+p.Spec.NodeName)
	}
	return out
}

// A pod that would take the freed room: train/job-9 asks for what job-2
// does, at a higher priority (it does not preempt either), created after
// it. The descheduler plans for the oldest pending pod only (order:
// oldest, maxPods: 1), job-2; the scheduler's queue tries job-9 first. The
// room held on gpu-b for job-2 keeps job-9 out: job-2 is bound there,
// job-9 still waits. Without ResfitRooms in the scheduler's profile (a
// mutation) job-9 takes gpu-b and the run stops, saying job-2 was not
// bound.
func TestHeldRoomKeepsTheFreedRoom(t *testing.T) {
	c := startCluster(t)
	c.createDefragExample(true)
	never := v1.PreemptNever
	urgent := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "urgent"}, Value: 200, PreemptionPolicy: &never}
	_, err := c.cs.SchedulingV1().PriorityClasses().Create(c.ctx, urgent, metav1.CreateOptions{})
	c.must(err)
	// Creation times have whole seconds: job-9's must come after job-2's.
	job2, err := c.cs.CoreV1().Pods("train").Get(c.ctx, "job-2", metav1.GetOptions{})
	c.must(err)
	time.Sleep(time.Until(job2.CreationTimestamp.Add(time.Second)))
	req := kubetest.Resources("cpu", "8", "memory", "16Gi", kubetest.GPU, "4")
	job9 := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: "job-9"}, Spec: v1.PodSpec{
		SchedulerName: scheduler_, PriorityClassName: "urgent", TerminationGracePeriodSeconds: ptr.To[int64](0),
		Containers: []v1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{Requests: req, Limits: req}}}}}
	// The Priority admission plugin reads PriorityClasses from an informer:
	// until it has seen urgent, a pod naming it is refused. Ask with dry
	// runs until it is let in.
	c.must(wait.PollUntilContextTimeout(c.ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := c.cs.CoreV1().Pods("train").Create(ctx, job9, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if apierrors.IsForbidden(err) && strings.Contains(err.Error(), "no PriorityClass") {
			return false, nil
		}
		return err == nil, err
	}))
	c.create(job9)
	c.unschedulable("train", "job-9")
	c.deschedule(func(policy string) string {
		return strings.Replace(policy, "mode: make-room", "mode: make-room\n      order: oldest\n      maxPods: 1", 1)
	})
	for name, want := range map[string]string{"job-2": "gpu-b", "job-9": ""} {
		p, err := c.cs.CoreV1().Pods("train").Get(c.ctx, name, metav1.GetOptions{})
		c.must(err)
		if p.Spec.NodeName != want {
			t.Errorf("%s bound to %q, want %q", name, p.Spec.NodeName, want)
		}
	}
}

// Without infer's PodDisruptionBudget the plan moves infer-1 instead (the
// first pod of gpu-b it tries, as kubectl resfit defrag's plan does):
// its ReplicaSet's replacement is bound to gpu-a, job-2 to gpu-b, and
// notebook-0 stays. With the budget (TestDeschedulerCarriesThePlanOut)
// infer-1 stays and notebook-0 moves.
func TestWithoutTheBudgetInferMoves(t *testing.T) {
	c := startCluster(t)
	c.createDefragExample(false)
	c.deschedule()
	cs, ctx := c.cs, c.ctx
	if _, err := cs.CoreV1().Pods("infer").Get(ctx, "infer-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("infer-1 is still there: %v", err)
	}
	list, err := cs.CoreV1().Pods("infer").List(ctx, metav1.ListOptions{})
	c.must(err)
	if len(list.Items) != 1 || list.Items[0].Spec.NodeName != "gpu-a" {
		t.Errorf("infer's pods after the run: %v", podPlaces(list.Items))
	}
	for ns, name := range map[string]string{"train": "job-2", "notebook": "notebook-0"} {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		c.must(err)
		if want := map[string]string{"job-2": "gpu-b", "notebook-0": "gpu-b"}[name]; p.Spec.NodeName != want {
			t.Errorf("%s on %q, want %q", name, p.Spec.NodeName, want)
		}
	}
}

// A gang, as Kubernetes v1.37 runs one (the GenericWorkload feature, beta:
// a PodGroup of scheduling.k8s.io/v1beta1 with a gang policy, its pods
// naming it in spec.schedulingGroup, placed whole by kube-scheduler's
// GangScheduling plugin in one pod group cycle). job-2 (4 GPUs) and
// job-2b (1 GPU) are the PodGroup pair, minCount 2: job-2b fits now, job-2
// nowhere, so neither is bound. One run plans for the pair as a whole
// (kubectl resfit defrag --for podgroup/pair plans the same): notebook-0
// goes to gpu-a, and then job-2 fits gpu-b and job-2b gpu-a, each in a
// room held for it; the run waits for both. No other pod changes.
func TestGangGetsRoom(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, kubefeatures.GenericWorkload, true) // the scheduler's
	c := startCluster(t, "--feature-gates=GenericWorkload=true", "--runtime-config=scheduling.k8s.io/v1beta1=true")
	group := "pair"
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: group}, Spec: schedulingv1beta1.PodGroupSpec{
		SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: 2}}}}
	c.createDefragExample(true, func(pods []*v1.Pod) []*v1.Pod {
		_, err := c.cs.CoreV1().Namespaces().Create(c.ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "train"}}, metav1.CreateOptions{})
		c.must(err)
		_, err = c.cs.SchedulingV1beta1().PodGroups("train").Create(c.ctx, pg, metav1.CreateOptions{})
		c.must(err)
		for _, p := range pods {
			if p.Name == "job-2" {
				// A v1beta1 PodGroup's priority is 0, and so must its
				// pods' be.
				p.Spec.SchedulingGroup, p.Spec.Priority, p.Spec.PriorityClassName = &v1.PodSchedulingGroup{PodGroupName: &group}, nil, ""
				b := p.DeepCopy()
				b.Name, b.Spec.Containers[0].Resources = "job-2b", v1.ResourceRequirements{
					Requests: kubetest.Resources("cpu", "2", "memory", "4Gi", kubetest.GPU, "1"),
					Limits:   kubetest.Resources("cpu", "2", "memory", "4Gi", kubetest.GPU, "1")}
				return append(pods, b)
			}
		}
		t.Fatal("no job-2 in the example")
		return nil
	})
	c.unschedulable("train", "job-2b")
	before := c.versions()
	c.deschedule()
	cs, ctx := c.cs, c.ctx
	list, err := cs.CoreV1().Pods("notebook").List(ctx, metav1.ListOptions{LabelSelector: labels.Set{"app": "notebook"}.String()})
	c.must(err)
	if len(list.Items) != 1 || list.Items[0].Name == "notebook-0" || list.Items[0].Spec.NodeName != "gpu-a" {
		t.Fatalf("notebook's pods after the run: %v", podPlaces(list.Items))
	}
	for name, want := range map[string]string{"job-2": "gpu-b", "job-2b": "gpu-a"} {
		p, err := cs.CoreV1().Pods("train").Get(ctx, name, metav1.GetOptions{})
		c.must(err)
		if p.Spec.NodeName != want {
			t.Errorf("%s bound to %q, want %q", name, p.Spec.NodeName, want)
		}
	}
	after := c.versions()
	for name, version := range before {
		if name == "notebook/notebook-0" || name == "train/job-2" || name == "train/job-2b" {
			continue
		}
		if after[name] != version {
			t.Errorf("pod %s changed (resource version %s, then %s)", name, version, after[name])
		}
	}
}

// The cluster changed between plan and act: a run plans notebook-0's move
// for job-2, and before the move a pod with no controller is bound to
// gpu-b, taking one of the GPUs the plan frees there. The run checks the
// pods on the nodes its plan reads, finds gpu-b's changed, and plans once
// more: no plan within the limits lets job-2 in now (gpu-b would need two
// GPUs more, and only notebook-0 may move there), so nothing is evicted.
// Without the check (a mutation) notebook-0 is evicted for nothing.
func TestClusterChangedBetweenPlanAndAct(t *testing.T) {
	c := startCluster(t)
	c.createDefragExample(true)
	before := c.versions()
	planned := 0
	c.register = func(registry pluginregistry.Registry) {
		pluginregistry.Register(defragplugin.PluginName, func(ctx context.Context, args runtime.Object, handle frameworktypes.Handle) (frameworktypes.Plugin, error) {
			p, err := defragplugin.New(ctx, args, handle)
			if err != nil {
				return nil, err
			}
			return &changeAfterPlan{Plugin: p.(*defragplugin.Plugin), change: func(ctx context.Context, plan *defragplugin.Plan) {
				planned = len(plan.Moves)
				req := kubetest.Resources("cpu", "1", "memory", "1Gi", kubetest.GPU, "1")
				intruder := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: "intruder"}, Spec: v1.PodSpec{NodeName: "gpu-b", SchedulerName: scheduler_,
					TerminationGracePeriodSeconds: ptr.To[int64](0), Containers: []v1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{Requests: req, Limits: req}}}}}
				c.create(intruder)
				lister := handle.SharedInformerFactory().Core().V1().Pods().Lister()
				c.poll("the descheduler's informer to see the intruder", func() (bool, error) {
					_, err := lister.Pods("train").Get("intruder")
					return err == nil, nil
				})
			}}, nil
		}, &defragplugin.Plugin{}, &defragplugin.Args{}, defragplugin.Validate, defragplugin.SetDefaults, registry)
	}
	c.deschedule()
	if planned != 1 {
		t.Fatalf("the first plan had %d moves, want notebook-0's", planned)
	}
	after := c.versions()
	for name, version := range before {
		if after[name] != version {
			t.Errorf("pod %s changed (resource version %s, then %s)", name, version, after[name])
		}
	}
	job2, err := c.cs.CoreV1().Pods("train").Get(c.ctx, "job-2", metav1.GetOptions{})
	c.must(err)
	if job2.Spec.NodeName != "" {
		t.Errorf("job-2 bound to %s", job2.Spec.NodeName)
	}
	rooms, err := dynamic.NewForConfigOrDie(c.config).Resource(planning.RoomResource).List(c.ctx, metav1.ListOptions{})
	c.must(err)
	if len(rooms.Items) != 0 {
		t.Errorf("%d rooms left held", len(rooms.Items))
	}
}

// changeAfterPlan is resfit's plugin with a change to the cluster between
// its plan and carrying it out.
type changeAfterPlan struct {
	*defragplugin.Plugin
	change func(context.Context, *defragplugin.Plan)
}

func (p *changeAfterPlan) Balance(ctx context.Context, nodes []*v1.Node) *frameworktypes.Status {
	plan, err := p.Plan(ctx, nodes)
	if err != nil {
		return &frameworktypes.Status{Err: err}
	}
	p.change(ctx, plan)
	if _, err := p.CarryOut(ctx, nodes, plan); err != nil {
		return &frameworktypes.Status{Err: err}
	}
	return nil
}

// The defrag example with its GPUs through DRA, as v1.37 clusters publish
// them (examplecluster.DRADefragCluster: NVIDIA's driver's slices, each
// GPU pod's claim its own, made from a ResourceClaimTemplate), with
// kube-controller-manager's resourceclaim controller making the claims of
// new pods and freeing those of pods gone, and kube-scheduler's
// DynamicResources allocating them. One run plans notebook-0 off gpu-b's
// gpu-4 onto gpu-a's gpu-6; its replacement's new claim is allocated
// gpu-a's gpu-6, the GPU the plan named, and job-2's claim the four GPUs
// of gpu-b the move left free (gpu-4 to gpu-7).
func TestDRAMoveLandsOnThePlannedGPU(t *testing.T) {
	c := startCluster(t)
	c.dra = true
	c.createDefragExample(true)
	var plan *defragplugin.Plan
	c.register = func(registry pluginregistry.Registry) {
		pluginregistry.Register(defragplugin.PluginName, func(ctx context.Context, args runtime.Object, handle frameworktypes.Handle) (frameworktypes.Plugin, error) {
			p, err := defragplugin.New(ctx, args, handle)
			if err != nil {
				return nil, err
			}
			return &changeAfterPlan{Plugin: p.(*defragplugin.Plugin), change: func(_ context.Context, made *defragplugin.Plan) { plan = made }}, nil
		}, &defragplugin.Plugin{}, &defragplugin.Args{}, defragplugin.Validate, defragplugin.SetDefaults, registry)
	}
	c.deschedule()
	if plan == nil || len(plan.Moves) != 1 || len(plan.Moves[0].TakesGPUs) != 1 {
		t.Fatalf("the run's plan: %v", plan)
	}
	planned := fmt.Sprintf("%s: gpu-%d", plan.Moves[0].To, plan.Moves[0].TakesGPUs[0])
	cs, ctx := c.cs, c.ctx
	list, err := cs.CoreV1().Pods("notebook").List(ctx, metav1.ListOptions{LabelSelector: labels.Set{"app": "notebook"}.String()})
	c.must(err)
	if len(list.Items) != 1 || list.Items[0].Name == "notebook-0" || list.Items[0].Spec.NodeName != "gpu-a" {
		t.Fatalf("notebook's pods after the run: %v", podPlaces(list.Items))
	}
	job2, err := cs.CoreV1().Pods("train").Get(ctx, "job-2", metav1.GetOptions{})
	c.must(err)
	if job2.Spec.NodeName != "gpu-b" {
		t.Fatalf("job-2 bound to %q, want gpu-b\n%s", job2.Spec.NodeName, c.state())
	}
	if planned != "gpu-a: gpu-6" {
		t.Errorf("the plan puts notebook-0's replacement on %s, want gpu-a: gpu-6", planned)
	}
	for pod, want := range map[*v1.Pod]string{&list.Items[0]: planned, job2: "gpu-b: gpu-4, gpu-5, gpu-6, gpu-7"} {
		if got := c.allocated(pod); got != want {
			t.Errorf("%s/%s's claim: %s, want %s", pod.Namespace, pod.Name, got, want)
		}
	}
}

// allocated is the devices a pod's claims are allocated, as "pool: device,
// …", waiting until its status names them.
func (c *cluster) allocated(pod *v1.Pod) string {
	c.t.Helper()
	var out string
	c.poll(pod.Name+"'s claims allocated", func() (bool, error) {
		p, err := c.cs.CoreV1().Pods(pod.Namespace).Get(c.ctx, pod.Name, metav1.GetOptions{})
		if err != nil || len(p.Status.ResourceClaimStatuses) == 0 {
			return false, err
		}
		var pool string
		var devices []string
		for _, s := range p.Status.ResourceClaimStatuses {
			claim, err := c.cs.ResourceV1().ResourceClaims(p.Namespace).Get(c.ctx, *s.ResourceClaimName, metav1.GetOptions{})
			if err != nil || claim.Status.Allocation == nil {
				return false, err
			}
			for _, r := range claim.Status.Allocation.Devices.Results {
				pool, devices = r.Pool, append(devices, r.Device)
			}
		}
		slices.Sort(devices)
		out = pool + ": " + strings.Join(devices, ", ")
		return true, nil
	})
	return out
}
