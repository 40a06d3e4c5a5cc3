package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resfit/resfit/strategy"
)

func decodeArgsErr(t *testing.T, plugin, yamlArgs string, opts Options) (ScorerArgs, []string, error) {
	t.Helper()
	doc, err := decodeDocument([]byte(yamlArgs))
	if err != nil {
		t.Fatal(err)
	}
	return DecodeArgs(plugin, doc, opts)
}

// decodeDocument reads a document as Load does (strictly), for tests that
// decode one plugin's arguments.
func decodeDocument(data []byte) (map[string]any, error) {
	d := &decoder{}
	doc, ok := d.document(data)
	if err := d.err(); !ok || err != nil {
		return nil, err
	}
	return doc, nil
}

func TestStrictErrorsNameFieldAndValue(t *testing.T) {
	tests := []struct {
		name, plugin, args string
		want               []string
	}{
		{"negative weight", ResourceStrategyFit, `
resources:
  nvidia.com/gpu: {type: MostAllocated, weight: -1}`,
			[]string{`resources["nvidia.com/gpu"].weight: must be > 0, got -1`}},
		{"zero weight", NodeResourcesFitPlus, `
resources:
  cpu: {type: LeastAllocated, weight: 0}`,
			[]string{`resources["cpu"].weight: must be > 0, got 0`}},
		{"unknown type", ResourceStrategyFit, `
resources:
  cpu: {type: Balanced, weight: 1}`,
			[]string{`resources["cpu"].type: unknown strategy type, want MostAllocated or LeastAllocated, got "Balanced"`}},
		{"bad wildcard", ResourceStrategyFit, `
resources:
  "*": {type: MostAllocated}
  "nvidia.com/*/x": {type: MostAllocated}`,
			[]string{`resources["*"]: invalid wildcard: a lone "*" is not supported`, `resources["nvidia.com/*/x"]: invalid wildcard: only one trailing '*'`}},
		{"wrong value type", ResourceStrategyFit, `
resourceStrategyFitWeight: ten
resources:
  cpu: {type: 7, weight: 1.5}`,
			[]string{`resourceStrategyFitWeight: must be a whole number, got "ten"`, `resources["cpu"].type: must be a string, got 7`}},
		{"fractional weight", ResourceStrategyFit, `
resources:
  cpu: {type: MostAllocated, weight: 1.5}`,
			[]string{`resources["cpu"].weight: must be a whole number, got 1.5`}},
		{"zero plugin weight", ResourceStrategyFit, `resourceStrategyFitWeight: 0`,
			[]string{`resourceStrategyFitWeight: must be > 0, got 0`}},
		{"unknown field", ResourceStrategyFit, `resourcez: {}`,
			[]string{`["resourcez"]: unknown field`}},
		{"bad resource name", NodeResourcesFitPlus, `
resources:
  "Nvidia GPU": {type: MostAllocated, weight: 1}`,
			[]string{`resources["Nvidia GPU"]: not a valid resource name: name part has ' '; allowed are letters, digits, '-', '_' and '.', got "Nvidia GPU"`}},
		{"missing type", NodeResourcesFitPlus, `
resources:
  cpu: {weight: 1}`,
			[]string{`resources["cpu"].type: required: want MostAllocated or LeastAllocated`}},
		{"kube weight range", NodeResourcesFit, `
scoringStrategy:
  type: MostAllocated
  resources: [{name: cpu, weight: 101}]`,
			[]string{`scoringStrategy.resources[0].weight: must be in (0, 100], got 101`}},
		{"kube unknown type", NodeResourcesFit, `
scoringStrategy: {type: Spread}`,
			[]string{`scoringStrategy.type: unsupported scoring strategy type`}},
		{"rtcr without shape", NodeResourcesFit, `
scoringStrategy: {type: RequestedToCapacityRatio}`,
			[]string{`scoringStrategy.requestedToCapacityRatio: must be specified`}},
		{"rtcr bad shape", NodeResourcesFit, `
scoringStrategy:
  type: RequestedToCapacityRatio
  requestedToCapacityRatio:
    shape: [{utilization: 50, score: 5}, {utilization: 40, score: 11}]`,
			[]string{"scoringStrategy.requestedToCapacityRatio.shape[1].utilization: values must be sorted in increasing order: must be above the previous point's 50, got 40"}},
		{"binpack negative", Binpack, `
binpack.weight: -2
binpack.cpu: -1
binpack.resources: nvidia.com/gpu
binpack.resources.nvidia.com/gpu: x
binpack.resources.example.com/foo: 3
binpack.gpu: 1`,
			[]string{`["binpack.weight"]: must be ≥ 0, got -2`, `["binpack.cpu"]: must be ≥ 0, got -1`,
				`["binpack.resources.nvidia.com/gpu"]: must be a whole number, got "x"`,
				`["binpack.resources.example.com/foo"]: names a resource not listed in binpack.resources, got 3`,
				`["binpack.gpu"]: unknown field`}},
		{"balanced weight", NodeResourcesBalancedAllocation, `resources: [{name: cpu, weight: 2}]`,
			[]string{`resources[0].weight: must be 1, got 2`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := decodeArgsErr(t, tc.plugin, tc.args, Options{})
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%s\nlacks %q", err, w)
				}
			}
		})
	}
}

