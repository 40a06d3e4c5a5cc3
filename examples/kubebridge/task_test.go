package kubebridge

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/strategy"
)

// A pod with a sidecar before a larger init container: kube's rule gives
// 6 cores (the init container runs beside the sidecar), Koordinator's 5;
// the non-zero requests add 200Mi of memory for each container that sets
// none: the main container and the sidecar run together (400Mi), and so,
// by kube's rule, do the init container and the sidecar. Volcano's annotations become the override, and an
// unusable pair scores the pod 0 (a zero override).
func TestNewTaskFollowsEachRule(t *testing.T) {
	schema, err := resource.NewSchema("cpu", "memory", "pods", kubetest.GPU)
	if err != nil {
		t.Fatal(err)
	}
	always := v1.ContainerRestartPolicyAlways
	p := kubetest.Pod("train-0", "", "cpu", "2", kubetest.GPU, "1")
	p.Spec.InitContainers = []v1.Container{
		{Name: "sidecar", RestartPolicy: &always, Resources: v1.ResourceRequirements{Requests: kubetest.Resources("cpu", "1")}},
		{Name: "init", Resources: v1.ResourceRequirements{Requests: kubetest.Resources("cpu", "5")}},
	}
	p.Annotations = map[string]string{"scheduling.k8s.io/group-name": "train",
		strategy.VolcanoScoringTypeAnnotation: "MostAllocated", strategy.VolcanoWeightAnnotation: `{"nvidia.com/gpu": 2}`}
	task, err := NewTask(schema, p, scoring.TaskOptions{Devices: kubetest.GPU})
	if err != nil {
		t.Fatal(err)
	}
	if task.Name != "default/train-0" || task.Job != "default/train" {
		t.Errorf("name %q, job %q", task.Name, task.Job)
	}
	const mi200 = 200 << 20
	for name, c := range map[string]struct{ got, want resource.Vector }{
		"plain":       {task.Requests, resource.Vector{6000, 0, 0, 1000}},
		"non-zero":    {task.NonZeroRequests, resource.Vector{6000, 2 * mi200, 0, 1000}},
		"koordinator": {task.KoordinatorRequests, resource.Vector{5000, 2 * mi200, 0, 1000}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s requests %v, want %v", name, c.got, c.want)
		}
	}
	if task.Override == nil || task.Devices != (resource.DeviceRequest{Count: 1, Each: 1000}) {
		t.Errorf("override %v, devices %v", task.Override, task.Devices)
	}
	p.Annotations[strategy.VolcanoWeightAnnotation] = `{"nvidia.com/gpu": 4611686018427387904}`
	if _, err := strategy.VolcanoOverride(schema, p.Annotations); err == nil || !strings.Contains(err.Error(), "[0, 1000000]") {
		t.Errorf("VolcanoOverride: %v", err)
	}
	task, _ = NewTask(schema, p, scoring.TaskOptions{})
	if !reflect.DeepEqual(task.Override, strategy.ZeroOverride()) {
		t.Errorf("an unusable annotation gave %+v, want the zero override", task.Override)
	}
	// A share of one GPU, as HAMi states it.
	shared := kubetest.Pod("infer", "", "cpu", "1", kubetest.GPU, "1", resource.HAMiCoresResource, "30")
	if _, err := NewTask(schema, shared, scoring.TaskOptions{Devices: kubetest.GPU}); err == nil {
		t.Error("a resource the schema lacks was accepted")
	}
	schema, _ = resource.NewSchema("cpu", "memory", "pods", kubetest.GPU, resource.HAMiCoresResource)
	task, err = NewTask(schema, shared, scoring.TaskOptions{Devices: kubetest.GPU})
	if err != nil || task.Devices != (resource.DeviceRequest{Count: 1, Each: 300}) {
		t.Errorf("shared GPU: %v, %v", task.Devices, err)
	}
}

// A pod's group: Kubernetes' own (spec.schedulingGroup) before Volcano's
// annotation before the coscheduling label; none without any of them.
func TestPodGroup(t *testing.T) {
	named := func(s string) *v1.PodSchedulingGroup { return &v1.PodSchedulingGroup{PodGroupName: &s} }
	volcano := map[string]string{"scheduling.k8s.io/group-name": "vc"}
	cosched := map[string]string{"scheduling.x-k8s.io/pod-group": "co"}
	for _, c := range []struct {
		group               *v1.PodSchedulingGroup
		annotations, labels map[string]string
		want                string
	}{
		{named("kube"), volcano, cosched, "train/kube"},
		{named(""), volcano, cosched, "train/vc"},
		{&v1.PodSchedulingGroup{}, nil, cosched, "train/co"},
		{nil, volcano, nil, "train/vc"},
		{nil, nil, nil, ""},
	} {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: "p", Annotations: c.annotations, Labels: c.labels}, Spec: v1.PodSpec{SchedulingGroup: c.group}}
		if got := PodGroup(p); got != c.want {
			t.Errorf("%+v: %q, want %q", c, got, c.want)
		}
	}
}
