package config

import (
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/strategy"
)

// PackLeastUsed is resfit's packing plugin (strategy.PackLeastUsed): a
// node scores by its least-used resource with the pod on it, 0..100.
const PackLeastUsed = strategy.PackLeastUsedName

// PackLeastUsedArgs are PackLeastUsed's arguments: the resources whose
// least-used one a node is scored by.
type PackLeastUsedArgs struct {
	Resources []string
}

func (PackLeastUsedArgs) plugin() string { return PackLeastUsed }

func (a PackLeastUsedArgs) build(name string, t target) ([]scoring.WeightedScorer, []scoring.Filter, error) {
	p, err := strategy.NewPackLeastUsed(t.schema, a.Resources)
	if err != nil {
		return nil, nil, err
	}
	return scorer(scoring.NewStrategyScorer(name, p, true), nil)
}

func (a PackLeastUsedArgs) canonical() []yamlNode {
	return BalancedAllocationArgs(a).canonical()
}

// packLeastUsed decodes PackLeastUsed's arguments as kube-scheduler's
// NodeResourcesBalancedAllocationArgs are written: resources [{name,
// weight: 1}], by default cpu and nvidia.com/gpu.
func (d *decoder) packLeastUsed(path string, raw any) ScorerArgs {
	return PackLeastUsedArgs{Resources: d.resourceNames(path, raw, []string{resource.CPU, resource.GPU})}
}