func TestCompatReproducesVolcanoWithWarnings(t *testing.T) {
	a, warns, err := decodeArgsErr(t, ResourceStrategyFit, `
resourceStrategyFitWeight: -3
resources:
  nvidia.com/gpu: {type: MostAllocated, weight: -1}
  cpu: {type: Spread, weight: 0}
  "*": {type: MostAllocated}`, Options{Compat: true})
	if err != nil {
		t.Fatal(err)
	}
	want := ResourceStrategyFitArgs{Weight: 10, Resources: []strategy.Resource{
		{Name: "cpu", Type: strategy.LeastAllocated, Weight: 1},
		{Name: "nvidia.com/gpu", Type: strategy.MostAllocated, Weight: 1},
	}}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if len(warns) != 5 {
		t.Errorf("want a warning per changed value (5), got %d:\n%s", len(warns), strings.Join(warns, "\n"))
	}
	for _, w := range []string{`resourceStrategyFitWeight: must be > 0, got -3; using 10`, `resources["cpu"].type: unknown strategy type`,
		`resources["cpu"].weight: must be > 0, got 0; using 1`, `resources["*"]: invalid wildcard`} {
		if !strings.Contains(strings.Join(warns, "\n"), w) {
			t.Errorf("warnings lack %q:\n%s", w, strings.Join(warns, "\n"))
		}
	}
	a, warns, err = decodeArgsErr(t, ResourceStrategyFit, `{}`, Options{Compat: true})
	if err != nil || len(warns) != 0 {
		t.Fatal(err, warns)
	}
	if got := a.(ResourceStrategyFitArgs); got.Weight != 10 || len(got.Resources) != 2 {
		t.Errorf("defaults: %+v, want weight 10 and cpu/memory LeastAllocated", got)
	}
}

// The three configuration examples of volcano-resource-strategy-fit.md and
// the Koordinator and KEP documents decode to what they say.
func TestSpecConfigsDecode(t *testing.T) {
	volcano := `
actions: "enqueue, allocate, backfill, reclaim, preempt"
tiers:
- plugins:
  - name: resource-strategy-fit
    arguments:
      resourceStrategyFitWeight: 10
      resources:
        nvidia.com/gpu:
          type: MostAllocated
          weight: 2
        cpu:
          type: LeastAllocated
          weight: 1
  - name: gang
`
	c, err := Load([]byte(volcano), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Scorers) != 1 || c.Scorers[0].Name != ResourceStrategyFit || len(c.Filters) != 1 {
		t.Fatalf("volcano conf: %+v", c)
	}
	if diff := cmp.Diff(ResourceStrategyFitArgs{Weight: 10, Resources: []strategy.Resource{
		{Name: "cpu", Type: strategy.LeastAllocated, Weight: 1},
		{Name: "nvidia.com/gpu", Type: strategy.MostAllocated, Weight: 2},
	}}, c.Scorers[0].Args); diff != "" {
		t.Errorf("volcano args (-want +got):\n%s", diff)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], `"gang" has no resfit scorer`) {
		t.Errorf("warnings: %q", c.Warnings)
	}

	koord := `
profiles:
- pluginConfig:
  - args:
      apiVersion: kubescheduler.config.k8s.io/v1beta2
      kind: ResourceTypesArgs
      resources:
        nvidia.com/gpu: {type: MostAllocated, weight: 2}
        cpu: {type: LeastAllocated, weight: 1}
        memory: {type: LeastAllocated, weight: 1}
    name: NodeResourcesFitPlus
  plugins:
    score:
      enabled:
      - name: NodeResourcesFitPlus
        weight: 2
      disabled:
      - name: "*"
  schedulerName: koord-scheduler
`
	c, err = Load([]byte(koord), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Scorers) != 1 || c.Scorers[0].Name != NodeResourcesFitPlus || c.Scorers[0].Weight != 2 {
		t.Fatalf("koordinator conf: %+v", c.Scorers)
	}
	if len(c.Filters) != 1 {
		t.Errorf("the NodeResourcesFit filter stays on when only score plugins are disabled: %+v", c.Filters)
	}

	native := `
profiles:
- schedulerName: koord-scheduler
  pluginConfig:
  - args:
      scoringStrategy:
        resources: [{name: cpu, weight: 2}, {name: memory, weight: 1}]
        type: MostAllocated
    name: NodeResourcesFit
  plugins:
    score:
      enabled:
      - name: NodeResourcesFit
`
	c, err = Load([]byte(native), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Scorers) != 2 || c.Scorers[0].Name != NodeResourcesFit || c.Scorers[1].Name != NodeResourcesBalancedAllocation {
		t.Fatalf("kube defaults keep BalancedAllocation unless disabled: %+v", c.Scorers)
	}
	if diff := cmp.Diff(NodeResourcesFitArgs{Type: "MostAllocated", Resources: []strategy.Resource{{Name: "cpu", Weight: 2}, {Name: "memory", Weight: 1}}}, c.Scorers[0].Args); diff != "" {
		t.Errorf("kube args (-want +got):\n%s", diff)
	}

	kep := `{
  "kind": "Policy",
  "priorities": [{
    "name": "RequestedToCapacityRatioPriority",
    "weight": 5,
    "argument": {"requestedToCapacityRatioArguments": {
      "shape": [{"utilization": 100, "score": 10}, {"utilization": 0, "score": 0}],
      "resources": [{"resource": "intel.com/foo", "weight": 5}, {"resource": "intel.com/bar", "weight": 2}, {"resource": "cpu", "weight": 1}]}}
  }]}`
	// The KEP lists its shape from 100 down to 0; kube-scheduler requires
	// increasing utilisation, so the example as written is rejected.
	if _, err := Load([]byte(kep), Options{}); err == nil || !strings.Contains(err.Error(),
		"priorities[0].argument.requestedToCapacityRatioArguments.shape[1].utilization: values must be sorted in increasing order") {
		t.Fatalf("KEP policy with a descending shape: %v", err)
	}
	kep = strings.Replace(kep, `{"utilization": 100, "score": 10}, {"utilization": 0, "score": 0}`, `{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}`, 1)
	c, err = Load([]byte(kep), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Scorers[0].Weight != 5 || c.Scorers[0].Args.(NodeResourcesFitArgs).Type != ScoringRequestedToCapacityRatio {
		t.Errorf("KEP policy: %+v", c.Scorers[0])
	}
}

