package config

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/strategy"
)

// loadErr loads a configuration that must fail and returns its message.
func loadErr(t *testing.T, doc string, opts Options) string {
	t.Helper()
	c, err := Load([]byte(doc), opts)
	if err == nil {
		t.Fatalf("accepted as %+v", c)
	}
	return err.Error()
}

func wantAll(t *testing.T, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("message\n%s\nlacks %q", got, w)
		}
	}
}

// .nan and .inf used to stop the whole document with "json: unsupported
// value: NaN", no path and wrong about the input; now the field that reads
// one refuses it.
func TestNaNAndInfinityAreRefusedWhereTheyAre(t *testing.T) {
	got := loadErr(t, `
plugins:
- name: resource-strategy-fit
  weight: .nan
  args:
    resourceStrategyFitWeight: .inf
    sra.policy: proportional
    sra.resources: nvidia.com/gpu
    sra.proportional.nvidia.com/gpu.cpu: -.inf
`, Options{})
	wantAll(t, got,
		`plugins[0].weight: must be a whole number, got NaN`,
		`plugins[0].args.resourceStrategyFitWeight: must be a whole number, got +Inf`,
		`plugins[0].args["sra.proportional.nvidia.com/gpu.cpu"]: must be a finite number, got -Inf`)
}

// A mapping key that is not a string (null, a list) used to give
// "unsupported map key of type …" with no path.
func TestNonStringKeysNameTheirMapping(t *testing.T) {
	got := loadErr(t, `
plugins:
- name: NodeResourcesFitPlus
  args:
    resources:
      null: {type: MostAllocated}
      [a, b]: {type: MostAllocated}
      cpu: {type: MostAllocated, weight: 1}
`, Options{})
	wantAll(t, got,
		`plugins[0].args.resources: a mapping key must be a string, got null`,
		`plugins[0].args.resources: a mapping key must be a string, got a list`)
	got = loadErr(t, `{null: 1}`, Options{})
	wantAll(t, got, `(root): a mapping key must be a string, got null`)
}

// A key given twice in one mapping was silently last-wins (weight: -5 then
// weight: 1 was accepted). Strict mode rejects it with its path; compat
// keeps the last, as Volcano's YAML decoder does, and says so.
func TestDuplicateKeys(t *testing.T) {
	doc := `
plugins:
- name: resource-strategy-fit
  args:
    resources:
      cpu: {type: MostAllocated, weight: -5, weight: 1}
`
	got := loadErr(t, doc, Options{})
	wantAll(t, got, `plugins[0].args.resources.cpu.weight: the key appears twice in one mapping (first -5, then 1)`)
	c, err := Load([]byte(doc), Options{Compat: true})
	if err != nil {
		t.Fatal(err)
	}
	if w := c.Scorers[0].Args.(ResourceStrategyFitArgs).Resources[0].Weight; w != 1 {
		t.Errorf("compat kept weight %d, want the last, 1", w)
	}
	wantAll(t, strings.Join(c.Warnings, "\n"), `the key appears twice in one mapping (first -5, then 1); using the last`)
}

// Messages that lost or garbled information: a shape error at the point's
// own path (no stray "got a list"), a duplicate resource name at Load with
// its path (it used to fail only at Build), 2^63 reported against the
// weight bound (not "must be a whole number"), and the reason a resource
// name is invalid.
func TestErrorsSayWhereAndWhy(t *testing.T) {
	got := loadErr(t, `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
        resources: [{name: cpu}, {name: memory}, {name: cpu, weight: 2}]
        requestedToCapacityRatio:
          shape: [{utilization: 0, score: -1}]
`, Options{})
	wantAll(t, got,
		`profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[0].score: must be in [0, 10], got -1`,
		`profiles[0].pluginConfig[0].args.scoringStrategy.resources[2].name: appears twice in the list, got "cpu"`)
	if strings.Contains(got, "got a list") {
		t.Errorf("stray tail in\n%s", got)
	}
	got = loadErr(t, `
plugins:
- name: resource-strategy-fit
  args:
    resources:
      cpu: {type: MostAllocated, weight: 9223372036854775808}
      Nvidia.com/gpu: {type: MostAllocated}
`, Options{})
	wantAll(t, got,
		`plugins[0].args.resources["cpu"].weight: must be at most 1000000, the bound on every weight (it keeps sums exact), got 9223372036854775808`,
		`plugins[0].args.resources["Nvidia.com/gpu"]: not a valid resource name: prefix "Nvidia.com"`)
}

