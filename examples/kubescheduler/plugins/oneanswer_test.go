package plugins

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"pgregory.net/rapid"
	"sigs.k8s.io/yaml"

	"github.com/resfit/resfit/examples/kubebridge/testing/dratest"
	"github.com/resfit/resfit/examples/kubectl-resfit/resfitctl"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring/config"
)

// oneAnswerConfigs are a configuration of every kind resfit reads, as a
// user deploys it.
var oneAnswerConfigs = map[string]string{
	"resfit": `
plugins:
- name: resource-strategy-fit
  weight: 2
  args:
    resources:
      nvidia.com/gpu: {type: MostAllocated, weight: 2}
      cpu: {type: LeastAllocated, weight: 1}
    sra: {policy: retention, resources: nvidia.com/gpu, retention: {weight: 5, nvidia.com/gpu: 1}}
- {name: NodeResourcesBalancedAllocation, weight: 1}`,
	"volcano": `
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: resource-strategy-fit
    arguments:
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
        resourceProportion: {nvidia.com/gpu.cpu: 4, nvidia.com/gpu.memory: 8}
  - name: binpack
    arguments: {binpack.weight: 5, binpack.cpu: 1, binpack.resources: nvidia.com/gpu, binpack.resources.nvidia.com/gpu: 3}
  - name: nodeorder
    arguments: {leastrequested.weight: 1, mostrequested.weight: 0, balancedresource.weight: 1}`,
	"kube-scheduler": `
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: resfit
  plugins:
    score:
      enabled: [{name: NodeResourcesFit, weight: 3}, {name: NodeResourcesBalancedAllocation, weight: 1}]
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
        resources: [{name: nvidia.com/gpu, weight: 5}, {name: cpu, weight: 1}, {name: memory, weight: 1}]
        requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]}`,
	"koordinator": `
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: koord-scheduler
  plugins:
    score:
      enabled: [{name: NodeResourcesFitPlus, weight: 2}, {name: ScarceResourceAvoidance, weight: 2}]
  pluginConfig:
  - name: NodeResourcesFitPlus
    args:
      resources:
        nvidia.com/gpu: {type: MostAllocated, weight: 2}
        cpu: {type: LeastAllocated, weight: 1}
        memory: {type: LeastAllocated, weight: 1}
  - name: ScarceResourceAvoidance
    args: {resources: [nvidia.com/gpu]}`,
	"resfitfrag": `
plugins:
- name: ResfitFrag
  args:
    classes:
    - {cpu: 4, gpus: 1, weight: 3}
    - {cpu: 8, gpus: 2, weight: 2}
    - {cpu: 2, weight: 1}`,
	"policy": `
priorities:
- name: RequestedToCapacityRatioPriority
  weight: 5
  argument:
    requestedToCapacityRatioArguments:
      shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]
      resources: [{resource: nvidia.com/gpu, weight: 5}, {resource: cpu, weight: 1}]
- {name: MostRequestedPriority, weight: 1}
- {name: BalancedResourceAllocation, weight: 2}`,
}

// One pod, one cluster, one answer: for random clusters and pods, and for a
// configuration of every kind resfit reads, ResourceStrategyFit in
// kube-scheduler's real framework runtime rejects the nodes kubectl resfit
// explain rejects and gives every other node explain's total scaled to
// 0–100, round(total / maximum × 100). The two hosts read the cluster
// apart — the plugin from the framework's NodeInfos, explain from the pods
// and nodes through kubebridge's snapshot — and share the rules.
func TestOnePodOneClusterOneAnswer(t *testing.T) {
	forEachConfig(t, nil, func(t *testing.T, kind string, cfg *config.Config, args []byte) {
		rapid.Check(t, func(rt *rapid.T) {
			c := drawCluster(rt)
			p := drawPod(rt, "pending", "")
			snapshot := cache.NewSnapshot(c.Pods, c.Nodes)
			fw := newFrameworkOn(t, context.Background(), snapshot, enabled{ResourceStrategyFitName, 1, string(args)})
			bothAnswer(t, rt, fw, snapshot, c, cfg, kind, p)
		})
	})
}

// forEachConfig runs a subtest per configuration of oneAnswerConfigs (the
// kinds named, or all), with the configuration as resfit reads it and as
// the plugin's JSON arguments.
func forEachConfig(t *testing.T, kinds []string, run func(t *testing.T, kind string, cfg *config.Config, args []byte)) {
	for kind, text := range oneAnswerConfigs {
		if kinds != nil && !slices.Contains(kinds, kind) {
			continue
		}
		t.Run(kind, func(t *testing.T) {
			cfg, err := config.Load([]byte(text), config.Options{})
			if err != nil {
				t.Fatal(err)
			}
			args, err := yaml.YAMLToJSON([]byte(text))
			if err != nil {
				t.Fatal(err)
			}
			run(t, kind, cfg, args)
		})
	}
}

