package config

import (
	"testing"

	"github.com/resfit/resfit/strategy"
)

// The legacy scheduler Policy of the RequestedToCapacityRatio KEP.
func TestPolicy(t *testing.T) {
	runLoadCases(t, []loadCase{
		{name: "the KEP's priorities", doc: `
priorities:
- name: RequestedToCapacityRatioPriority
  weight: 5
  argument:
    requestedToCapacityRatioArguments:
      shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]
      resources: [{resource: nvidia.com/gpu, weight: 5}, {resource: cpu, weight: 1}]
- {name: MostRequestedPriority, weight: 1}
- {name: LeastRequestedPriority}
- {name: BalancedResourceAllocation, weight: 2}
- {name: ImageLocalityPriority, weight: 1}`,
			filters: []string{NodeResourcesFit},
			scorers: []ScorerConfig{
				{Name: RequestedToCapacityRatioPriority, Weight: 5, Args: NodeResourcesFitArgs{Type: ScoringRequestedToCapacityRatio,
					Resources: []strategy.Resource{{Name: "nvidia.com/gpu", Weight: 5}, {Name: "cpu", Weight: 1}},
					Shape:     []strategy.ShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 10}}}},
				{Name: MostRequestedPriority, Weight: 1, Args: NodeResourcesFitArgs{Type: ScoringMostAllocated, Resources: kubeDefaultFit.Resources}},
				{Name: LeastRequestedPriority, Weight: 1, Args: kubeDefaultFit},
				{Name: BalancedResourceAllocation, Weight: 2, Args: kubeDefaultBalanced}},
			warns: []string{`priorities[4].name: priority "ImageLocalityPriority" has no resfit scorer; skipped`}},
		{name: "errors", doc: `
priorities:
- name: RequestedToCapacityRatioPriority
  argument: {requestedToCapacityRatioArguments: {shape: [{utilization: 50, score: 5}, {utilization: 10, score: 1}], resources: [{resource: cpu, weight: 0}]}}
- {name: MostRequestedPriority, weight: 1.5, argument: {}}`,
			errs: []string{
				`priorities[0].argument.requestedToCapacityRatioArguments.shape[1].utilization: `,
				`priorities[0].argument.requestedToCapacityRatioArguments.resources[0].weight: must be in (0, 100], got 0`,
				`priorities[1].weight: must be a whole number, got 1.5`}},
	})
}

func FuzzPolicy(f *testing.F) {
	fuzzConfig(f,
		`priorities: [{name: RequestedToCapacityRatioPriority, weight: 5, argument: {requestedToCapacityRatioArguments: {shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}], resources: [{resource: nvidia.com/gpu, weight: 5}]}}}]`,
		`priorities: [{name: MostRequestedPriority, weight: 1}, {name: BalancedResourceAllocation, weight: 2}, {name: LeastRequestedPriority}]`)
}
