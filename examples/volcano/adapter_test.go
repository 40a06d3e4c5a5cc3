package volcano

import (
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

// The arguments become one resfit configuration: the proportional filter
// is built into the pipeline with the scores, as every host builds it.
func TestDecodeYAMLv2Arguments(t *testing.T) {
	c, err := Decode(ResourceStrategyFitPluginName, released, false)
	if err != nil {
		t.Fatal(err)
	}
	want := config.ResourceStrategyFitArgs{
		Weight: 10,
		Resources: []strategy.Resource{{Name: "cpu", Type: strategy.LeastAllocated, Weight: 1},
			{Name: "nvidia.com/gpu", Type: strategy.MostAllocated, Weight: 2}},
		Retention:    &config.RetentionArgs{Weight: 10, Resources: []sra.Weighted{{Name: "nvidia.com/gpu", Weight: 1}}},
		Proportional: []sra.Ratio{{Resource: "nvidia.com/gpu", CPU: 4, Memory: 8.5}},
	}
	if diff := cmp.Diff(want, c.Scoring.Scorers[0].Args); diff != "" {
		t.Errorf("scoring args (-want +got):\n%s", diff)
	}
	schema, _ := resource.NewSchema("cpu", "memory", "nvidia.com/gpu")
	pipe, err := c.Scoring.Build(schema)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(pipe.FilterNames(), ","); got != scoring.SRAProportional {
		t.Errorf("filters %s, want the proportional one", got)
	}
	// Volcano asks for the scores and the filters apart.
	scores, filters := c.Apart()
	scorePipe, err := scores.Build(schema)
	if err != nil {
		t.Fatal(err)
	}
	filterPipe, err := filters.Build(schema)
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(scorePipe.ScorerNames(), pipe.ScorerNames()) || len(scorePipe.FilterNames()) != 0 ||
		len(filterPipe.ScorerNames()) != 0 || !cmp.Equal(filterPipe.FilterNames(), pipe.FilterNames()) {
		t.Errorf("apart: scores %v / %v, filters %v / %v", scorePipe.ScorerNames(), scorePipe.FilterNames(), filterPipe.ScorerNames(), filterPipe.FilterNames())
	}
	// The flat dotted dialect, as a volcano-scheduler.conf writes it.
	flat := map[string]any{"sra.policy": "retention", "sra.resources": "nvidia.com/t4, nvidia.com/a10",
		"sra.retention.weight": 2, "sra.retention.nvidia.com/t4": 1, "sra.retention.nvidia.com/a10": 1}
	if c, err := Decode(ResourceStrategyFitPluginName, flat, false); err != nil || c.Scoring.Scorers[0].Args.(config.ResourceStrategyFitArgs).Retention.Weight != 2 {
		t.Errorf("flat dialect: %+v, %v", c, err)
	}
}

func TestDecodeStrictAndCompat(t *testing.T) {
	bad := map[string]any{"resources": map[any]any{"cpu": map[any]any{"type": "Spread", "weight": -1}}}
	if _, err := Decode(ResourceStrategyFitPluginName, bad, false); err == nil || !strings.Contains(err.Error(), `resources["cpu"].type`) {
		t.Errorf("strict: %v", err)
	}
	c, err := Decode(ResourceStrategyFitPluginName, bad, true)
	if err != nil || len(c.Warnings) != 2 {
		t.Fatalf("compat: %v, warnings %q", err, c.Warnings)
	}
}

// The fragmentation plugins read their arguments in Volcano's spelling as
// resfit's configuration reads FGD's and ResfitFrag's, with its field
// paths; a plugin the package does not provide is an error that lists
// the ones it does.
func TestDecodeFragmentationPlugins(t *testing.T) {
	classes := []any{map[any]any{"cpu": 8, "gpus": 1, "weight": 3}, map[any]any{"cpu": 2, "gpus": 1, "gpuShare": 300, "weight": 1}}
	c, err := Decode(FGDPluginName, map[string]any{"classes": classes}, false)
	if err != nil {
		t.Fatal(err)
	}
	fgd, ok := c.Scoring.Scorers[0].Args.(config.FGDArgs)
	if c.Name != FGDPluginName || c.Scoring.Scorers[0].Name != config.FGD || !ok || len(fgd.Classes) != 2 || fgd.Classes[1].GPUShare != 300 {
		t.Errorf("fgd: %q %+v", c.Name, c.Scoring.Scorers[0])
	}
	c, err = Decode(ResfitFragPluginName, map[string]any{"classes": classes, "coresPerIdleGPU": 4}, false)
	if err != nil {
		t.Fatal(err)
	}
	if rf, ok := c.Scoring.Scorers[0].Args.(config.ResfitFragArgs); c.Scoring.Scorers[0].Name != config.ResfitFrag || !ok || rf.CoresPerIdleGPU != 4 {
		t.Errorf("resfit-frag: %+v", c.Scoring.Scorers[0])
	}
	if _, err := Decode(FGDPluginName, map[string]any{"classes": []any{map[any]any{"cpu": -1, "weight": 1}}}, false); err == nil || !strings.Contains(err.Error(), "classes[0].cpu") {
		t.Errorf("bad class: %v", err)
	}
	if _, err := Decode("binpack", nil, false); err == nil || err.Error() != `unknown plugin "binpack" (the package provides resfit, resfit-binpack, resfit-fgd, resfit-frag, resfit-nodeorder, resfit-resource-strategy-fit)` {
		t.Errorf("unknown plugin: %v", err)
	}
}

// The resfit plugin's arguments are a configuration in resfit's own form,
// as Volcano hands them over (yaml.v2's maps): its plugins with their
// weights and switches, its filters but NodeResourcesFit, which Volcano's
// allocate action checks; another form, or none, is an error that says
// what is expected, and a bad value one with its field path.
func TestDecodeResfitPlugin(t *testing.T) {
	args := map[string]any{"plugins": []any{
		map[any]any{"name": "NodeResourcesBalancedAllocation", "weight": 2},
		map[any]any{"name": "resource-strategy-fit", "scores": false, "args": map[any]any{"sra": map[any]any{
			"policy": "proportional", "resources": "nvidia.com/gpu", "proportional": map[any]any{"nvidia.com/gpu.cpu": 8}}}},
	}}
	c, err := Decode(ResfitPluginName, args, false)
	if err != nil {
		t.Fatal(err)
	}
	s := c.Scoring.Scorers
	if c.Name != ResfitPluginName || len(s) != 2 || s[0].Name != config.NodeResourcesBalancedAllocation || s[0].Weight != 2 || s[1].Name != config.ResourceStrategyFit || !s[1].ScoresOff {
		t.Errorf("resfit: %q %+v", c.Name, s)
	}
	if len(c.Scoring.Filters) != 0 {
		t.Errorf("filters %+v, want none (Volcano checks that a task fits)", c.Scoring.Filters)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{nil, "resfit: the arguments are a configuration in resfit's own form"},
		{map[string]any{"tiers": []any{}, "plugins": []any{}}, "resfit: the arguments are a configuration in resfit's own form"},
		{map[string]any{"plugins": []any{map[any]any{"name": "binpack", "weight": -1}}}, "plugins[0].weight"},
	} {
		if _, err := Decode(ResfitPluginName, tc.args, false); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// Volcano's amounts in resfit's units: milli-cpu and bytes as they are;
// scalars in thousandths but for pods, which Volcano counts whole, and
// resfit's whole-unit resources (ephemeral-storage, hugepages) divided by
// 1000; out-of-range amounts clamped; resources outside the schema left
// out; no allocation.
func TestFillDoesNotAllocate(t *testing.T) {
	s, _ := resource.NewSchema("cpu", "memory", "ephemeral-storage", "pods", "hugepages-2Mi", "nvidia.com/gpu")
	dst := make(resource.Vector, s.Len())
	type resourceName string // as Volcano's map keys are v1.ResourceName
	scalars := map[resourceName]float64{"nvidia.com/gpu": 2000, "pods": 110, "ephemeral-storage": 10e12, "hugepages-2Mi": 4 << 30 * 1000, "other.io/x": 5}
	if n := testing.AllocsPerRun(100, func() { Fill(s, dst, 4000, 8<<30, scalars) }); n != 0 {
		t.Errorf("Fill allocated %v times", n)
	}
	if diff := cmp.Diff(resource.Vector{4000, 8 << 30, 10e9, 110, 4 << 30, 2000}, dst); diff != "" {
		t.Errorf("vector (-want +got):\n%s", diff)
	}
	Fill[string](s, dst, -1, 1e300, nil)
	if dst[0] != 0 || dst[1] != resource.MaxAmount {
		t.Errorf("clamping: %v", dst)
	}
}

// A pod's author controls the annotations: weights above
// resource.MaxWeight (the review's 2^62 scored 5e21 against a maximum of
// 1000) make the pair unusable, and the task, made by the rule every host
// shares (scoring.NewTask), scores 0 everywhere, as bad JSON does in
// Volcano.
func TestOutOfRangeAnnotationWeightsScoreZero(t *testing.T) {
	s, _ := resource.NewSchema("cpu", "memory")
	c, err := Decode(ResourceStrategyFitPluginName, map[string]any{"resourceStrategyFitWeight": 10}, true)
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
	pod := resource.Pod{Containers: []resource.Container{{Requests: map[string]int64{"cpu": 4000, "memory": 1 << 30}}}}
	score := func(weights string) float64 {
		annotations := map[string]string{strategy.VolcanoScoringTypeAnnotation: "MostAllocated", strategy.VolcanoWeightAnnotation: weights}
		task, err := scoring.NewTask(s, "t", "", pod, annotations, scoring.TaskOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := pipe.Score(task, nodes, b); err != nil {
			t.Fatal(err)
		}
		return b.Total(0)
	}
	for _, weights := range []string{`{"cpu": 4611686018427387904, "memory": 4611686018427387904}`, `{"cpu": 1000001}`} {
		if got := score(weights); got != 0 {
			t.Errorf("%s: total %v, want 0", weights, got)
		}
	}
	// cpu MostAllocated (8+4)/64 × 1 / 1 × 100 × 10 = 187.5; in range.
	if got := score(`{"cpu": 1}`); got != 187.5 || got > pipe.MaxScore() {
		t.Errorf("usable annotation: total %v, max %v", got, pipe.MaxScore())
	}
}