// bothAnswer runs a cycle for the pod in the framework over the snapshot
// of c, and kubectl resfit explain on c, and checks they agree.
func bothAnswer(t *testing.T, rt *rapid.T, fw framework.Framework, snapshot *cache.Snapshot, c *resfitctl.Snapshot, cfg *config.Config, kind string, p *v1.Pod) {
	infos, err := snapshot.NodeInfos().List()
	if err != nil {
		rt.Fatal(err)
	}
	kube := outcome(t, fw, infos, p)
	e, err := resfitctl.Explain(c, cfg, kind, p)
	if err != nil {
		rt.Fatal(err)
	}
	agrees(rt, p.Name, kube, e, func(n resfitctl.NodeExplanation) int64 { return int64(math.Round(n.Total / e.MaxScore * 100)) })
}

// agrees checks kube-scheduler's outcome against explain's, exactly: the
// same nodes, each rejected where explain rejects it, else scored
// score(explain's node).
func agrees(rt *rapid.T, pod string, kube map[string]string, e *resfitctl.Explanation, score func(n resfitctl.NodeExplanation) int64) {
	if len(kube) != len(e.Nodes) {
		rt.Fatalf("%s: kube-scheduler answered for %d nodes, explain for %d", pod, len(kube), len(e.Nodes))
	}
	for _, n := range e.Nodes {
		got, ok := kube[n.Name]
		if !ok {
			rt.Fatalf("%s: kube-scheduler has no answer for %s", pod, n.Name)
		}
		if rejected := strings.HasPrefix(got, "rejected: "); rejected != !n.Feasible {
			rt.Fatalf("%s on %s: kube-scheduler %q, explain feasible %v (%s)", pod, n.Name, got, n.Feasible, n.Reason)
		}
		if want := fmt.Sprint(score(n)); n.Feasible && got != want {
			rt.Fatalf("%s on %s: kube-scheduler %q, explain %q (total %v of %v: %v)", pod, n.Name, got, want, n.Total, e.MaxScore, n.Scores)
		}
	}
}

// drawCluster draws 1 to 6 nodes, CPU-only or with 4 or 8 GPUs (some
// labelled with a GPU model), and pods bound to them, each one container
// whose requests may leave cpu or memory unset (kube-scheduler's non-zero
// defaults apply), with whole GPUs or a share of one (HAMi's
// nvidia.com/gpucores), some accepting only the one model.
func drawCluster(t *rapid.T) *resfitctl.Snapshot { return drawClusterOf(t, true) }

// drawClusterOf is drawCluster, with pods that share GPUs only if sharing;
// without sharing, as a scheduler leaves a cluster: a pod bound to a node
// whose GPUs it does not fit in is left out.
func drawClusterOf(t *rapid.T, sharing bool) *resfitctl.Snapshot {
	c := &resfitctl.Snapshot{Source: "the drawn cluster"}
	for i := range rapid.IntRange(1, 6).Draw(t, "nodes") {
		kv := []string{"cpu", fmt.Sprint(rapid.IntRange(4, 96).Draw(t, "cpu")), "memory", fmt.Sprint(rapid.IntRange(8, 512).Draw(t, "memory"), "Gi")}
		if g := rapid.SampledFrom([]int{0, 4, 8}).Draw(t, "gpus"); g > 0 {
			kv = append(kv, gpu, fmt.Sprint(g))
		}
		n := node(fmt.Sprintf("node-%d", i), resources(kv...))
		if rapid.Bool().Draw(t, "labelled") {
			n.Labels = map[string]string{"nvidia.com/gpu.product": "Tesla-T4"}
		}
		c.Nodes = append(c.Nodes, n)
	}
	for i := range rapid.IntRange(0, 8).Draw(t, "bound pods") {
		n := rapid.SampledFrom(c.Nodes).Draw(t, "on")
		p := drawPodOf(t, fmt.Sprintf("bound-%d", i), n.Name, sharing)
		if !sharing {
			free := n.Status.Allocatable.Name(gpu, kres.DecimalSI).Value()
			for _, q := range c.Pods {
				if q.Spec.NodeName == n.Name {
					free -= q.Spec.Containers[0].Resources.Requests.Name(gpu, kres.DecimalSI).Value()
				}
			}
			if p.Spec.Containers[0].Resources.Requests.Name(gpu, kres.DecimalSI).Value() > free {
				continue
			}
		}
		c.Pods = append(c.Pods, p)
	}
	return c
}

func drawPod(t *rapid.T, name, nodeName string) *v1.Pod { return drawPodOf(t, name, nodeName, true) }