// kube-scheduler's defaulting turns a resource weight of 0 into 1.
func TestKubeResourceWeightZeroIsOne(t *testing.T) {
	a, _, err := decodeArgsErr(t, NodeResourcesFit, `scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 0}]}`, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if w := a.(NodeResourcesFitArgs).Resources[0].Weight; w != 1 {
		t.Errorf("weight %d, want 1", w)
	}
}

// Every weight above resource.MaxWeight is refused with its path in strict
// mode and held to the bound, with a warning, in compat mode; the examples
// are the review's: each used to wrap int64 or make MaxScore negative.
func TestWeightsAboveTheBound(t *testing.T) {
	docs := map[string]struct{ doc, path string }{
		"NodeResourcesFitPlus weight 1e17": {`
profiles:
- pluginConfig:
  - name: NodeResourcesFitPlus
    args: {resources: {cpu: {type: MostAllocated, weight: 100000000000000000}}}
  plugins: {score: {enabled: [{name: NodeResourcesFitPlus}]}}`, `profiles[0].pluginConfig[0].args.resources["cpu"].weight`},
		"resource-strategy-fit weights 2^62": {`
tiers:
- plugins:
  - name: resource-strategy-fit
    arguments: {resources: {cpu: {type: MostAllocated, weight: 4611686018427387904}}}`, `tiers[0].plugins[0].arguments.resources["cpu"].weight`},
		"binpack.cpu MaxInt64": {`
tiers:
- plugins:
  - name: binpack
    arguments: {binpack.cpu: 9223372036854775807}`, `tiers[0].plugins[0].arguments["binpack.cpu"]`},
		"sra.retention.weight 1e17": {`
tiers:
- plugins:
  - name: resource-strategy-fit
    arguments:
      sra.policy: retention
      sra.resources: nvidia.com/gpu
      sra.retention.weight: 100000000000000000`, `tiers[0].plugins[0].arguments["sra.retention.weight"]`},
		"profile plugin weight": {`
profiles:
- plugins: {score: {enabled: [{name: NodeResourcesFit, weight: 2000000}]}}`, `profiles[0].plugins.score.enabled[0].weight`},
		"resfit plugin weight": {`plugins: [{name: binpack, weight: 1000001}]`, `plugins[0].weight`},
	}
	schema, _ := resource.NewSchema("cpu", "memory", "nvidia.com/gpu")
	for name, c := range docs {
		t.Run(name, func(t *testing.T) {
			wantAll(t, loadErr(t, c.doc, Options{}), c.path+": must be at most 1000000")
			cfg, err := Load([]byte(c.doc), Options{Compat: true})
			if err != nil {
				t.Fatal(err)
			}
			wantAll(t, strings.Join(cfg.Warnings, "\n"), c.path+": ", "is above 1000000, the bound on every weight; using 1000000")
			p, err := cfg.Build(schema)
			if err != nil {
				t.Fatal(err)
			}
			if m := p.MaxScore(); !(m > 0 && m <= scoring.MaxTotalScore) {
				t.Errorf("MaxScore %v", m)
			}
		})
	}
}

// Volcano's Test_calculateWeight (resource-strategy-fit) reproduced in
// compatibility mode, with the arguments as Volcano hands them over: a
// misspelled key (ResourceStrategyFitPlusWeight) is ignored and the weight
// defaults to 10; invalid wildcards are dropped; no resources default to cpu
// and memory LeastAllocated.
func TestVolcanoCalculateWeight(t *testing.T) {
	res := func(typ string, w int) map[string]any { return map[string]any{"type": typ, "weight": w} }
	most, least := strategy.MostAllocated, strategy.LeastAllocated
	tests := []struct {
		name string
		args map[string]any
		want []strategy.Resource
	}{
		{"test1", map[string]any{"resourceStrategyFitWeight": 10, "resources": map[string]any{"cpu": res("MostAllocated", 1), "memory": res("LeastAllocated", 2)}},
			[]strategy.Resource{{Name: "cpu", Type: most, Weight: 1}, {Name: "memory", Type: least, Weight: 2}}},
		{"test2", map[string]any{"resources": map[string]any{"cpu": res("MostAllocated", 1), "memory": res("LeastAllocated", 2)}},
			[]strategy.Resource{{Name: "cpu", Type: most, Weight: 1}, {Name: "memory", Type: least, Weight: 2}}},
		{"test3", map[string]any{"resourceStrategyFitWeight": 10},
			[]strategy.Resource{{Name: "cpu", Type: least, Weight: 1}, {Name: "memory", Type: least, Weight: 1}}},
		{"test4", map[string]any{"ResourceStrategyFitPlusWeight": 10, "resources": map[string]any{"cpu": res("LeastAllocated", 1), "*": res("MostAllocated", 2)}},
			[]strategy.Resource{{Name: "cpu", Type: least, Weight: 1}}},
		{"test5", map[string]any{"ResourceStrategyFitPlusWeight": 10, "resources": map[string]any{"nvidia.com/gpu/*": res("MostAllocated", 3), "cloudml.gpu**": res("LeastAllocated", 2)}},
			[]strategy.Resource{{Name: "nvidia.com/gpu/*", Type: most, Weight: 3}}},
		{"test6", map[string]any{"ResourceStrategyFitPlusWeight": 10, "resources": map[string]any{"memory": res("LeastAllocated", 1), "cloudml.*.gpu": res("MostAllocated", 2), "*.com/gpu": res("MostAllocated", 3)}},
			[]strategy.Resource{{Name: "memory", Type: least, Weight: 1}}},
		{"test7", map[string]any{"ResourceStrategyFitPlusWeight": 10, "resources": map[string]any{"nvidia.com/gpu/*": res("MostAllocated", 3), "example.com/foo/*": res("LeastAllocated", 2),
			"*test*resource*": res("MostAllocated", 4), "*": res("LeastAllocated", 1)}},
			[]strategy.Resource{{Name: "example.com/foo/*", Type: least, Weight: 2}, {Name: "nvidia.com/gpu/*", Type: most, Weight: 3}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, warns, err := DecodeArgs(ResourceStrategyFit, tc.args, Options{Compat: true})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ResourceStrategyFitArgs{Weight: 10, Resources: tc.want}, a); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if _, misspelled := tc.args["ResourceStrategyFitPlusWeight"]; misspelled {
				wantAll(t, strings.Join(warns, "\n"), `["ResourceStrategyFitPlusWeight"]: unknown field, ignored as Volcano ignores it`)
				if _, _, err := DecodeArgs(ResourceStrategyFit, tc.args, Options{}); err == nil || !strings.Contains(err.Error(), `["ResourceStrategyFitPlusWeight"]: unknown field`) {
					t.Errorf("strict mode: %v", err)
				}
			}
		})
	}
}

