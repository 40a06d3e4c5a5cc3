package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/strategy"
)

// volcanoDefaultConf is the scheduler configuration Volcano ships: its Helm
// chart's config/volcano-scheduler.conf, which installer/volcano-development.yaml
// puts in the volcano-scheduler-configmap.
const volcanoDefaultConf = `actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
`

// indent puts text under a YAML block scalar.
func indent(text, prefix string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	return prefix + strings.Join(lines, "\n"+prefix) + "\n"
}

func volcanoConfigMap(conf string) string {
	return `apiVersion: v1
kind: ConfigMap
metadata:
  name: volcano-scheduler-configmap
  namespace: volcano-system
data:
  volcano-scheduler.conf: |
` + indent(conf, "    ")
}

// volcanoManifests is a file of manifests as an installer ships them: the
// scheduler's ConfigMap among other objects, one of them a ConfigMap whose
// data is not a scheduler configuration.
func volcanoManifests(conf string) string {
	return `# Source: volcano/templates/admission.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: volcano-admission-configmap
  namespace: volcano-system
data:
  volcano-admission.conf: |
    resourceGroups:
    - resourceGroup: management
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: volcano-scheduler
  namespace: volcano-system
---
` + volcanoConfigMap(conf) + `---
kind: ClusterRole
apiVersion: rbac.authorization.k8s.io/v1
metadata:
  name: volcano-scheduler
---
`
}

