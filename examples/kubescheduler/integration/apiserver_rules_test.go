package integration

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	kres "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	"k8s.io/kubernetes/pkg/apis/core/validation"
	podregistry "k8s.io/kubernetes/pkg/registry/core/pod"
	"pgregory.net/rapid"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
	"github.com/resfit/resfit/resource"
)

// kubeDefaulted is the pod as kube-apiserver v1.37 stores it on create:
// decoded with defaulting (the v1 scheme's SetObjectDefaults_Pod), then
// prepared by the pod registry's strategy (PrepareForCreate, where
// pod-level resources are defaulted), here in the same process as the
// apiserver this package runs, under the same feature gates.
func kubeDefaulted(t *rapid.T, pod *v1.Pod) *v1.Pod {
	pod = pod.DeepCopy()
	legacyscheme.Scheme.Default(pod)
	var internal api.Pod
	if err := legacyscheme.Scheme.Convert(pod, &internal, nil); err != nil {
		t.Fatal(err)
	}
	podregistry.Strategy.PrepareForCreate(context.Background(), &internal)
	var out v1.Pod
	if err := legacyscheme.Scheme.Convert(&internal, &out, nil); err != nil {
		t.Fatal(err)
	}
	return &out
}

// drawResources draws requests or limits over names, each present or not,
// of 0 to 4 units (cpu in millicores, the others as integers or binary
// sizes), nil or empty sometimes.
func drawResources(t *rapid.T, label string, names []v1.ResourceName) v1.ResourceList {
	switch rapid.IntRange(0, 5).Draw(t, label+" shape") {
	case 0:
		return nil
	case 1:
		return v1.ResourceList{}
	}
	l := v1.ResourceList{}
	for _, n := range names {
		if !rapid.Bool().Draw(t, label+" has "+string(n)) {
			continue
		}
		v := rapid.Int64Range(0, 4).Draw(t, label+" "+string(n))
		switch n {
		case v1.ResourceCPU:
			l[n] = *kres.NewMilliQuantity(v*500, kres.DecimalSI)
		case v1.ResourceMemory, "hugepages-2Mi":
			l[n] = *kres.NewQuantity(v<<21, kres.BinarySI)
		default:
			l[n] = *kres.NewQuantity(v, kres.DecimalSI)
		}
	}
	return l
}

// drawDefaultingPod draws a pod with every field defaulting reads: 1-3
// containers and 0-3 init containers (sidecars among them), each with
// requests and limits over native, hugepage and extended resources, and
// pod-level resources and overhead or not.
func drawDefaultingPod(t *rapid.T) *v1.Pod {
	names := []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, "nvidia.com/gpu", "hugepages-2Mi", v1.ResourceEphemeralStorage, "example.com/foo"}
	pod := &v1.Pod{}
	pod.Name, pod.Namespace = "p", "default"
	container := func(label string) v1.Container {
		return v1.Container{Name: label, Image: "x", Resources: v1.ResourceRequirements{
			Requests: drawResources(t, label+" requests", names), Limits: drawResources(t, label+" limits", names)}}
	}
	for i := range rapid.IntRange(1, 3).Draw(t, "containers") {
		pod.Spec.Containers = append(pod.Spec.Containers, container("c"+string(rune('0'+i))))
	}
	for i := range rapid.IntRange(0, 3).Draw(t, "init containers") {
		c := container("i" + string(rune('0'+i)))
		if rapid.Bool().Draw(t, c.Name+" sidecar") {
			always := v1.ContainerRestartPolicyAlways
			c.RestartPolicy = &always
		}
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
	}
	podLevel := []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, "hugepages-2Mi"}
	if rapid.Bool().Draw(t, "pod-level resources") {
		pod.Spec.Resources = &v1.ResourceRequirements{Requests: drawResources(t, "pod requests", podLevel), Limits: drawResources(t, "pod limits", podLevel)}
	}
	if rapid.Bool().Draw(t, "overhead") {
		pod.Spec.Overhead = drawResources(t, "overhead", names[:2])
	}
	return pod
}

