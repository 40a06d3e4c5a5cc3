package config

import (
	"github.com/resfit/resfit/resource"
)

// policy reads a legacy kube-scheduler Policy's priorities, the form the
// RequestedToCapacityRatio KEP is written in:
//
//	priorities:
//	- name: RequestedToCapacityRatioPriority
//	  weight: 5
//	  argument: {requestedToCapacityRatioArguments: {shape: [...], resources: [...]}}
//	- {name: MostRequestedPriority, weight: 1}
func (d *decoder) policy(doc map[string]any) *Config {
	c := &Config{Filters: []FilterConfig{{Name: NodeResourcesFit, Args: NodeResourcesFitArgs{}, Source: "a Policy's predicates check that a pod fits"}}}
	list, _ := d.list(d.at("priorities"), doc["priorities"])
	for i, item := range list {
		path := index(d.at("priorities"), i)
		m, ok := d.object(path, item)
		if !ok {
			continue
		}
		d.only(path, m, strictFields, "name", "weight", "argument")
		name, ok := d.str(join(path, "name"), m["name"])
		if !ok {
			continue
		}
		weight := d.pluginWeight(join(path, "weight"), m["weight"])
		notes := map[string]string{"": path}
		if m["weight"] != nil {
			notes["weight"] = join(path, "weight")
		}
		var args ScorerArgs
		switch name {
		case RequestedToCapacityRatioPriority:
			apath := join(path, "argument")
			am, ok := d.object(apath, m["argument"])
			if !ok {
				continue
			}
			d.only(apath, am, strictFields, "requestedToCapacityRatioArguments")
			d.notes = notes
			args = d.legacyRTCR(join(apath, "requestedToCapacityRatioArguments"), am["requestedToCapacityRatioArguments"])
			d.notes = nil
		case MostRequestedPriority:
			args = NodeResourcesFitArgs{Type: ScoringMostAllocated, Resources: defaultKubeResources()}
			notes["args.scoringStrategy.type"] = join(path, "name")
		case LeastRequestedPriority:
			args = NodeResourcesFitArgs{Type: ScoringLeastAllocated, Resources: defaultKubeResources()}
			notes["args.scoringStrategy.type"] = join(path, "name")
		case BalancedResourceAllocation:
			args = BalancedAllocationArgs{Resources: []string{resource.CPU, resource.Memory}}
		default:
			d.warn("%s: priority %q has no resfit scorer; skipped", join(path, "name"), name)
			continue
		}
		c.Scorers = append(c.Scorers, ScorerConfig{Name: name, Weight: weight, Args: args, Sources: notes})
	}
	return c
}