// Volcano's default configuration loads in strict mode, bare, as its
// ConfigMap and among other manifests, and scores as Volcano's nodeorder
// (leastrequested and balancedresource at weight 1) plus binpack (cpu and
// memory at weight 1) do. Worked by hand from Volcano's and kube-scheduler's
// formulas, on a GPU node (32 cores, 128Gi, 8 GPUs; 8 cores, 64Gi and 6 GPUs
// used) and a CPU node (64 cores, 256Gi; 16 cores and 64Gi used):
//
// GPU task (8 cores, 16Gi, 1 GPU) on the GPU node:
//
//	leastrequested (kube LeastAllocated, cpu and memory weighted 50 and 50):
//	  cpu (32−16)·100/32 = 50, memory (128−80)·100/128 = 37 (37.5 truncated),
//	  (50·50 + 37·50)/100 = 43
//	balancedresource (kube BalancedAllocation over cpu, memory, GPU):
//	  with the task  cpu 16/32 = .5, memory 80/128 = .625, GPU 7/8 = .875:
//	                 std 0.1559 → int(84.4) = 84
//	  without it     .25, .5, .75: std 0.2041 → int(79.6) = 79
//	  50 + (50 + 84 − 79)/2 = 77 (55/2 truncated)
//	binpack (cpu and memory only): (16/32 + 80/128)/2 · 100 = 56.25
//	total 43 + 77 + 56.25 = 176.25
//
// CPU task (8 cores, 16Gi) on the GPU node: leastrequested 43 as above;
// balancedresource skips the GPU the task does not request: with it
// |.5 − .625|/2 = .0625 → 93, without |.25 − .5|/2 = .125 → 87, 50 +
// (50 + 93 − 87)/2 = 78; binpack 56.25; total 177.25.
//
// CPU task on the CPU node: leastrequested cpu (64−24)·100/64 = 62,
// memory (256−80)·100/256 = 68, (62·50 + 68·50)/100 = 65; balancedresource
// with |.375 − .3125|/2 = .03125 → 96, without 0 → 100, 50 + (50 + 96 −
// 100)/2 = 73; binpack (24/64 + 80/256)/2 · 100 = 34.375; total 172.375 —
// under Volcano's defaults the CPU task prefers the GPU node.
func TestVolcanoDefaultConfiguration(t *testing.T) {
	schema, err := resource.NewSchema("cpu", "memory", "nvidia.com/gpu")
	if err != nil {
		t.Fatal(err)
	}
	nodes := resource.NewTable(schema, 2)
	for _, n := range []struct{ name, alloc, used string }{
		{"gpu-node", "cpu=32,memory=128Gi,nvidia.com/gpu=8", "cpu=8,memory=64Gi,nvidia.com/gpu=6"},
		{"cpu-node", "cpu=64,memory=256Gi", "cpu=16,memory=64Gi"},
	} {
		if _, err := nodes.AddQuantities(n.name, quantities(n.alloc), quantities(n.used)); err != nil {
			t.Fatal(err)
		}
	}
	type want struct{ leastRequested, balanced, binpack, total float64 }
	tasks := []struct {
		name, requests string
		want           []want // per node; nil where the task does not fit
	}{
		{"gpu-task", "cpu=8,memory=16Gi,nvidia.com/gpu=1", []want{{43, 77, 56.25, 176.25}, {}}},
		{"cpu-task", "cpu=8,memory=16Gi", []want{{43, 78, 56.25, 177.25}, {65, 73, 34.375, 172.375}}},
	}
	forms := map[string]string{
		"bare":      volcanoDefaultConf,
		"ConfigMap": volcanoConfigMap(volcanoDefaultConf),
		"manifests": volcanoManifests(volcanoDefaultConf),
	}
	for form, doc := range forms {
		t.Run(form, func(t *testing.T) {
			c, err := Load([]byte(doc), Options{})
			if err != nil {
				t.Fatal(err)
			}
			pipe, err := c.Build(schema)
			if err != nil {
				t.Fatal(err)
			}
			wantNames := []string{"nodeorder.leastrequested", "nodeorder.balancedresource", "binpack"}
			if diff := cmp.Diff(wantNames, pipe.ScorerNames()); diff != "" {
				t.Fatalf("scorers (-want +got):\n%s", diff)
			}
			batch := pipe.NewBatch(nodes.Len())
			for _, task := range tasks {
				req, err := schema.Parse(quantities(task.requests))
				if err != nil {
					t.Fatal(err)
				}
				if err := pipe.Score(&scoring.Task{Name: task.name, Requests: req}, nodes, batch); err != nil {
					t.Fatal(err)
				}
				for i, w := range task.want {
					if w == (want{}) {
						if batch.Feasible(i) {
							t.Errorf("%s on %s: feasible, want rejected by the fit check", task.name, nodes.Name(i))
						}
						continue
					}
					got := want{batch.Contribution(i, 0), batch.Contribution(i, 1), batch.Contribution(i, 2), batch.Total(i)}
					if got != w {
						t.Errorf("%s on %s: leastrequested, balancedresource, binpack, total = %v, want %v", task.name, nodes.Name(i), got, w)
					}
				}
			}
			warnings := strings.Join(c.Warnings, "\n")
			wantAll(t, warnings,
				`tiers[0].plugins[0] "priority", tiers[0].plugins[1] "gang", tiers[0].plugins[2] "conformance", tiers[1].plugins[0] "overcommit", tiers[1].plugins[3] "proportion" have no resfit scorer: not node scores`,
				"(drf): job and queue order by dominant resource share",
				"(predicates): its resource check is resfit's fit filter",
				"(nodeorder): nodeaffinity (weight 2), podaffinity (weight 2), tainttoleration (weight 3), imagelocality (weight 1), podtopologyspread (weight 2) are not resource scores")
			if len(c.Warnings) != 4 {
				t.Errorf("want 4 warnings (host plugins, drf, predicates, nodeorder's other scores), got %d:\n%s", len(c.Warnings), warnings)
			}
		})
	}
}

