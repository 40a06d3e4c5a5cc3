package scoring_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/strategy"
)

// The pod → task rule every host calls: requests by the three rules, the
// Volcano override (the zero one for an unusable pair), devices when asked
// for (the device resource's request then their total: a 30% share of one
// GPU asks for 300, not the whole GPU its nvidia.com/gpu: 1 says, and its
// nvidia.com/gpucores no more: the view holds the share), and the
// accepted models only for a task that asks for devices, an unusable
// annotation then being an error.
func TestNewTaskIsTheHostNeutralRule(t *testing.T) {
	schema, _ := resource.NewSchema("cpu", "memory", resource.GPU, resource.HAMiCoresResource)
	pod := resource.Pod{Containers: []resource.Container{{Requests: map[string]int64{"cpu": 2000, resource.GPU: 1000, resource.HAMiCoresResource: 30000}}}}
	annotations := map[string]string{strategy.VolcanoScoringTypeAnnotation: "MostAllocated", strategy.VolcanoWeightAnnotation: `{"nvidia.com/gpu": 2}`,
		resource.UseGPUTypeAnnotation: "a100"}
	cluster := []string{"NVIDIA-A100-SXM4-80GB", "Tesla-T4"}
	task, err := scoring.NewTask(schema, "ml/train-0", "ml/train", pod, annotations, scoring.TaskOptions{Devices: resource.GPU, Models: cluster})
	if err != nil {
		t.Fatal(err)
	}
	if task.Name != "ml/train-0" || task.Job != "ml/train" || !slices.Equal(task.Requests, resource.Vector{2000, 0, 300, 0}) ||
		!slices.Equal(task.NonZeroRequests, resource.Vector{2000, resource.DefaultMemoryRequest, 300, 0}) ||
		!slices.Equal(task.KoordinatorRequests, resource.Vector{2000, resource.DefaultMemoryRequest, 300, 0}) {
		t.Errorf("task %+v", task)
	}
	want, _ := strategy.VolcanoOverride(schema, annotations)
	if !reflect.DeepEqual(task.Override, want) || task.Devices != (resource.DeviceRequest{Count: 1, Each: 300}) || task.Models != "NVIDIA-A100-SXM4-80GB" {
		t.Errorf("override %v, devices %+v, models %q", task.Override, task.Devices, task.Models)
	}
	// Without devices asked for, the models are not read; a cluster
	// without models leaves none to accept.
	if task, err := scoring.NewTask(schema, "t", "", pod, annotations, scoring.TaskOptions{Models: cluster}); err != nil || task.Models != "" || task.Devices.Count != 0 ||
		task.Requests[2] != 1000 || task.Requests[3] != 30000 {
		t.Errorf("without devices: %+v, %v", task, err)
	}
	if _, err := scoring.NewTask(schema, "t", "", pod, annotations, scoring.TaskOptions{Devices: resource.GPU}); err == nil {
		t.Error("a cluster without models left the pod's a100")
	}
	// An unusable Volcano pair scores the task 0; an unusable model
	// annotation is an error that names it.
	bad := map[string]string{strategy.VolcanoScoringTypeAnnotation: "MostAllocated", resource.UseGPUTypeAnnotation: "h100"}
	if _, err := scoring.NewTask(schema, "t", "", pod, bad, scoring.TaskOptions{Devices: resource.GPU, Models: cluster}); err == nil ||
		!strings.Contains(err.Error(), resource.UseGPUTypeAnnotation) {
		t.Errorf("model annotation: %v", err)
	}
	task, err = scoring.NewTask(schema, "t", "", pod, bad, scoring.TaskOptions{})
	if err != nil || !reflect.DeepEqual(task.Override, strategy.ZeroOverride()) {
		t.Errorf("unusable Volcano pair: %v, %v", task.Override, err)
	}
	// A request the schema cannot hold is an error.
	huge := resource.Pod{Containers: []resource.Container{{Requests: map[string]int64{"example.com/fpga": 1}}}}
	if _, err := scoring.NewTask(schema, "t", "", huge, nil, scoring.TaskOptions{}); err == nil {
		t.Error("a resource the schema lacks was accepted")
	}
}

