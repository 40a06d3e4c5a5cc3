package config

import (
	"testing"

	"github.com/resfit/resfit/strategy"
)

// Koordinator's NodeResourcesFitPlus and ScarceResourceAvoidance, in a
// KubeSchedulerConfiguration as Koordinator's document writes them.
func TestKoordinatorPlugins(t *testing.T) {
	runLoadCases(t, []loadCase{
		{name: "the document's example", doc: `
profiles:
- plugins:
    score:
      enabled: [{name: NodeResourcesFitPlus, weight: 2}, {name: ScarceResourceAvoidance, weight: 2}]
      disabled: [{name: "*"}]
  pluginConfig:
  - name: NodeResourcesFitPlus
    args:
      apiVersion: kubescheduler.config.k8s.io/v1beta2
      kind: NodeResourcesFitPlusArgs
      resources:
        nvidia.com/gpu: {type: MostAllocated, weight: 2}
        cpu: {type: LeastAllocated, weight: 1}
        memory: {type: LeastAllocated, weight: 1}
  - name: ScarceResourceAvoidance
    args: {resources: [nvidia.com/gpu]}`,
			filters: []string{NodeResourcesFit},
			scorers: []ScorerConfig{
				kubeScorer(ScorerConfig{Name: NodeResourcesFitPlus, Weight: 2, Args: NodeResourcesFitPlusArgs{Resources: []strategy.Resource{
					{Name: "cpu", Type: strategy.LeastAllocated, Weight: 1}, {Name: "memory", Type: strategy.LeastAllocated, Weight: 1},
					{Name: "nvidia.com/gpu", Type: strategy.MostAllocated, Weight: 2}}}}),
				kubeScorer(ScorerConfig{Name: ScarceResourceAvoidance, Weight: 2, Args: ScarceResourceAvoidanceArgs{Resources: []string{"nvidia.com/gpu"}}})}},
		{name: "in resfit's own form", doc: `plugins: [{name: ScarceResourceAvoidance, args: {resources: [nvidia.com/gpu, nvidia.com/t4]}}]`,
			filters: []string{NodeResourcesFit},
			scorers: []ScorerConfig{{Name: ScarceResourceAvoidance, Weight: 1, Args: ScarceResourceAvoidanceArgs{Resources: []string{"nvidia.com/gpu", "nvidia.com/t4"}}}}},
		{name: "errors", doc: `
plugins:
- {name: NodeResourcesFitPlus, args: {resources: {cpu: {weight: 1}, memory: {type: MostAllocated, weight: 1.5}}}}
- {name: NodeResourcesFitPlus, args: {resources: {}}}
- {name: ScarceResourceAvoidance, args: {resources: nvidia.com/gpu}}
- {name: ScarceResourceAvoidance, args: {}}`,
			errs: []string{
				`plugins[0].args.resources["cpu"].type: required: want MostAllocated or LeastAllocated`,
				`plugins[0].args.resources["memory"].weight: must be a whole number, got 1.5`,
				`plugins[1].args.resources: at least one resource is required`,
				`plugins[2].args.resources: must be a list of resource names, got "nvidia.com/gpu"`,
				`plugins[3].args.resources: at least one scarce resource is required`}},
	})
}

func FuzzKoordinator(f *testing.F) {
	fuzzConfig(f,
		`profiles: [{plugins: {score: {enabled: [{name: NodeResourcesFitPlus, weight: 2}, {name: ScarceResourceAvoidance, weight: 2}]}}, pluginConfig: [{name: NodeResourcesFitPlus, args: {resources: {nvidia.com/gpu: {type: MostAllocated, weight: 2}, cpu: {type: LeastAllocated, weight: 1}}}}, {name: ScarceResourceAvoidance, args: {resources: [nvidia.com/gpu]}}]}]`,
		`plugins: [{name: NodeResourcesFitPlus, args: {resources: {cpu: {type: MostAllocated}}}}, {name: ScarceResourceAvoidance, weight: 3, args: {resources: [nvidia.com/gpu]}}]`)
}
