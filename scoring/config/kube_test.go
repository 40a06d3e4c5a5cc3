package config

import (
	"testing"

	"github.com/resfit/resfit/strategy"
)

var (
	kubeDefaultFit      = NodeResourcesFitArgs{Type: ScoringLeastAllocated, Resources: []strategy.Resource{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}}}
	kubeDefaultBalanced = BalancedAllocationArgs{Resources: []string{"cpu", "memory"}}
)

// KubeSchedulerConfiguration, as kube-scheduler v1.37 reads it.
func TestKubeSchedulerConfiguration(t *testing.T) {
	runLoadCases(t, []loadCase{
		{name: "no profiles: the default profile", doc: `{apiVersion: kubescheduler.config.k8s.io/v1, kind: KubeSchedulerConfiguration}`,
			filters: []string{NodeResourcesFit},
			scorers: []ScorerConfig{{Name: NodeResourcesFit, Weight: 1, Args: kubeDefaultFit}, {Name: NodeResourcesBalancedAllocation, Weight: 1, Args: kubeDefaultBalanced}}},
		{name: "weights and arguments", doc: `
profiles:
- plugins:
    score:
      enabled: [{name: NodeResourcesFit, weight: 3}, {name: NodeResourcesBalancedAllocation}]
  pluginConfig:
  - name: NodeResourcesFit
    args:
      ignoredResources: [example.com/foo]
      scoringStrategy:
        type: MostAllocated
        resources: [{name: nvidia.com/gpu, weight: 5}, {name: cpu, weight: 0}]`,
			filters: []string{NodeResourcesFit},
			scorers: []ScorerConfig{
				{Name: NodeResourcesFit, Weight: 3, Args: NodeResourcesFitArgs{Type: ScoringMostAllocated, IgnoredResources: []string{"example.com/foo"},
					Resources: []strategy.Resource{{Name: "nvidia.com/gpu", Weight: 5}, {Name: "cpu", Weight: 1}}}},
				{Name: NodeResourcesBalancedAllocation, Weight: 1, Args: kubeDefaultBalanced}}},
		{name: "disabled scores and filter, a plugin resfit does not compute", doc: `
profiles:
- plugins:
    multiPoint: {disabled: [{name: NodeResourcesBalancedAllocation}]}
    score: {disabled: [{name: NodeResourcesFit}], enabled: [{name: ImageLocality, weight: 2}]}
    filter: {disabled: [{name: "*"}]}`,
			warns: []string{`profiles[0].plugins: score plugin "ImageLocality" has no resfit scorer; skipped`}},
		{name: "RequestedToCapacityRatio", doc: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
        requestedToCapacityRatio: {shape: [{utilization: 0, score: 10}, {utilization: 100, score: 0}]}`,
			filters: []string{NodeResourcesFit},
			scorers: []ScorerConfig{{Name: NodeResourcesFit, Weight: 1, Args: NodeResourcesFitArgs{Type: ScoringRequestedToCapacityRatio, Resources: kubeDefaultFit.Resources,
				Shape: []strategy.ShapePoint{{Utilization: 0, Score: 10}, {Utilization: 100, Score: 0}}}},
				{Name: NodeResourcesBalancedAllocation, Weight: 1, Args: kubeDefaultBalanced}}},
		{name: "errors", doc: `
profiles:
- plugins:
    score: {enabled: [{name: NodeResourcesFit, weight: -1}]}
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: Spread, resources: [{name: cpu, weight: 101}]}}
  - name: NodeResourcesBalancedAllocation
    args: {resources: [{name: cpu, weight: 2}]}`,
			errs: []string{
				`profiles[0].plugins.score.enabled[0].weight: must be ≥ 0, got -1`,
				`profiles[0].pluginConfig[0].args.scoringStrategy.type: unsupported scoring strategy type, want MostAllocated, LeastAllocated or RequestedToCapacityRatio, got "Spread"`,
				`profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: must be in (0, 100], got 101`,
				`profiles[0].pluginConfig[1].args.resources[0].weight: must be 1, got 2`}},
		{name: "RequestedToCapacityRatio without a shape", doc: `profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: RequestedToCapacityRatio}}}]}]`,
			errs: []string{`profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio: must be specified when type is RequestedToCapacityRatio`}},
	})
}

func FuzzKube(f *testing.F) {
	fuzzConfig(f,
		`{apiVersion: kubescheduler.config.k8s.io/v1, kind: KubeSchedulerConfiguration}`,
		`profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]}}}}]}]`,
		`profiles: [{plugins: {score: {enabled: [{name: NodeResourcesFit, weight: 3}], disabled: [{name: NodeResourcesBalancedAllocation}]}}, pluginConfig: [{name: NodeResourcesFit, args: {ignoredResources: [a], scoringStrategy: {type: MostAllocated, resources: [{name: nvidia.com/gpu, weight: 5}]}}}]}]`,
		`profiles: [{schedulerName: a, plugins: {multiPoint: {disabled: [{name: "*"}]}}}, {schedulerName: b}]`)
}