// TestDefaultRequestsIsKubes holds kubebridge.DefaultRequests, what every
// reader of hand-written pod manifests applies, to kube-apiserver's own
// defaulting on generated pods: each container's, init container's and
// the pod-level requests, and so the pod's effective requests, are the
// same; the pod given is not changed.
func TestDefaultRequestsIsKubes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pod := drawDefaultingPod(t)
		before := pod.DeepCopy()
		ours, kube := kubebridge.DefaultRequests(pod), kubeDefaulted(t, pod)
		if !apiequality.Semantic.DeepEqual(pod, before) {
			t.Fatalf("DefaultRequests changed its argument")
		}
		same := func(what string, a, b v1.ResourceList) {
			if !apiequality.Semantic.DeepEqual(a, b) {
				t.Fatalf("%s: ours %v, kube's %v", what, a, b)
			}
		}
		for i := range kube.Spec.Containers {
			same("containers["+string(rune('0'+i))+"].requests", ours.Spec.Containers[i].Resources.Requests, kube.Spec.Containers[i].Resources.Requests)
		}
		for i := range kube.Spec.InitContainers {
			same("initContainers["+string(rune('0'+i))+"].requests", ours.Spec.InitContainers[i].Resources.Requests, kube.Spec.InitContainers[i].Resources.Requests)
		}
		if (ours.Spec.Resources == nil) != (kube.Spec.Resources == nil) {
			t.Fatalf("pod-level resources: ours %v, kube's %v", ours.Spec.Resources, kube.Spec.Resources)
		}
		if kube.Spec.Resources != nil {
			same("resources.requests", ours.Spec.Resources.Requests, kube.Spec.Resources.Requests)
		}
		same("effective requests", kubebridge.PodRequests(ours), kubebridge.PodRequests(kube))
	})
}

// TestNodeAmountsAreTheAPIServers holds what resfit refuses of a node's
// allocatable amounts to what kube-apiserver refuses of them
// (validation.ValidateResourceQuantityValue, as ValidateNodeResources runs
// it): every amount the API refuses (negative; a fraction of pods or of
// an extended resource) resfit refuses, and resfit refuses no other but
// those past what it counts (resource.MaxAmount).
func TestNodeAmountsAreTheAPIServers(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		name := rapid.SampledFrom([]string{"nvidia.com/gpu", "example.com/dongle", "pods", "cpu", "memory", "ephemeral-storage",
			"hugepages-2Mi", "kubernetes.io/batteries", "requests.nvidia.com/gpu"}).Draw(t, "name")
		q := drawAmount(t)
		node := kubetest.Node("n")
		node.Status.Allocatable = v1.ResourceList{v1.ResourceName(name): q}
		schema, err := resource.SchemaOf(map[string]string{name: "node n"})
		if err != nil {
			t.Fatal(err)
		}
		_, ours := kubebridge.Allocatable(schema, node)
		sameRefusal(t, name, q, ours)
	})
}

// TestContainerAmountsAreTheAPIServers is TestNodeAmountsAreTheAPIServers
// for a container's requests (ValidateContainerResourceRequirements runs
// the same rule on each), read by kubebridge.PodOf.
func TestContainerAmountsAreTheAPIServers(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		name := rapid.SampledFrom([]string{"nvidia.com/gpu", "example.com/dongle", "cpu", "memory", "ephemeral-storage",
			"hugepages-2Mi"}).Draw(t, "name")
		q := drawAmount(t)
		pod := kubetest.Pod("p", "")
		pod.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceName(name): q}
		_, ours := kubebridge.PodOf(pod)
		sameRefusal(t, name, q, ours)
	})
}

// drawAmount draws a quantity: small, huge, or a whole number of units
// give or take a few of its smallest digit (2.9990001, 3.0000001), where
// a rounding rule shows.
func drawAmount(t *rapid.T) kres.Quantity {
	scale := rapid.IntRange(-9, 6).Draw(t, "scale")
	unit := int64(1)
	for i := scale; i < 0; i++ {
		unit *= 10
	}
	nearWhole := rapid.Custom(func(t *rapid.T) int64 {
		return rapid.Int64Range(0, 20).Draw(t, "whole")*unit + rapid.Int64Range(-unit/1000-2, unit/1000+2).Draw(t, "off")
	})
	v := rapid.OneOf(rapid.Int64Range(-2, 20), rapid.Int64Range(0, 1<<62), nearWhole).Draw(t, "value")
	return *kres.NewScaledQuantity(v, kres.Scale(scale))
}

// sameRefusal fails t unless resfit's error reading q (ours) agrees with
// kube-apiserver's validation of it: refused by the API, refused by
// resfit; taken by the API, taken by resfit unless past what it counts.
func sameRefusal(t *rapid.T, name string, q kres.Quantity, ours error) {
	kube := validation.ValidateResourceQuantityValue(api.ResourceName(name), q, nil)
	_, uncounted := kubebridge.Amount(name, q)
	switch {
	case len(kube) > 0 && ours == nil:
		t.Fatalf("%s: %s: the API server refuses it (%v), resfit reads it", name, q.String(), kube.ToAggregate())
	case len(kube) == 0 && ours != nil && uncounted == nil:
		t.Fatalf("%s: %s: the API server takes it, resfit refuses it: %v", name, q.String(), ours)
	}
}
