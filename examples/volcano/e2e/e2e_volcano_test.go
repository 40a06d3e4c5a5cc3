//go:build volcano

// Package e2e runs vc-scheduler with resfit's plugins on a real
// kube-apiserver and etcd, each a process of its own. It is a package of
// its own: it is built as the static vc-scheduler is built (without cgo,
// its packages compiled once for both), and the plugins' tests under the
// race detector.
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	schedulingv1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
	vcclient "volcano.sh/apis/pkg/client/clientset/versioned"

	"github.com/resfit/resfit/examples/internal/apiservertest"
	resfit "github.com/resfit/resfit/examples/volcano"
)

// volcanoCRDs are the custom resources vc-scheduler's informers wait for:
// its pod groups and queues, the hypernodes of network topology, and the
// nodes' NUMA topologies (feature gate ResourceTopology, on by default). The
// Volcano source tree the check builds against keeps no CRD manifests, so
// each is defined here as Volcano defines it — group, version, kind,
// scope, and a status subresource where Volcano's has one (queues and
// hypernodes; vc-scheduler updates a pod group whole) — with an open
// schema, which keeps every field of the real objects.
var volcanoCRDs = []struct {
	group, kind, plural string
	namespaced, status  bool
}{
	{"scheduling.volcano.sh", "PodGroup", "podgroups", true, false},
	{"scheduling.volcano.sh", "Queue", "queues", false, true},
	{"topology.volcano.sh", "HyperNode", "hypernodes", false, true},
	{"nodeinfo.volcano.sh", "Numatopology", "numatopologies", false, false},
}

func crd(group, kind, plural string, namespaced, status bool) *unstructured.Unstructured {
	scope := "Cluster"
	if namespaced {
		scope = "Namespaced"
	}
	version := map[string]any{
		"name":   map[string]string{"scheduling.volcano.sh": "v1beta1", "topology.volcano.sh": "v1alpha1", "nodeinfo.volcano.sh": "v1alpha1"}[group],
		"served": true, "storage": true,
		"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
	}
	if status {
		version["subresources"] = map[string]any{"status": map[string]any{}}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": plural + "." + group},
		"spec": map[string]any{
			"group": group, "scope": scope,
			"names":    map[string]any{"kind": kind, "plural": plural, "singular": strings.ToLower(kind), "listKind": kind + "List"},
			"versions": []any{version},
		},
	}}
}

// cluster is a real kube-apiserver on a real etcd with Volcano's custom
// resources, and clients for it.
type cluster struct {
	config *rest.Config
	// servingCA is the file of the CA that signed the server's serving
	// certificate (the client configuration's CA too).
	servingCA string
	kube      kubernetes.Interface
	vc        vcclient.Interface
}