// Volcano reads resource-strategy-fit's integers with mapstructure, which
// truncates a float (7.9 → 7) and matches a struct field's name in any
// case, and binpack's with Arguments.GetInt, which ignores a float and
// keeps the default. Compatibility mode does the same and says so; strict
// mode refuses each.
func TestCompatReadsNumbersAndFieldsAsVolcano(t *testing.T) {
	doc := `
tiers:
- plugins:
  - name: resource-strategy-fit
    arguments:
      resourceStrategyFitWeight: 7.9
      resources:
        nvidia.com/gpu: {Type: MostAllocated, WEIGHT: 2.5}
      sra: {Enable: true, resources: nvidia.com/gpu, weight: 3.7, resourceWeight: {nvidia.com/gpu: 2.2}}
  - name: binpack
    arguments: {binpack.cpu: 2.5, binpack.memory: 3, binpack.weight: 4}
`
	c, err := Load([]byte(doc), Options{Compat: true})
	if err != nil {
		t.Fatal(err)
	}
	rsf := c.Scorers[0].Args.(ResourceStrategyFitArgs)
	if rsf.Weight != 7 || rsf.Resources[0].Weight != 2 || rsf.Resources[0].Type != strategy.MostAllocated {
		t.Errorf("resource-strategy-fit: %+v", rsf)
	}
	if rsf.Retention == nil || rsf.Retention.Weight != 3 || rsf.Retention.Resources[0].Weight != 2 {
		t.Errorf("sra: %+v", rsf.Retention)
	}
	if bp := c.Scorers[1].Args.(BinpackArgs); bp.CPU != 1 || bp.Memory != 3 || bp.Weight != 4 {
		t.Errorf("binpack: %+v", bp)
	}
	wantAll(t, strings.Join(c.Warnings, "\n"),
		`resourceStrategyFitWeight: 7.9 is not a whole number; using 7, as Volcano's argument decoder truncates it`,
		`resources["nvidia.com/gpu"]["Type"]: read as type`,
		`resources["nvidia.com/gpu"]["WEIGHT"]: read as weight`,
		`sra["Enable"]: read as enable`,
		`["binpack.cpu"]: 2.5 is not a whole number; Volcano ignores it and keeps the default`)
	got := loadErr(t, doc, Options{})
	wantAll(t, got,
		`tiers[0].plugins[0].arguments.resourceStrategyFitWeight: must be a whole number, got 7.9`,
		`tiers[0].plugins[0].arguments.resources["nvidia.com/gpu"]["Type"]: unknown field`,
		`tiers[0].plugins[0].arguments.sra["Enable"]: unknown field`,
		`tiers[0].plugins[1].arguments["binpack.cpu"]: must be a whole number, got 2.5`)
}

// An untrusted configuration's values and keys are echoed at most 200
// bytes each, and at most 100 errors are listed, the last line saying how
// many more: a megabyte under a wrong key is not a megabyte of message.
func TestErrorsEchoLittle(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	got := loadErr(t, `{"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "`+long+`"}}}]}]}`, Options{})
	want := `profiles[0].pluginConfig[0].args.scoringStrategy.type: unsupported scoring strategy type, want MostAllocated, LeastAllocated or RequestedToCapacityRatio, got "` +
		long[:200] + `"… (1048576 bytes)`
	if got != want {
		t.Errorf("a 1 MiB value: %d bytes of message, want %d:\n%.400s", len(got), len(want), got)
	}
	var many strings.Builder
	many.WriteString("profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: MostAllocated\n        resources:\n")
	for i := range 150 {
		many.WriteString("        - {name: cpu" + strconv.Itoa(i) + ", weight: -1}\n")
	}
	got = loadErr(t, many.String(), Options{})
	lines := strings.Split(got, "\n")
	if len(lines) != 101 || lines[100] != "and 50 more" || !strings.HasPrefix(lines[99], "profiles[0].pluginConfig[0].args.scoringStrategy.resources[99]") {
		t.Errorf("150 errors: %d lines, the last two %q", len(lines), lines[len(lines)-2:])
	}
}