// quantities reads "cpu=8,memory=16Gi".
func quantities(s string) map[string]string {
	m := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// Error paths start where the configuration sits in its file.
func TestVolcanoErrorsInAConfigMapNameTheirPlace(t *testing.T) {
	bad := strings.Replace(volcanoDefaultConf, "  - name: binpack\n", "  - name: binpack\n    arguments: {binpack.weight: -1}\n  - name: nodeorderr\n", 1)
	for form, tc := range map[string]struct{ doc, root string }{
		"bare":      {bad, ""},
		"ConfigMap": {volcanoConfigMap(bad), `data["volcano-scheduler.conf"].`},
		"manifests": {volcanoManifests(bad), `(document 3).data["volcano-scheduler.conf"].`},
	} {
		t.Run(form, func(t *testing.T) {
			_, err := Load([]byte(tc.doc), Options{})
			if err == nil {
				t.Fatal("loaded")
			}
			wantAll(t, err.Error(),
				tc.root+`tiers[1].plugins[5].arguments["binpack.weight"]: must be ≥ 0, got -1`,
				tc.root+`tiers[1].plugins[6].name: not a Volcano plugin; known are binpack, capacity, cdp, conformance, deviceshare, drf, extender, gang, network-topology-aware, nodegroup, nodeorder, numa-aware, overcommit, pdb, predicates, priority, proportion, rescheduling, resfit, resfit-binpack, resfit-fgd, resfit-frag, resfit-nodeorder, resfit-resource-strategy-fit, resource-strategy-fit, resourcequota, sla, task-topology, tdm, usage, got "nodeorderr"`)
		})
	}
}

// nodeorder's arguments, as Volcano reads them with Arguments.GetInt.
func TestVolcanoNodeOrderArguments(t *testing.T) {
	others := map[string]int64{"nodeaffinity.weight": 2, "podaffinity.weight": 2, "tainttoleration.weight": 3, "imagelocality.weight": 1, "podtopologyspread.weight": 2}
	tests := []struct {
		name, args string
		compat     bool
		want       NodeOrderArgs
		errs       []string
		warns      []string
	}{
		{name: "defaults", args: `{}`, want: NodeOrderArgs{LeastRequested: 1, BalancedResource: 1, Other: others}},
		{name: "most requested on", args: `{leastrequested.weight: 0, mostrequested.weight: 2, balancedresource.weight: 3}`,
			want: NodeOrderArgs{MostRequested: 2, BalancedResource: 3, Other: others}},
		{name: "other scores off", args: `{nodeaffinity.weight: 0, podaffinity.weight: 0, tainttoleration.weight: 0, imagelocality.weight: 0, podtopologyspread.weight: 0}`,
			want: NodeOrderArgs{LeastRequested: 1, BalancedResource: 1, Other: map[string]int64{"nodeaffinity.weight": 0, "podaffinity.weight": 0, "tainttoleration.weight": 0, "imagelocality.weight": 0, "podtopologyspread.weight": 0}}},
		{name: "negative weight", args: `{mostrequested.weight: -1}`,
			errs: []string{`tiers[0].plugins[0].arguments["mostrequested.weight"]: must be ≥ 0 (Volcano would subtract the score; resfit does not), got -1`}},
		{name: "negative weight in compat", args: `{mostrequested.weight: -1}`, compat: true,
			errs: []string{`["mostrequested.weight"]: must be ≥ 0`}},
		{name: "float weight", args: `{leastrequested.weight: 2.0, balancedresource.weight: 1.5}`,
			errs: []string{`["leastrequested.weight"]: must be written as an integer (Volcano ignores any other number and keeps the default), got 2.0`,
				`["balancedresource.weight"]: must be a whole number, got 1.5`}},
		{name: "float weight in compat keeps the default", args: `{leastrequested.weight: 2.0, balancedresource.weight: 1.5}`, compat: true,
			want:  NodeOrderArgs{LeastRequested: 1, BalancedResource: 1, Other: others},
			warns: []string{`["leastrequested.weight"]: 2.0 is not written as an integer; Volcano ignores it and keeps the default`, `["balancedresource.weight"]: 1.5 is not a whole number; Volcano ignores it`}},
		{name: "unknown key", args: `{leastrequested: 2}`,
			errs: []string{`["leastrequested"]: unknown field; known are leastrequested.weight, mostrequested.weight, balancedresource.weight, nodeaffinity.weight`}},
		{name: "unknown key in compat", args: `{leastrequested: 2}`, compat: true,
			want:  NodeOrderArgs{LeastRequested: 1, BalancedResource: 1, Other: others},
			warns: []string{`["leastrequested"]: unknown field, ignored as Volcano ignores it`}},
		{name: "weight above the bound", args: `{balancedresource.weight: 1000001}`,
			errs: []string{`["balancedresource.weight"]: must be at most 1000000`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := fmt.Sprintf("tiers: [{plugins: [{name: nodeorder, arguments: %s}]}]", tc.args)
			c, err := Load([]byte(doc), Options{Compat: tc.compat})
			if tc.errs != nil {
				if err == nil {
					t.Fatal("loaded")
				}
				wantAll(t, err.Error(), tc.errs...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, c.Scorers[0].Args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			wantAll(t, strings.Join(c.Warnings, "\n"), tc.warns...)
		})
	}
}

// A plugin's enableNodeOrder: false leaves its scores out and
// enablePredicate: false the filters it brings; a switch that is not a YAML
// boolean is an error, as Volcano refuses such a configuration.
func TestVolcanoPluginSwitches(t *testing.T) {
	doc := `
tiers:
- plugins:
  - name: binpack
    enableNodeOrder: false
  - name: resource-strategy-fit
    enablePredicate: false
    arguments:
      sra: {policy: proportional, resources: nvidia.com/gpu, proportional: {nvidia.com/gpu.cpu: 4}}
`
	c, err := Load([]byte(doc), Options{})
	if err != nil {
		t.Fatal(err)
	}
	schema, _ := resource.NewSchema("cpu", "memory", "nvidia.com/gpu")
	pipe, err := c.Build(schema)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{ResourceStrategyFit}, pipe.ScorerNames()); diff != "" {
		t.Errorf("scorers (-want +got):\n%s", diff)
	}
	// The proportional filter would keep 8 idle GPUs × 4 cores free: a CPU
	// task of 8 cores on a 32-core node would be rejected.
	nodes := resource.NewTable(schema, 1)
	if _, err := nodes.AddQuantities("gpu-node", quantities("cpu=32,memory=128Gi,nvidia.com/gpu=8"), nil); err != nil {
		t.Fatal(err)
	}
	req, _ := schema.Parse(quantities("cpu=8,memory=1Gi"))
	batch := pipe.NewBatch(1)
	if err := pipe.Score(&scoring.Task{Name: "cpu-task", Requests: req}, nodes, batch); err != nil {
		t.Fatal(err)
	}
	if !batch.Feasible(0) {
		t.Errorf("rejected (%s) with enablePredicate: false", batch.Reason(0))
	}
	c.Scorers[1].FiltersOff = false
	if pipe, err = c.Build(schema); err != nil {
		t.Fatal(err)
	}
	if err := pipe.Score(&scoring.Task{Name: "cpu-task", Requests: req}, nodes, batch); err != nil {
		t.Fatal(err)
	}
	if batch.Feasible(0) {
		t.Errorf("feasible with the proportional filter on")
	}
	wantAll(t, strings.Join(c.Warnings, "\n"), `tiers[0].plugins[0] (binpack): enableNodeOrder is false`)

	_, err = Load([]byte(`tiers: [{plugins: [{name: binpack, enableNodeOrder: "no"}]}]`), Options{Compat: true})
	if err == nil {
		t.Fatal("loaded")
	}
	wantAll(t, err.Error(), `tiers[0].plugins[0].enableNodeOrder: must be true or false (Volcano refuses the configuration otherwise), got "no"`)
}

// Unknown fields of a volcano-scheduler.conf: errors in strict mode,
// ignored with a warning in compatibility mode, as Volcano's YAML decoder
// ignores them.
func TestVolcanoUnknownFields(t *testing.T) {
	doc := `
actions: "allocate"
tierz: []
tiers:
- plugins:
  - name: binpack
    enableNodeOrdr: false
`
	_, err := Load([]byte(doc), Options{})
	if err == nil {
		t.Fatal("loaded")
	}
	wantAll(t, err.Error(), `["tierz"]: unknown field; known are actions, tiers, configurations, metrics`,
		`tiers[0].plugins[0]["enableNodeOrdr"]: unknown field`)
	c, err := Load([]byte(doc), Options{Compat: true})
	if err != nil {
		t.Fatal(err)
	}
	wantAll(t, strings.Join(c.Warnings, "\n"), `["tierz"]: unknown field, ignored as Volcano ignores it`, `["enableNodeOrdr"]: unknown field, ignored`)
	if len(c.Scorers) != 1 || c.Scorers[0].ScoresOff {
		t.Errorf("scorers %+v: binpack should score (the misspelt switch is ignored)", c.Scorers)
	}
}

// volcano-scheduler.conf: which plugins resfit computes, and what it says
// of the others.
func TestVolcanoConf(t *testing.T) {
	runLoadCases(t, []loadCase{
		{name: "scoring plugins in two tiers", doc: `
tiers:
- plugins: [{name: binpack, arguments: {binpack.weight: 2}}]
- plugins: [{name: resource-strategy-fit}, {name: nodeorder, arguments: {nodeaffinity.weight: 0, podaffinity.weight: 0, tainttoleration.weight: 0, imagelocality.weight: 0, podtopologyspread.weight: 0}}]`,
			filters: []string{NodeResourcesFit},
			scorers: []ScorerConfig{
				{Name: Binpack, Weight: 1, Args: BinpackArgs{Weight: 2, CPU: 1, Memory: 1, Resources: map[string]int64{}}},
				{Name: ResourceStrategyFit, Weight: 1, Args: ResourceStrategyFitArgs{Weight: 10, Resources: []strategy.Resource{
					{Name: "cpu", Type: strategy.LeastAllocated, Weight: 1}, {Name: "memory", Type: strategy.LeastAllocated, Weight: 1}}}},
				{Name: NodeOrder, Weight: 1, Args: NodeOrderArgs{LeastRequested: 1, BalancedResource: 1, Other: map[string]int64{
					"nodeaffinity.weight": 0, "podaffinity.weight": 0, "tainttoleration.weight": 0, "imagelocality.weight": 0, "podtopologyspread.weight": 0}}}}},
		{name: "plugins that score nodes resfit does not compute", doc: `tiers: [{plugins: [{name: deviceshare}, {name: usage}, {name: sla}]}]`,
			filters: []string{NodeResourcesFit},
			warns: []string{"tiers[0].plugins[0] (deviceshare): scores nodes for shared GPUs", "tiers[0].plugins[1] (usage): scores nodes by measured load",
				`tiers[0].plugins[2] "sla" has no resfit scorer: not node scores`}},
		{name: "an unknown plugin in compatibility mode", doc: `tiers: [{plugins: [{name: reservation}, {name: binpack}]}]`, compat: true,
			filters: []string{NodeResourcesFit}, scorers: []ScorerConfig{{Name: Binpack, Weight: 1, Args: binpackDefaults}},
			warns: []string{`tiers[0].plugins[0].name: not a Volcano plugin; known are binpack, capacity`}},
		{name: "errors", doc: `
actions: [allocate]
tiers:
- plugins: [{name: reservation}, {name: binpack, arguments: {binpack.cpu: -1}}, {name: gang, enablePreemptable: "false"}]`,
			errs: []string{`actions: must be a string, got a list`, `tiers[0].plugins[0].name: not a Volcano plugin`,
				`tiers[0].plugins[1].arguments["binpack.cpu"]: must be ≥ 0, got -1`,
				`tiers[0].plugins[2].enablePreemptable: must be true or false (Volcano refuses the configuration otherwise), got "false"`}},
	})
}

func FuzzVolcano(f *testing.F) {
	fuzzConfig(f, volcanoDefaultConf,
		`tiers: [{plugins: [{name: binpack, arguments: {binpack.weight: 10, binpack.resources: "nvidia.com/gpu", binpack.resources.nvidia.com/gpu: 2}}]}]`,
		`tiers: [{plugins: [{name: nodeorder, enableNodeOrder: false, arguments: {mostrequested.weight: 3, leastrequested.weight: 2.0}}, {name: resource-strategy-fit, arguments: {resourceStrategyFitWeight: 7.9, resources: {cpu: {type: MostAllocated, weight: 4611686018427387904}}}}]}]`,
		`tiers: [{plugins: [{name: resource-strategy-fit, arguments: {sra.policy: retention, sra.resources: nvidia.com/gpu, sra.retention.weight: 100000000000000000}}]}]`)
}

// resfit's Volcano scheduler registers resfit's plugins under names of
// their own (VolcanoPluginNames) beside Volcano's. A volcano-scheduler.conf
// that uses them reads as Volcano's names do; the resfit plugin's
// arguments are a configuration in resfit's own form, its scorers switched
// off where the tier's entry turns node order or predicates off, its
// filters added once, and its errors named under the entry's arguments.
func TestVolcanoResfitPluginNames(t *testing.T) {
	doc := `
tiers:
- plugins:
  - {name: gang}
  - {name: resfit-binpack, arguments: {binpack.weight: 2, binpack.cpu: 3}}
  - name: resfit
    enablePredicate: false
    arguments:
      plugins:
      - {name: NodeResourcesBalancedAllocation, weight: 3}
      - name: resource-strategy-fit
        scores: false
        args: {sra: {policy: proportional, resources: nvidia.com/gpu, proportional: {nvidia.com/gpu.cpu: 8}}}
      filters: [NodeResourcesFit]
`
	c, err := Load([]byte(doc), Options{})
	if err != nil {
		t.Fatal(err)
	}
	type switches struct {
		Name                  string
		Weight                float64
		ScoresOff, FiltersOff bool
	}
	var got []switches
	for _, s := range c.Scorers {
		got = append(got, switches{s.Name, s.Weight, s.ScoresOff, s.FiltersOff})
	}
	want := []switches{{Binpack, 1, false, false}, {NodeResourcesBalancedAllocation, 3, false, true}, {ResourceStrategyFit, 1, true, true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scorers (-want +got):\n%s", diff)
	}
	if len(c.Filters) != 1 || c.Filters[0].Name != NodeResourcesFit {
		t.Errorf("filters %+v, want NodeResourcesFit once", c.Filters)
	}
	volcanos, err := Load([]byte(`tiers: [{plugins: [{name: binpack, arguments: {binpack.weight: 2, binpack.cpu: 3}}]}]`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(volcanos.Scorers[0].Args, c.Scorers[0].Args); diff != "" {
		t.Errorf("resfit-binpack reads otherwise than binpack (-binpack +resfit-binpack):\n%s", diff)
	}
	if want := []string{"resfit", "resfit-binpack", "resfit-fgd", "resfit-frag", "resfit-nodeorder", "resfit-resource-strategy-fit"}; !cmp.Equal(want, VolcanoPluginNames()) {
		t.Errorf("VolcanoPluginNames() = %v, want %v", VolcanoPluginNames(), want)
	}
	for _, tc := range []struct{ doc, want string }{
		{`tiers: [{plugins: [{name: resfit, arguments: {filters: []}}]}]`, `tiers[0].plugins[0].arguments.plugins: the resfit plugin's arguments are a configuration in resfit's own form`},
		{`tiers: [{plugins: [{name: resfit, arguments: {plugins: [{name: binpack, weight: -1}]}}]}]`, `tiers[0].plugins[0].arguments.plugins[0].weight: must be`},
		{`tiers: [{plugins: [{name: resfit, arguments: {plugins: [{name: nodeorderr}]}}]}]`, `tiers[0].plugins[0].arguments.plugins[0].name: unknown plugin`},
		{`tiers: [{plugins: [{name: resfit, arguments: 3}]}]`, `tiers[0].plugins[0].arguments: must be`},
	} {
		_, err := Load([]byte(tc.doc), Options{})
		if err == nil {
			t.Errorf("%s: loaded", tc.doc)
			continue
		}
		wantAll(t, err.Error(), tc.want)
	}
}