func startCluster(t *testing.T) *cluster {
	// No kubelet reports the nodes ready here: the admission plugin that
	// taints a new node not-ready until then is off. Requests are
	// authorized by RBAC, as in a cluster (the test's own client is of
	// system:masters).
	config, servingCA := startAPIServer(t, "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition", "--authorization-mode=RBAC")
	c := &cluster{config: config, servingCA: servingCA}
	c.kube = kubernetes.NewForConfigOrDie(c.config)
	// Volcano's types have no protobuf form: its client speaks JSON.
	jsonConfig := rest.CopyConfig(c.config)
	jsonConfig.ContentType, jsonConfig.AcceptContentTypes = "application/json", ""
	c.vc = vcclient.NewForConfigOrDie(jsonConfig)
	dyn := dynamic.NewForConfigOrDie(c.config)
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	ctx := context.Background()
	for _, d := range volcanoCRDs {
		if _, err := dyn.Resource(crds).Create(ctx, crd(d.group, d.kind, d.plural, d.namespaced, d.status), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Served once the queues can be listed.
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := c.vc.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatalf("Volcano's custom resources not served: %v", err)
	}
	return c
}

// A scheduler is a vc-scheduler binary check.sh built, named by an
// environment variable, with flags of its own.
type scheduler struct {
	env   string // the variable that names the binary
	flags func(t *testing.T) []string
}

var (
	// resfitScheduler is resfit's vc-scheduler (cmd/vc-scheduler).
	resfitScheduler = scheduler{env: "VC_SCHEDULER"}
	// volcanoWithPlugin is Volcano's own scheduler command loading resfit
	// as a Go plugin (cmd/resfit-plugin) from its plugin directory.
	volcanoWithPlugin = scheduler{env: "VC_SCHEDULER_VOLCANO", flags: func(t *testing.T) []string {
		so := os.Getenv("RESFIT_PLUGIN")
		if so == "" {
			t.Fatal("RESFIT_PLUGIN: resfit's plugins built as a Go plugin (check.sh builds it)")
		}
		dir := t.TempDir()
		if err := os.Symlink(so, filepath.Join(dir, "resfit.so")); err != nil {
			t.Fatal(err)
		}
		return []string{"--plugins-dir=" + dir}
	}}
)

// runScheduler runs a vc-scheduler against the cluster with a scheduler
// configuration, until the test ends.
func (c *cluster) runScheduler(t *testing.T, s scheduler, conf string) {
	bin := os.Getenv(s.env)
	if bin == "" {
		t.Fatalf("%s: the vc-scheduler binary to run (check.sh builds it)", s.env)
	}
	dir := t.TempDir()
	kubeconfig := clientcmdapi.NewConfig()
	tls := c.config.TLSClientConfig
	kubeconfig.Clusters["test"] = &clientcmdapi.Cluster{Server: c.config.Host, CertificateAuthority: tls.CAFile, CertificateAuthorityData: tls.CAData, TLSServerName: tls.ServerName, InsecureSkipTLSVerify: tls.Insecure}
	kubeconfig.AuthInfos["test"] = &clientcmdapi.AuthInfo{Token: c.config.BearerToken, TokenFile: c.config.BearerTokenFile,
		ClientCertificate: tls.CertFile, ClientCertificateData: tls.CertData, ClientKey: tls.KeyFile, ClientKeyData: tls.KeyData}
	kubeconfig.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test"}
	kubeconfig.CurrentContext = "test"
	if err := clientcmd.WriteToFile(*kubeconfig, filepath.Join(dir, "kubeconfig")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "volcano-scheduler.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join(dir, "vc-scheduler.log")
	// (Registered before run's own cleanup, so that it runs after the
	// scheduler has stopped.)
	t.Cleanup(func() {
		// A plugin the scheduler does not know is skipped, logged at
		// every session.
		if text, _ := os.ReadFile(logs); strings.Contains(string(text), "Failed to get plugin") {
			t.Errorf("%s did not know a plugin of the configuration: %s", bin, text[strings.Index(string(text), "Failed to get plugin"):][:80])
		}
		if t.Failed() {
			text, _ := os.ReadFile(logs)
			var lines []string
			for _, line := range strings.Split(string(text), "\n") {
				if !strings.Contains(line, "scheduler.go:1") { // not the configuration, logged line by line
					lines = append(lines, line)
				}
			}
			t.Logf("vc-scheduler's last log lines:\n%s", strings.Join(lines[max(0, len(lines)-80):], "\n"))
		}
	})
	args := []string{"--kubeconfig=" + filepath.Join(dir, "kubeconfig"), "--scheduler-conf=" + filepath.Join(dir, "volcano-scheduler.conf"),
		"--leader-elect=false", "--schedule-period=100ms", "--enable-healthz=false", "--enable-metrics=false", "--listen-address=127.0.0.1:0", "-v=3"}
	if s.flags != nil {
		args = append(args, s.flags(t)...)
	}
	apiservertest.Run(t, logs, bin, args...)
}

func quantities(pairs ...string) v1.ResourceList {
	l := v1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		l[v1.ResourceName(pairs[i])] = kres.MustParse(pairs[i+1])
	}
	return l
}

func (c *cluster) node(t *testing.T, name string, alloc v1.ResourceList) {
	alloc[v1.ResourcePods] = kres.MustParse("110")
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Capacity: alloc, Allocatable: alloc,
		Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}}}
	if _, err := c.kube.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// gang creates a pod group of the pods (minMember all of them) in the
