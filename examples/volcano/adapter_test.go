package volcano

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
	"github.com/resfit/resfit/sra"
	"github.com/resfit/resfit/strategy"
)

// Arguments as yaml.v2 gives them to a Volcano plugin: nested maps are
// map[interface{}]interface{}, numbers int or float64.
var released = map[string]any{
	"resourceStrategyFitWeight": 10,
	"resources": map[any]any{
		"nvidia.com/gpu": map[any]any{"type": "MostAllocated", "weight": 2},
		"cpu":            map[any]any{"type": "LeastAllocated", "weight": 1},
	},
	"sra": map[any]any{"enable": true, "resources": "nvidia.com/gpu", "weight": 10, "resourceWeight": map[any]any{"nvidia.com/gpu": 1}},
	"proportional": map[any]any{"enable": true, "resources": "nvidia.com/gpu",
		"resourceProportion": map[any]any{"nvidia.com/gpu.cpu": 4, "nvidia.com/gpu.memory": 8.5}},
}

func TestDecodeYAMLv2Arguments(t *testing.T) {
	c, err := Decode(released, false)
	if err != nil {
		t.Fatal(err)
	}
	want := config.ResourceStrategyFitArgs{
		Weight: 10,
		Resources: []strategy.Resource{{Name: "cpu", Type: strategy.LeastAllocated, Weight: 1},
			{Name: "nvidia.com/gpu", Type: strategy.MostAllocated, Weight: 2}},
		Retention: &config.RetentionArgs{Weight: 10, Resources: []sra.Weighted{{Name: "nvidia.com/gpu", Weight: 1}}},
	}
	if diff := cmp.Diff(want, c.Scoring.Scorers[0].Args); diff != "" {
		t.Errorf("scoring args (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]sra.Ratio{{Resource: "nvidia.com/gpu", CPU: 4, Memory: 8.5}}, c.Proportional); diff != "" {
		t.Errorf("proportional (-want +got):\n%s", diff)
	}
	// The flat dotted dialect, as a volcano-scheduler.conf writes it.
	flat := map[string]any{"sra.policy": "retention", "sra.resources": "nvidia.com/t4, nvidia.com/a10",
		"sra.retention.weight": 2, "sra.retention.nvidia.com/t4": 1, "sra.retention.nvidia.com/a10": 1}
	if c, err := Decode(flat, false); err != nil || c.Scoring.Scorers[0].Args.(config.ResourceStrategyFitArgs).Retention.Weight != 2 {
		t.Errorf("flat dialect: %+v, %v", c, err)
	}
}

func TestDecodeStrictAndCompat(t *testing.T) {
	bad := map[string]any{"resources": map[any]any{"cpu": map[any]any{"type": "Spread", "weight": -1}}}
	if _, err := Decode(bad, false); err == nil || !strings.Contains(err.Error(), `resources["cpu"].type`) {
		t.Errorf("strict: %v", err)
	}
	c, err := Decode(bad, true)
	if err != nil || len(c.Warnings) != 2 {
		t.Fatalf("compat: %v, warnings %q", err, c.Warnings)
	}
}

func TestFillDoesNotAllocate(t *testing.T) {
	s, _ := Schema([]map[string]float64{{"nvidia.com/gpu": 8000}, {"example.com/foo": 1000, "bad name": 1}})
	if got := strings.Join(s.Names(), ","); got != "cpu,memory,example.com/foo,nvidia.com/gpu" {
		t.Fatalf("schema %s", got)
	}
	dst := make(resource.Vector, s.Len())
	type resourceName string // as Volcano's map keys are v1.ResourceName
	scalars := map[resourceName]float64{"nvidia.com/gpu": 2000, "other.io/x": 5}
	if n := testing.AllocsPerRun(100, func() { Fill(s, dst, 4000, 8<<30, scalars) }); n != 0 {
		t.Errorf("Fill allocated %v times", n)
	}
	if diff := cmp.Diff(resource.Vector{4000, 8 << 30, 0, 2000}, dst); diff != "" {
		t.Errorf("vector (-want +got):\n%s", diff)
	}
	Fill[string](s, dst, -1, 1e300, nil)
	if dst[0] != 0 || dst[1] != resource.MaxAmount {
		t.Errorf("clamping: %v", dst)
	}
}

func TestOverrideFromAnnotations(t *testing.T) {
	s, _ := Schema[string](nil)
	if o := Override(s, map[string]string{}); o != nil {
		t.Error("no annotations gave an override")
	}
	if o := Override(s, map[string]string{"volcano.sh/resource-strategy-scoring-type": "MostAllocated"}); o == nil {
		t.Error("a type without weights must score 0 (zero override), not fall back")
	}
}

// A pod's author controls the annotations: weights above
// resource.MaxWeight (the review's 2^62 scored 5e21 against a maximum of
// 1000) make the pair unusable, and the task scores 0 everywhere, as bad
// JSON does in Volcano.
func TestOutOfRangeAnnotationWeightsScoreZero(t *testing.T) {
	s, _ := Schema[string](nil)
	c, err := Decode(map[string]any{"resourceStrategyFitWeight": 10}, true)
	if err != nil {
		t.Fatal(err)
	}
	pipe, err := c.Scoring.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	nodes := resource.NewTable(s, 1)
	nodes.Add("n", resource.Vector{64000, 256 << 30}, resource.Vector{8000, 8 << 30})
	b := pipe.NewBatch(1)
	for _, weights := range []string{`{"cpu": 4611686018427387904, "memory": 4611686018427387904}`, `{"cpu": 1000001}`} {
		o := Override(s, map[string]string{"volcano.sh/resource-strategy-scoring-type": "MostAllocated", "volcano.sh/resource-strategy-weight": weights})
		task := &scoring.Task{Name: "t", Requests: resource.Vector{4000, 1 << 30}, Override: o}
		if err := pipe.Score(task, nodes, b); err != nil {
			t.Fatal(err)
		}
		if b.Total(0) != 0 {
			t.Errorf("%s: total %v, want 0", weights, b.Total(0))
		}
	}
	o := Override(s, map[string]string{"volcano.sh/resource-strategy-scoring-type": "MostAllocated", "volcano.sh/resource-strategy-weight": `{"cpu": 1}`})
	if err := pipe.Score(&scoring.Task{Name: "t", Requests: resource.Vector{4000, 1 << 30}, Override: o}, nodes, b); err != nil {
		t.Fatal(err)
	}
	// cpu MostAllocated (8+4)/64 × 1 / 1 × 100 × 10 = 187.5; in range.
	if b.Total(0) != 187.5 || b.Total(0) > pipe.MaxScore() {
		t.Errorf("usable annotation: total %v, max %v", b.Total(0), pipe.MaxScore())
	}
}

// A task that asks for GPUs runs only on nodes of a model its annotations
// accept; the reason names the models, or the annotation at fault.
func TestModelReason(t *testing.T) {
	labels := func(model string) map[string]string { return map[string]string{"nvidia.com/gpu.product": model} }
	cluster := ClusterModels([]map[string]string{labels("Tesla-T4"), labels("NVIDIA-A100-SXM4-80GB"), nil, labels("Tesla-T4")})
	if !slices.Equal(cluster, []string{"NVIDIA-A100-SXM4-80GB", "Tesla-T4"}) {
		t.Fatalf("cluster models %v", cluster)
	}
	if !AsksForGPUs(map[string]float64{"nvidia.com/gpu": 2000}) || !AsksForGPUs(map[string]float64{"volcano.sh/vgpu-number": 1000}) ||
		AsksForGPUs(map[string]float64{"cpu": 1000}) || AsksForGPUs[string](nil) {
		t.Error("AsksForGPUs")
	}
	for _, c := range []struct {
		annotations map[string]string
		node        map[string]string
		want        string
	}{
		{nil, labels("Tesla-T4"), ""},
		{map[string]string{"nvidia.com/use-gputype": "a100"}, labels("NVIDIA-A100-SXM4-80GB"), ""},
		{map[string]string{"nvidia.com/use-gputype": "a100"}, labels("Tesla-T4"), "nvidia.com/gpu model Tesla-T4 is not one the task accepts (NVIDIA-A100-SXM4-80GB)"},
		{map[string]string{"nvidia.com/nouse-gputype": "T4"}, nil, "nvidia.com/gpu model unknown; the task accepts only NVIDIA-A100-SXM4-80GB"},
		{map[string]string{"nvidia.com/use-gputype": "H100"}, labels("Tesla-T4"), "annotations nvidia.com/use-gputype: no GPU model of the cluster (NVIDIA-A100-SXM4-80GB, Tesla-T4) is left"},
		{map[string]string{"resfit.io/gpu-models": "A 100"}, labels("Tesla-T4"), `annotation resfit.io/gpu-models: device models "A 100": model "A 100": name part has ' '`},
	} {
		accepted, err := resource.AcceptedModels(c.annotations, cluster)
		if got := ModelReason(accepted, err, c.node); !strings.HasPrefix(got, c.want) || (c.want == "") != (got == "") {
			t.Errorf("%v on %v: %q, want %q", c.annotations, c.node, got, c.want)
		}
	}
}