// An unusable Volcano pair is said, not only scored 0: NewTask keeps why
// (naming the annotation), and a pipeline that reads the annotations says
// it and what follows; one that does not read them, and a usable or
// absent pair, say nothing.
func TestUnusableAnnotationsAreSaid(t *testing.T) {
	schema, _ := resource.NewSchema("cpu", "memory", resource.GPU)
	fit, err := strategy.NewVolcanoFit(schema, []strategy.Resource{{Name: resource.GPU, Type: strategy.MostAllocated, Weight: 2}}, strategy.DefaultVolcanoPluginWeight)
	if err != nil {
		t.Fatal(err)
	}
	volcano, err := scoring.NewPipeline(schema, nil, []scoring.WeightedScorer{{Scorer: scoring.NewVolcanoScorer("resource-strategy-fit", fit), Weight: 1}})
	if err != nil {
		t.Fatal(err)
	}
	least, err := strategy.NewKubeFit(schema, strategy.LeastAllocated, []strategy.Resource{{Name: "cpu", Weight: 1}})
	if err != nil {
		t.Fatal(err)
	}
	kube, err := scoring.NewPipeline(schema, nil, []scoring.WeightedScorer{{Scorer: scoring.NewStrategyScorer("NodeResourcesFit", least, false), Weight: 1}})
	if err != nil {
		t.Fatal(err)
	}
	pod := resource.Pod{Containers: []resource.Container{{Requests: map[string]int64{"cpu": 2000, resource.GPU: 1000}}}}
	for _, c := range []struct {
		typ, weights, want string
	}{
		{"MostAllocated", `{"nvidia.com/gpu": NaN}`, strategy.VolcanoWeightAnnotation + ": want a JSON object of integer weights"},
		{"MostAllocated", `{"nvidia.com/gpu": -1}`, strategy.VolcanoWeightAnnotation + `: "nvidia.com/gpu": weight must be in [0, 1000000], got -1`},
		{"MostAllocated", `{"nvidia.com/gpu": 1000001}`, "got 1000001"},
		{"MostAllocated", `{"nvidia.com/gpu": "2"}`, "want a JSON object of integer weights"},
		{"MostAllocated", `[2]`, "want a JSON object of integer weights"},
		{"MostAllocated", `{"nvidia.com/gpu": 1.5}`, "want a JSON object of integer weights"},
		{"MostAllocated", "", strategy.VolcanoWeightAnnotation + ": missing while"},
		{"Mostallocated", `{"nvidia.com/gpu": 2}`, strategy.VolcanoScoringTypeAnnotation + ": "},
	} {
		annotations := map[string]string{strategy.VolcanoScoringTypeAnnotation: c.typ, strategy.VolcanoWeightAnnotation: c.weights}
		task, err := scoring.NewTask(schema, "ml/train-0", "", pod, annotations, scoring.TaskOptions{})
		if err != nil || !reflect.DeepEqual(task.Override, strategy.ZeroOverride()) || task.OverrideErr == nil || !strings.Contains(task.OverrideErr.Error(), c.want) {
			t.Errorf("%s %s: override %v, %v; error %v", c.typ, c.weights, task.Override, task.OverrideErr, err)
			continue
		}
		said := volcano.OverrideError(task)
		if said == nil || !strings.Contains(said.Error(), c.want) || !strings.HasSuffix(said.Error(), ": resource-strategy-fit scores it 0 on every node, as Volcano does") {
			t.Errorf("%s %s: the Volcano pipeline says %v", c.typ, c.weights, said)
		}
		if said := kube.OverrideError(task); said != nil {
			t.Errorf("%s %s: a pipeline that does not read the annotations says %v", c.typ, c.weights, said)
		}
	}
	for _, annotations := range []map[string]string{nil, {strategy.VolcanoScoringTypeAnnotation: "LeastAllocated", strategy.VolcanoWeightAnnotation: `{"cpu": 1}`}} {
		task, err := scoring.NewTask(schema, "ml/train-0", "", pod, annotations, scoring.TaskOptions{})
		if err != nil || task.OverrideErr != nil || volcano.OverrideError(task) != nil {
			t.Errorf("%v: %v, %v", annotations, task.OverrideErr, err)
		}
	}
}