// default queue, and its pods for Volcano to schedule; a pod with a node
// is created bound there (a running load).
func (c *cluster) gang(t *testing.T, ns, name string, requests []v1.ResourceList, node string) []string {
	ctx := context.Background()
	pg := &schedulingv1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: schedulingv1.PodGroupSpec{MinMember: int32(len(requests)), Queue: "default"}}
	if _, err := c.vc.SchedulingV1beta1().PodGroups(ns).Create(ctx, pg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for i, r := range requests {
		p := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, i), Namespace: ns,
				Annotations: map[string]string{schedulingv1.KubeGroupNameAnnotationKey: name}},
			Spec: v1.PodSpec{SchedulerName: "volcano", NodeName: node, Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: r, Limits: limitsOf(r)}}}},
		}
		if _, err := c.kube.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		names = append(names, p.Name)
	}
	return names
}

// limitsOf is a pod's limits: its extended resources, which must be limited.
func limitsOf(r v1.ResourceList) v1.ResourceList {
	l := v1.ResourceList{}
	for name, q := range r {
		if strings.Contains(string(name), "/") {
			l[name] = q
		}
	}
	return l
}

// placed waits until every pod is bound and returns their nodes; or, with
// none, waits the time given and returns the nodes then (empty for a pod
// not bound).
func (c *cluster) placed(t *testing.T, ns string, pods []string, settle time.Duration) []string {
	t.Helper()
	ctx := context.Background()
	nodes := make([]string, len(pods))
	deadline := time.Now().Add(30 * time.Second)
	if settle > 0 {
		deadline = time.Now().Add(settle)
	}
	for {
		all := true
		for i, name := range pods {
			p, err := c.kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			nodes[i] = p.Spec.NodeName
			all = all && nodes[i] != ""
		}
		if (all && settle == 0) || time.Now().After(deadline) {
			if settle == 0 && !all {
				t.Fatalf("pods %v not all bound after 30 s: %v", pods, nodes)
			}
			return nodes
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// schedulerConf is a volcano-scheduler.conf whose resource scores are the
// plugin named, with Volcano's released resource-strategy-fit arguments
// and sra retention (CPU tasks kept off GPU nodes).
func schedulerConf(plugin string) string {
	return `actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: proportion
  - name: ` + plugin + `
    arguments:
      resources:
        nvidia.com/gpu: {type: MostAllocated, weight: 2}
        cpu: {type: LeastAllocated, weight: 1}
      sra:
        enable: true
        resources: nvidia.com/gpu
        weight: 10
        resourceWeight: {nvidia.com/gpu: 1}
`
}

// vc-scheduler with resfit's plugins, on a real kube-apiserver and etcd:
// pods created through the API in pod groups of the default queue, bound
// by the scheduler. On two GPU nodes (gpu-a running a 4-GPU load) and two
// CPU nodes, under resource-strategy-fit's released arguments with sra
// retention:
//
//   - a 2-GPU pod packs onto gpu-a (GPU MostAllocated: 6 of 8 used after,
//     against 2 of 8 on gpu-b);
//   - a CPU pod goes to a CPU node (sra retention scores the nodes without
//     GPUs for a task that asks for none), the emptier cpu-a;
//   - a gang of three 4-GPU pods, of which only two fit (gpu-b's 8), binds
//     none; once it is gone, a gang of two binds both, on gpu-b.
//
// The same scenario under Volcano's own resource-strategy-fit binds the
// same pods to the same nodes, and so does Volcano's own scheduler command
// with resfit loaded from its plugin directory (resfit.so), where check.sh
// plugin built them (two more builds of Volcano and Kubernetes, with cgo
// and as a plugin: CI does not run it).
func TestVCSchedulerBindsWithResfit(t *testing.T) {
	c := startCluster(t)
	c.defaultQueue(t)
	runs := []struct {
		name, plugin string
		scheduler    scheduler
	}{
		{"resfit", resfit.ResourceStrategyFitPluginName, resfitScheduler},
		{"volcano", "resource-strategy-fit", resfitScheduler},
		{"resfit-so", resfit.ResourceStrategyFitPluginName, volcanoWithPlugin},
	}
	outcomes := map[string]string{}
	for _, run := range runs {
		t.Run(run.name, func(t *testing.T) {
			if run.scheduler.env == volcanoWithPlugin.env && os.Getenv(run.scheduler.env) == "" {
				t.Skipf("%s unset: check.sh plugin builds Volcano's own scheduler and resfit.so, and runs this", run.scheduler.env)
			}
			outcomes[run.name] = fmt.Sprint(scenario(t, c, run.name, func(t *testing.T) {
				c.runScheduler(t, run.scheduler, schedulerConf(run.plugin))
			}))
		})
	}
	for _, run := range runs[1:] {
		if got, ok := outcomes[run.name]; ok && got != outcomes["resfit"] {
			t.Errorf("%s bound pods as %v; resfit's vc-scheduler %v", run.name, got, outcomes["resfit"])
		}
	}
}

// defaultQueue creates Volcano's default queue, open, as Volcano's
// installation does.
func (c *cluster) defaultQueue(t *testing.T) {
	ctx := context.Background()
	q := &schedulingv1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: schedulingv1.QueueSpec{Weight: 1}}
	created, err := c.vc.SchedulingV1beta1().Queues().Create(ctx, q, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Status.State = schedulingv1.QueueStateOpen
	if _, err := c.vc.SchedulingV1beta1().Queues().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// scenario runs the scenario in namespace ns, with a scheduler that start
// starts once the running loads are in place.
func scenario(t *testing.T, c *cluster, ns string, start func(t *testing.T)) map[string]string {
	ctx := context.Background()
	if _, err := c.kube.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gpu := "nvidia.com/gpu"
	c.node(t, "gpu-a", quantities("cpu", "32", "memory", "128Gi", gpu, "8"))
	c.node(t, "gpu-b", quantities("cpu", "32", "memory", "128Gi", gpu, "8"))
	c.node(t, "cpu-a", quantities("cpu", "32", "memory", "128Gi"))
	c.node(t, "cpu-b", quantities("cpu", "16", "memory", "64Gi"))
	t.Cleanup(func() {
		zero := metav1.DeleteOptions{GracePeriodSeconds: new(int64)}
		_ = c.kube.CoreV1().Pods(ns).DeleteCollection(ctx, zero, metav1.ListOptions{})
		_ = c.kube.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	})
	c.gang(t, ns, "load", []v1.ResourceList{quantities("cpu", "8", "memory", "16Gi", gpu, "4")}, "gpu-a")
	c.gang(t, ns, "busy", []v1.ResourceList{quantities("cpu", "8", "memory", "16Gi")}, "cpu-b")
	start(t)

	got := map[string]string{}
	train := c.gang(t, ns, "train", []v1.ResourceList{quantities("cpu", "4", "memory", "8Gi", gpu, "2")}, "")
	got["train"] = c.placed(t, ns, train, 0)[0]
	web := c.gang(t, ns, "web", []v1.ResourceList{quantities("cpu", "4", "memory", "8Gi")}, "")
	got["web"] = c.placed(t, ns, web, 0)[0]
	big := c.gang(t, ns, "big", []v1.ResourceList{
		quantities("cpu", "4", "memory", "8Gi", gpu, "4"), quantities("cpu", "4", "memory", "8Gi", gpu, "4"), quantities("cpu", "4", "memory", "8Gi", gpu, "4")}, "")
	if nodes := c.placed(t, ns, big, 3*time.Second); strings.Join(nodes, "") != "" {
		t.Errorf("a gang of three 4-GPU pods where two fit bound %v; want none", nodes)
	}
	zero := metav1.DeleteOptions{GracePeriodSeconds: new(int64)}
	for _, name := range big {
		if err := c.kube.CoreV1().Pods(ns).Delete(ctx, name, zero); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.vc.SchedulingV1beta1().PodGroups(ns).Delete(ctx, "big", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	pair := c.gang(t, ns, "pair", []v1.ResourceList{quantities("cpu", "4", "memory", "8Gi", gpu, "4"), quantities("cpu", "4", "memory", "8Gi", gpu, "4")}, "")
	nodes := c.placed(t, ns, pair, 0)
	got["pair"] = strings.Join(nodes, ",")
	want := map[string]string{"train": "gpu-a", "web": "cpu-a", "pair": "gpu-b,gpu-b"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("bound %v, want %v", got, want)
	}
	return got
}
