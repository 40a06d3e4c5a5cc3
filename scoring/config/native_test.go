package config

import (
	"testing"

	"github.com/resfit/resfit/strategy"
)

var binpackDefaults = BinpackArgs{Weight: 1, CPU: 1, Memory: 1, Resources: map[string]int64{}}

// resfit's own form.
func TestNativeForm(t *testing.T) {
	runLoadCases(t, []loadCase{
		{name: "defaults", doc: `plugins: [{name: binpack}]`,
			filters: []string{NodeResourcesFit},
			scorers: []ScorerConfig{{Name: Binpack, Weight: 1, Args: binpackDefaults}}},
		{name: "weight, switches and arguments", doc: `
plugins:
- name: resource-strategy-fit
  weight: 3
  scores: false
  filters: false
  arguments: {resourceStrategyFitWeight: 5, resources: {cpu: {type: MostAllocated}}}`,
			filters: []string{NodeResourcesFit},
			scorers: []ScorerConfig{{Name: ResourceStrategyFit, Weight: 3, ScoresOff: true, FiltersOff: true,
				Args: ResourceStrategyFitArgs{Weight: 5, Resources: []strategy.Resource{{Name: "cpu", Type: strategy.MostAllocated, Weight: 1}}}}}},
		{name: "PackLeastUsed", doc: `
plugins:
- {name: PackLeastUsed}
- {name: PackLeastUsed, weight: 2, args: {resources: [{name: memory, weight: 1}]}}`,
			filters: []string{NodeResourcesFit},
			scorers: []ScorerConfig{{Name: PackLeastUsed, Weight: 1, Args: PackLeastUsedArgs{Resources: []string{"cpu", "nvidia.com/gpu"}}},
				{Name: PackLeastUsed, Weight: 2, Args: PackLeastUsedArgs{Resources: []string{"memory"}}}}},
		{name: "no filters", doc: `{filters: [], plugins: [{name: binpack}]}`,
			scorers: []ScorerConfig{{Name: Binpack, Weight: 1, Args: binpackDefaults}}},
		{name: "a filter with arguments", doc: `{filters: [{name: NodeResourcesFit, args: {ignoredResources: [example.com/foo]}}], plugins: [{name: binpack, weight: 0}]}`,
			filters: []string{NodeResourcesFit},
			scorers: []ScorerConfig{{Name: Binpack, Weight: 0, Args: binpackDefaults}}},
		{name: "nodeorder", doc: `plugins: [{name: nodeorder, args: {mostrequested.weight: 2}}]`,
			filters: []string{NodeResourcesFit},
			scorers: []ScorerConfig{{Name: NodeOrder, Weight: 1, Args: NodeOrderArgs{LeastRequested: 1, MostRequested: 2, BalancedResource: 1,
				Other: map[string]int64{"nodeaffinity.weight": 2, "podaffinity.weight": 2, "tainttoleration.weight": 3, "imagelocality.weight": 1, "podtopologyspread.weight": 2}}}},
			warns: []string{"plugins[0] (nodeorder): nodeaffinity (weight 2)"}},
		{name: "a weight times nodeorder's own above the bound", doc: `plugins: [{name: nodeorder, weight: 500001, args: {balancedresource.weight: 2}}]`,
			errs: []string{`plugins[0].weight: times the plugin's largest weight of its own (2) must be at most 1000000, the bound on every weight, got 500001`}},
		{name: "errors", doc: `
filters: [NodeResourcesFitt, {name: NodeResourcesFit, args: {ignored: []}}]
plugins:
- {name: binpak}
- {name: binpack, scores: maybe, weight: -2}
- {name: binpack, enabled: true}`,
			errs: []string{
				`plugins[0].name: unknown plugin; known are resource-strategy-fit, binpack, nodeorder, NodeResourcesFit, NodeResourcesBalancedAllocation, PackLeastUsed, NodeResourcesFitPlus, ScarceResourceAvoidance, FGD, ResfitFrag and resfit's kube-scheduler plugin ResourceStrategyFit, got "binpak"`,
				`plugins[1].scores: must be true or false, got "maybe"`,
				`plugins[1].weight: must be ≥ 0, got -2`,
				`plugins[2]["enabled"]: unknown field; known are name, weight, scores, filters, kubeScheduler, args, arguments, got true`,
				`filters[0]: unknown filter; known is NodeResourcesFit, got "NodeResourcesFitt"`,
				`filters[1].args["ignored"]: unknown field; known are ignoredResources, ignoredResourceGroups`}},
	})
}

func FuzzNative(f *testing.F) {
	fuzzConfig(f,
		`plugins: [{name: resource-strategy-fit, weight: 2, args: {resources: {nvidia.com/gpu: {type: MostAllocated, weight: 2}}}}]`,
		`{filters: [{name: NodeResourcesFit, args: {ignoredResources: [a.b/c]}}], plugins: [{name: binpack, scores: false, args: {binpack.resources: nvidia.com/gpu}}]}`,
		`plugins: [{name: nodeorder, weight: 3, args: {mostrequested.weight: 2, balancedresource.weight: 0}}, {name: NodeResourcesBalancedAllocation}]`,
		"plugins: [{name: binpack, weight: 1, weight: 2}]",
		"plugins: [{name: binpack, args: {null: 1, [a]: 2}}]")
}