func TestLoadRejectsUnknownShapes(t *testing.T) {
	for _, doc := range []string{``, `[1, 2]`, `foo: 1`, `plugins: [{name: drf}]`, `plugins: 3`, `{`, `filters: [Nope]
plugins: []`} {
		if _, err := Load([]byte(doc), Options{}); err == nil {
			t.Errorf("Load(%q) accepted", doc)
		}
	}
	_, err := Load([]byte(`plugins: [{name: resource-strategy-fit, weight: -1, args: {resources: {cpu: {type: MostAllocated, weight: -1}}}}]`), Options{})
	if err == nil || !strings.Contains(err.Error(), `plugins[0].weight: must be ≥ 0, got -1`) ||
		!strings.Contains(err.Error(), `plugins[0].args.resources["cpu"].weight: must be > 0, got -1`) {
		t.Errorf("every error is reported with its full path: %v", err)
	}
}

func FuzzLoad(f *testing.F) {
	seeds := []string{
		`plugins: [{name: resource-strategy-fit, args: {resources: {nvidia.com/gpu: {type: MostAllocated, weight: 2}}}}]`,
		`tiers: [{plugins: [{name: binpack, arguments: {binpack.weight: 10, binpack.resources: "nvidia.com/gpu", binpack.resources.nvidia.com/gpu: 2}}]}]`,
		`profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]}}}}]}]`,
		`priorities: [{name: MostRequestedPriority, weight: 1}]`,
		`{"plugins": [{"name": "NodeResourcesFitPlus", "args": {"resources": {"cpu": {"type": "X", "weight": -1}}}}]}`,
		// Extremes: NaN and the infinities, weights at and past the bound and
		// past int64, duplicate and non-string keys, a fraction where an
		// integer is read.
		`plugins: [{name: resource-strategy-fit, weight: .nan, args: {resourceStrategyFitWeight: .inf, resources: {cpu: {type: MostAllocated, weight: -.inf}}}}]`,
		`plugins: [{name: NodeResourcesFitPlus, weight: 1000000, args: {resources: {cpu: {type: MostAllocated, weight: 1000000}}}}]`,
		`profiles: [{pluginConfig: [{name: NodeResourcesFitPlus, args: {resources: {nvidia.com/gpu: {type: MostAllocated, weight: 100000000000000000}}}}], plugins: {score: {enabled: [{name: NodeResourcesFitPlus, weight: 2147483647}]}}}]`,
		`tiers: [{plugins: [{name: resource-strategy-fit, arguments: {resourceStrategyFitWeight: 7.9, resources: {cpu: {type: MostAllocated, weight: 4611686018427387904}}}}]}]`,
		`tiers: [{plugins: [{name: binpack, arguments: {binpack.cpu: 9223372036854775807, binpack.memory: 18446744073709551616}}]}]`,
		`tiers: [{plugins: [{name: resource-strategy-fit, arguments: {sra.policy: retention, sra.resources: nvidia.com/gpu, sra.retention.weight: 100000000000000000}}]}]`,
		"plugins: [{name: binpack, weight: 1, weight: 2}]",
		"plugins: [{name: binpack, args: {null: 1, [a]: 2}}]",
		// The lifetime model's options, two plugins' that clash.
		"plugins: [{name: ResfitLifetime, args: {model: {window: 300}}}, {name: ResfitLearnedLifetime, args: {model: {minSamples: 400, quantile: 0.9}}}]",
		`plugins: [{name: ResfitFrag, args: {classes: [{gpus: 1}], lifetime: {model: {window: 2147483648, minSamples: -1, quantile: .nan}}}}]`,
	}
	fuzzConfig(f, seeds...)
}