// drawPodOf is drawPod, sharing a GPU only if sharing.
func drawPodOf(t *rapid.T, name, nodeName string, sharing bool) *v1.Pod {
	var kv []string
	if rapid.IntRange(0, 3).Draw(t, "cpu set") > 0 {
		kv = append(kv, "cpu", fmt.Sprint(rapid.IntRange(0, 16000).Draw(t, name+" milli-cpu"), "m"))
	}
	if rapid.IntRange(0, 3).Draw(t, "memory set") > 0 {
		kv = append(kv, "memory", fmt.Sprint(rapid.IntRange(0, 64).Draw(t, name+" memory"), "Gi"))
	}
	most := 5
	if !sharing {
		most = 3
	}
	g := rapid.IntRange(0, most).Draw(t, name+" gpus")
	switch {
	case g > 0 && g < 4:
		kv = append(kv, gpu, fmt.Sprint(g))
	case g == 4: // a share of one GPU, in HAMi's form
		kv = append(kv, gpu, "1", resource.HAMiCoresResource, fmt.Sprint(rapid.IntRange(1, 99).Draw(t, name+" gpu cores")))
	}
	p := pod(name, nodeName, resources(kv...))
	if g > 0 && rapid.Bool().Draw(t, name+" picks a model") {
		p.Annotations = map[string]string{"resfit.io/gpu-models": "Tesla-T4"}
	}
	return p
}

// One pod, one cluster, one answer with GPUs claimed through DRA: for
// random clusters whose nodes publish 0, 4 or 8 GPUs (H100s or A100s)
// through NVIDIA's driver, pods bound with claims holding some of them,
// and a pending pod whose claim asks for 1 to 3 GPUs (any, or H100s
// only), ResourceStrategyFit in kube-scheduler's framework (reading kube's
// SharedDRAManager) agrees with kubectl resfit explain (reading the same
// objects as a snapshot holds them) on every node.
func TestOnePodOneClusterOneAnswerDRA(t *testing.T) {
	forEachConfig(t, []string{"resfit", "kube-scheduler"}, func(t *testing.T, kind string, cfg *config.Config, args []byte) {
		rapid.Check(t, func(rt *rapid.T) {
			c, p, objects := drawDRACluster(rt)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			m, factory := draManager(t, ctx, objects...)
			snapshot := cache.NewSnapshot(c.Pods, c.Nodes)
			fw := newFrameworkWithDRA(t, ctx, snapshot, m, factory, enabled{ResourceStrategyFitName, 1, string(args)})
			bothAnswer(t, rt, fw, snapshot, c, cfg, kind, p)
		})
	})
}

// drawDRACluster draws 1 to 4 nodes of 0, 4 or 8 DRA GPUs and pods bound
// to them holding some of their GPUs through allocated claims (the cluster
// as kubectl-resfit reads it), a pending pod with a claim of 1 to 3 GPUs,
// and the DRA objects as a clientset holds them.
func drawDRACluster(t *rapid.T) (*resfitctl.Snapshot, *v1.Pod, []runtime.Object) {
	c := &resfitctl.Snapshot{Source: "the drawn DRA cluster", Classes: dratest.NVIDIAClasses()}
	free := map[string][]string{} // node → its GPUs no claim holds
	for i := range rapid.IntRange(1, 4).Draw(t, "nodes") {
		name := fmt.Sprintf("node-%d", i)
		c.Nodes = append(c.Nodes, node(name, resources("cpu", fmt.Sprint(rapid.IntRange(8, 96).Draw(t, "cpu")), "memory", "256Gi")))
		if g := rapid.SampledFrom([]int{0, 4, 8}).Draw(t, "gpus"); g > 0 {
			product := rapid.SampledFrom([]string{"NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"}).Draw(t, "product")
			c.Slices = append(c.Slices, dratest.NVIDIASlice(name, product, g, 0))
			for j := range g {
				free[name] = append(free[name], fmt.Sprint("gpu-", j))
			}
		}
	}
	for i := range rapid.IntRange(0, 6).Draw(t, "bound pods") {
		n := rapid.SampledFrom(c.Nodes).Draw(t, "on")
		p := pod(fmt.Sprintf("bound-%d", i), n.Name, resources("cpu", fmt.Sprint(rapid.IntRange(1, 8).Draw(t, "bound cpu"))))
		if k := rapid.IntRange(0, len(free[n.Name])).Draw(t, "held"); k > 0 {
			claim := dratest.AllocatedClaim("default", p.Name+"-gpus", n.Name, free[n.Name][:k]...)
			free[n.Name] = free[n.Name][k:]
			c.Claims = append(c.Claims, claim)
			p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpus", ResourceClaimName: &claim.Name}}
		}
		c.Pods = append(c.Pods, p)
	}
	var selectors []string
	if rapid.Bool().Draw(t, "H100s only") {
		selectors = []string{"device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"}
	}
	claim := &resourcev1.ResourceClaim{Spec: dratest.ClaimSpec(dratest.Exactly("gpus", "gpu.nvidia.com", int64(rapid.IntRange(1, 3).Draw(t, "asks")), selectors...))}
	claim.Namespace, claim.Name = "default", "pending-gpus"
	c.Claims = append(c.Claims, claim)
	p := pod("pending", "", resources("cpu", fmt.Sprint(rapid.IntRange(1, 8).Draw(t, "pending cpu"))))
	p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpus", ResourceClaimName: &claim.Name}}
	var objects []runtime.Object
	for _, o := range c.Classes {
		objects = append(objects, o)
	}
	for _, o := range c.Slices {
		objects = append(objects, o)
	}
	for _, o := range c.Claims {
		objects = append(objects, o)
	}
	return c, p, objects
}
