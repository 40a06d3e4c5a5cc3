package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/sra"
	"github.com/resfit/resfit/strategy"
)

// The same retention + proportional policy in each dialect decodes to the
// same arguments.
func TestSRADialectsAgree(t *testing.T) {
	want := ResourceStrategyFitArgs{
		Weight:       10,
		Resources:    []strategy.Resource{{Name: "cpu", Type: strategy.LeastAllocated, Weight: 1}, {Name: "memory", Type: strategy.LeastAllocated, Weight: 1}},
		Retention:    &RetentionArgs{Weight: 2, Resources: []sra.Weighted{{Name: "nvidia.com/gpu", Weight: 1}, {Name: "nvidia.com/v100-sxm2-16gb", Weight: 3}}},
		Proportional: []sra.Ratio{{Resource: "nvidia.com/gpu", CPU: 8, Memory: 8}, {Resource: "nvidia.com/v100-sxm2-16gb", CPU: 16, Memory: 1}},
	}
	dialects := map[string]string{
		"flat": `
sra.policy: retention, proportional
sra.resources: nvidia.com/gpu, nvidia.com/v100-sxm2-16gb
sra.retention.weight: 2
sra.retention.nvidia.com/v100-sxm2-16gb: 3
sra.proportional.nvidia.com/gpu.cpu: 8
sra.proportional.nvidia.com/gpu.memory: 8
sra.proportional.nvidia.com/v100-sxm2-16gb.cpu: 16`,
		"nested": `
sra:
  policy: retention,proportional
  resources: nvidia.com/gpu,nvidia.com/v100-sxm2-16gb
  retention:
    weight: 2
    nvidia.com/v100-sxm2-16gb: 3
  proportional:
    nvidia.com/gpu.cpu: 8
    nvidia.com/gpu.memory: 8
    nvidia.com/v100-sxm2-16gb.cpu: 16`,
		"released": `
sra:
  enable: true
  resources: nvidia.com/gpu, nvidia.com/v100-sxm2-16gb
  weight: 2
  resourceWeight:
    nvidia.com/v100-sxm2-16gb: 3
proportional:
  enable: true
  resources: nvidia.com/gpu,nvidia.com/v100-sxm2-16gb
  resourceProportion:
    nvidia.com/gpu.cpu: 8
    nvidia.com/gpu.memory: 8
    nvidia.com/v100-sxm2-16gb.cpu: 16`,
	}
	for name, args := range dialects {
		t.Run(name, func(t *testing.T) {
			got, warns, err := decodeArgsErr(t, ResourceStrategyFit, args, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(warns) != 0 {
				t.Errorf("warnings: %q", warns)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The spec's own examples: the flat retention configuration, the nested
// proportional one, and the Best Practices AI scenario.
func TestSRASpecConfigs(t *testing.T) {
	a, _, err := decodeArgsErr(t, ResourceStrategyFit, `
sra.policy: retention
sra.resources: nvidia.com/t4, nvidia.com/a10
sra.retention.weight: 2
sra.retention.nvidia.com/t4: 1
sra.retention.nvidia.com/a10: 1`, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&RetentionArgs{Weight: 2, Resources: []sra.Weighted{{Name: "nvidia.com/t4", Weight: 1}, {Name: "nvidia.com/a10", Weight: 1}}},
		a.(ResourceStrategyFitArgs).Retention); diff != "" {
		t.Errorf("retention (-want +got):\n%s", diff)
	}
	a, _, err = decodeArgsErr(t, ResourceStrategyFit, `
sra:
  policy: proportional
  resources: nvidia.com/gpu,nvidia.com/v100-sxm2-16gb
  proportional:
    nvidia.com/gpu.cpu: 8
    nvidia.com/gpu.memory: 8
    nvidia.com/v100-sxm2-16gb.cpu: 16
    nvidia.com/v100-sxm2-16gb.memory: 16`, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]sra.Ratio{{Resource: "nvidia.com/gpu", CPU: 8, Memory: 8}, {Resource: "nvidia.com/v100-sxm2-16gb", CPU: 16, Memory: 16}}, a.(ResourceStrategyFitArgs).Proportional); diff != "" {
		t.Errorf("proportional (-want +got):\n%s", diff)
	}
	if a.(ResourceStrategyFitArgs).Retention != nil {
		t.Error("policy proportional alone turned retention on")
	}
}

func TestSRAErrorsNameFieldAndValue(t *testing.T) {
	tests := []struct {
		name, args string
		want       []string
	}{
		{"unknown policy", `{sra.policy: avoid, sra.resources: nvidia.com/gpu}`,
			[]string{`["sra.policy"]: unknown sra policy, want retention, proportional or both, got "avoid"`}},
		{"weight of unlisted resource", `{sra.policy: retention, sra.resources: nvidia.com/gpu, sra.retention.nvidia.com/t4: 1}`,
			[]string{`["sra.retention.nvidia.com/t4"]: names a resource not listed in the sra resources, got 1`}},
		{"zero retention weight", `{sra: {policy: retention, resources: nvidia.com/gpu, retention: {weight: 0}}}`,
			[]string{`sra.retention.weight: must be > 0, got 0`}},
		{"negative resource weight", `{sra: {enable: true, resources: nvidia.com/gpu, weight: 10, resourceWeight: {nvidia.com/gpu: -1}}}`,
			[]string{`sra.resourceWeight["nvidia.com/gpu"]: must be > 0, got -1`}},
		{"released without weight", `{sra: {enable: true, resources: nvidia.com/gpu}}`,
			[]string{`sra.weight: required when sra.enable is true`}},
		{"bad proportion key", `{proportional: {enable: true, resources: nvidia.com/gpu, resourceProportion: {nvidia.com/gpu.disk: 1}}}`,
			[]string{`proportional.resourceProportion["nvidia.com/gpu.disk"]: want <resource>.cpu or <resource>.memory, got 1`}},
		{"negative ratio", `{sra: {policy: proportional, resources: nvidia.com/gpu, proportional: {nvidia.com/gpu.cpu: -8}}}`,
			[]string{`sra.proportional["nvidia.com/gpu.cpu"]: must be ≥ 0, got -8`}},
		{"mixed forms", `{sra.policy: retention, sra: {policy: retention}}`,
			[]string{`flat sra.* keys cannot be mixed`}},
		{"mixed nested", `{sra: {enable: true, policy: retention}}`,
			[]string{`sra: mixes Volcano's released form`}},
		{"bad resource", `{sra: {policy: retention, resources: "nvidia.com/gpu, Bad Name"}}`,
			[]string{`sra.resources: not a valid resource name: name part has ' '; allowed are letters, digits, '-', '_' and '.', got "Bad Name"`}},
		{"no resources", `{sra: {policy: retention}}`,
			[]string{`sra.resources: at least one scarce resource is required`}},
		{"proportional twice", `{sra: {policy: proportional, resources: nvidia.com/gpu}, proportional: {enable: true, resources: nvidia.com/gpu}}`,
			[]string{`proportional: proportional is configured twice`}},
		{"unknown flat key", `{sra.retention: 1, sra.foo: 2}`,
			[]string{`["sra.foo"]: unknown field`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := decodeArgsErr(t, ResourceStrategyFit, tc.args, Options{})
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

func TestSRACompatFollowsVolcano(t *testing.T) {
	a, warns, err := decodeArgsErr(t, ResourceStrategyFit, `
sra: {enable: true, resources: "nvidia.com/gpu, nvidia.com/t4", weight: 10, resourceWeight: {nvidia.com/gpu: -2, nvidia.com/t4: 0, nvidia.com/a10: 5}}
proportional: {enable: true, resources: nvidia.com/gpu, resourceProportion: {nvidia.com/gpu.cpu: -1}}`, Options{Compat: true})
	if err != nil {
		t.Fatal(err)
	}
	got := a.(ResourceStrategyFitArgs)
	if diff := cmp.Diff(&RetentionArgs{Weight: 10, Resources: []sra.Weighted{{Name: "nvidia.com/gpu", Weight: 1}, {Name: "nvidia.com/t4", Weight: 0}}}, got.Retention); diff != "" {
		t.Errorf("retention (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]sra.Ratio{{Resource: "nvidia.com/gpu", CPU: 1, Memory: 1}}, got.Proportional); diff != "" {
		t.Errorf("proportional (-want +got):\n%s", diff)
	}
	if len(warns) != 4 {
		t.Errorf("want 4 warnings, got %q", warns)
	}
	a, warns, err = decodeArgsErr(t, ResourceStrategyFit, `{sra: {enable: true, resources: nvidia.com/gpu}}`, Options{Compat: true})
	if err != nil || a.(ResourceStrategyFitArgs).Retention != nil || len(warns) != 1 {
		t.Errorf("released form without weight: Volcano turns retention off; got %+v, %q, %v", a, warns, err)
	}
}

// The retention table of volcano-resource-strategy-fit.md through the whole
// pipeline, from the spec's flat configuration: the retention column.
func TestRetentionThroughPipeline(t *testing.T) {
	c, err := Load([]byte(`
tiers:
- plugins:
  - name: resource-strategy-fit
    arguments:
      sra.policy: retention
      sra.resources: nvidia.com/t4, nvidia.com/a10
      sra.retention.weight: 2
      sra.retention.nvidia.com/t4: 1
      sra.retention.nvidia.com/a10: 1
`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	schema, _ := resource.NewSchema("cpu", "memory", "nvidia.com/t4", "nvidia.com/a10")
	p, err := c.Build(schema)
	if err != nil {
		t.Fatal(err)
	}
	if names := p.ScorerNames(); strings.Join(names, ",") != "resource-strategy-fit,sra.retention" {
		t.Fatalf("scorers %v", names)
	}
	nodes := resource.NewTable(schema, 3)
	for _, n := range []map[string]string{
		{"cpu": "32", "memory": "64Gi"},
		{"cpu": "16", "memory": "32Gi", "nvidia.com/t4": "10"},
		{"cpu": "16", "memory": "32Gi", "nvidia.com/t4": "5", "nvidia.com/a10": "10"},
	} {
		v, _ := schema.Parse(n)
		nodes.Add("node", v, nil)
	}
	b := p.NewBatch(3)
	for _, c := range []struct {
		req  map[string]string
		want [3]float64
	}{
		{map[string]string{"cpu": "2", "memory": "4Gi"}, [3]float64{200, 100, 0}},
		{map[string]string{"cpu": "2", "memory": "4Gi", "nvidia.com/t4": "2"}, [3]float64{0, 100, 0}},
		{map[string]string{"cpu": "2", "memory": "4Gi", "nvidia.com/t4": "1", "nvidia.com/a10": "2"}, [3]float64{0, 0, 0}},
	} {
		req, _ := schema.Parse(c.req)
		if err := p.Score(&scoring.Task{Requests: req}, nodes, b); err != nil {
			t.Fatal(err)
		}
		for i, want := range c.want {
			if got := b.Contribution(i, 1); got != want {
				t.Errorf("%v on node%d: retention %v, want %v", c.req, i+1, got, want)
			}
		}
	}
}

// Koordinator's example configuration, NodeResourcesFitPlus and
// ScarceResourceAvoidance each with weight 2: a CPU pod prefers a CPU node;
// a GPU pod prefers the fuller GPU node.
func TestKoordinatorCPUPodPrefersCPUNode(t *testing.T) {
	c, err := Load([]byte(`
profiles:
- pluginConfig:
  - name: NodeResourcesFitPlus
    args:
      resources:
        nvidia.com/gpu: {type: MostAllocated, weight: 2}
        cpu: {type: LeastAllocated, weight: 1}
        memory: {type: LeastAllocated, weight: 1}
  - name: ScarceResourceAvoidance
    args:
      resources: [nvidia.com/gpu]
  plugins:
    score:
      enabled: [{name: NodeResourcesFitPlus, weight: 2}, {name: ScarceResourceAvoidance, weight: 2}]
      disabled: [{name: "*"}]
`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	schema, _ := resource.NewSchema("cpu", "memory", "ephemeral-storage", "nvidia.com/gpu")
	p, err := c.Build(schema)
	if err != nil {
		t.Fatal(err)
	}
	nodes := resource.NewTable(schema, 4)
	add := func(name string, alloc, used map[string]string) {
		if _, err := nodes.AddQuantities(name, alloc, used); err != nil {
			t.Fatal(err)
		}
	}
	gpuNode := map[string]string{"cpu": "256", "memory": "1Ti", "ephemeral-storage": "1Ti", "nvidia.com/gpu": "8"}
	cpuNode := map[string]string{"cpu": "256", "memory": "1Ti", "ephemeral-storage": "1Ti"}
	add("gpu-full", gpuNode, map[string]string{"cpu": "56", "memory": "102Gi", "nvidia.com/gpu": "6"})
	add("gpu-empty", gpuNode, map[string]string{"cpu": "56", "memory": "51Gi"})
	add("cpu-busy", cpuNode, map[string]string{"cpu": "102", "memory": "512Gi"})
	add("cpu-idle", cpuNode, map[string]string{"cpu": "76", "memory": "204Gi"})
	b := p.NewBatch(4)
	best := func(req map[string]string) string {
		v, _ := schema.Parse(req)
		if err := p.Score(&scoring.Task{Name: "test-scheduler1-xxx", Requests: v}, nodes, b); err != nil {
			t.Fatal(err)
		}
		return nodes.Name(b.Top(1, nil)[0])
	}
	got := best(map[string]string{"cpu": "100", "memory": "100"})
	// By NodeResourcesFitPlus alone the emptier GPU node would win (134 >
	// 110); ScarceResourceAvoidance (100 there, 200 on CPU nodes) turns it.
	if b.Contribution(1, 0) != 134 || b.Contribution(3, 0) != 110 {
		t.Errorf("fit plus: gpu-empty %v, cpu-idle %v; want 134, 110", b.Contribution(1, 0), b.Contribution(3, 0))
	}
	if got != "cpu-idle" {
		t.Errorf("CPU pod went to %s", got)
	}
	// On the GPU node the CPU pod's avoidance score is 2 × (2−1)·100/2 = 100
	// (ephemeral-storage and the GPU unrequested); on CPU nodes 200.
	if b.Contribution(0, 1) != 100 || b.Contribution(2, 1) != 200 {
		t.Errorf("avoidance: gpu node %v, cpu node %v", b.Contribution(0, 1), b.Contribution(2, 1))
	}
	if got := best(map[string]string{"cpu": "100", "memory": "100", "nvidia.com/gpu": "2"}); got != "gpu-full" {
		t.Errorf("GPU pod went to %s", got)
	}
}

func TestScarceResourceAvoidanceArgsErrors(t *testing.T) {
	for args, want := range map[string]string{
		`resources: []`:                  `resources: at least one scarce resource is required`,
		`resources: [nvidia.com/gpu, 3]`: `resources[1]: must be a string, got 3`,
		`resource: [nvidia.com/gpu]`:     `["resource"]: unknown field`,
	} {
		_, _, err := decodeArgsErr(t, ScarceResourceAvoidance, args, Options{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
}

// fuzzArgs fuzzes one plugin's arguments, from the seeds and the same
// seeds with extreme values (NaN, infinities, weights past the bound and
// past int64, fractions, duplicate keys) spliced in.
func fuzzArgs(f *testing.F, plugin string, seeds ...string) {
	extremes := []string{".nan", ".inf", "-.inf", "1000001", "9223372036854775808", "4611686018427387904", "7.9", "-1e300"}
	for _, s := range seeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
		for i, x := range extremes {
			// Replace the first number of the seed by an extreme value.
			if j := strings.IndexAny(s, "0123456789"); j >= 0 {
				k := j
				for k < len(s) && s[k] >= '0' && s[k] <= '9' {
					k++
				}
				f.Add([]byte(s[:j]+x+s[k:]), i%2 == 0)
			}
		}
	}
	schema, _ := resource.NewSchema("cpu", "memory", "nvidia.com/gpu", "nvidia.com/t4")
	nodes := resource.NewTable(schema, 2)
	nodes.Add("gpu", resource.Vector{74000, 128e9, 8000, 0}, resource.Vector{8000, 8e9, 0, 0})
	nodes.Add("cpu", resource.Vector{32000, 64 << 30, 0, 0}, nil)
	f.Fuzz(func(t *testing.T, data []byte, compat bool) {
		d := &decoder{compat: compat}
		doc, ok := d.document(data)
		if !ok || d.err() != nil {
			return
		}
		args, _, err := DecodeArgs(plugin, doc, Options{Compat: compat})
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) || len(ce.Errors) == 0 || !strings.Contains(err.Error(), ": ") {
				t.Fatalf("error without a field path: %v", err)
			}
			return
		}
		c := &Config{Filters: []FilterConfig{{Name: NodeResourcesFit, Args: NodeResourcesFitArgs{}}},
			Scorers: []ScorerConfig{{Name: plugin, Weight: 1, Args: args}}}
		p, err := c.Build(schema)
		if err != nil {
			t.Fatalf("decoded but did not build: %v", err)
		}
		b := p.NewBatch(2)
		for _, req := range []resource.Vector{{8000, 8e9, 0, 0}, {1000, 1 << 30, 1000, 0}} {
			if err := p.Score(&scoring.Task{Requests: req}, nodes, b); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < b.Len(); i++ {
				if tot := b.Total(i); !(tot >= 0 && tot <= p.MaxScore()) {
					t.Fatalf("total %v outside [0, %v]", tot, p.MaxScore())
				}
			}
		}
	})
}

func FuzzSRAFlat(f *testing.F) {
	fuzzArgs(f, ResourceStrategyFit,
		"sra.policy: retention\nsra.resources: nvidia.com/t4, nvidia.com/gpu\nsra.retention.weight: 2\nsra.retention.nvidia.com/t4: 1",
		"sra.policy: proportional\nsra.resources: nvidia.com/gpu\nsra.proportional.nvidia.com/gpu.cpu: 8")
}

func FuzzSRANested(f *testing.F) {
	fuzzArgs(f, ResourceStrategyFit,
		"sra: {policy: proportional, resources: nvidia.com/gpu, proportional: {nvidia.com/gpu.cpu: 8, nvidia.com/gpu.memory: 8}}",
		"sra: {policy: retention, resources: nvidia.com/gpu, retention: {weight: 10, nvidia.com/gpu: 1}}")
}

func FuzzSRAReleased(f *testing.F) {
	fuzzArgs(f, ResourceStrategyFit,
		"sra: {enable: true, resources: nvidia.com/gpu, weight: 10, resourceWeight: {nvidia.com/gpu: 1}}\nproportional: {enable: true, resources: nvidia.com/gpu, resourceProportion: {nvidia.com/gpu.cpu: 4, nvidia.com/gpu.memory: 8}}")
}

func FuzzScarceResourceAvoidanceArgs(f *testing.F) {
	fuzzArgs(f, ScarceResourceAvoidance, "resources: [nvidia.com/gpu]", "{resources: [nvidia.com/gpu, nvidia.com/t4]}")
}
