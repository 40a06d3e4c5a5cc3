package config

import (
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/sra"
	"github.com/resfit/resfit/strategy"
)

// Koordinator: NodeResourcesFitPlus and ScarceResourceAvoidance arguments.

// NodeResourcesFitPlusArgs are Koordinator's NodeResourcesFitPlus arguments.
type NodeResourcesFitPlusArgs struct {
	Resources []strategy.Resource
}

func (a NodeResourcesFitPlusArgs) build(name string, t target) ([]scoring.WeightedScorer, []scoring.Filter, error) {
	f, err := strategy.NewKoordinatorFit(t.schema, a.Resources)
	if err != nil {
		return nil, nil, err
	}
	return scorer(scoring.NewKoordinatorScorer(name, f), nil)
}

// fitPlus decodes Koordinator's NodeResourcesFitPlusArgs: resources:
// {name: {type, weight}}.
func (d *decoder) fitPlus(path string, raw any) ScorerArgs {
	m, ok := d.object(path, raw)
	if !ok {
		return NodeResourcesFitPlusArgs{}
	}
	d.only(path, m, strictFields, "resources")
	before := len(d.errs)
	a := NodeResourcesFitPlusArgs{Resources: d.typedResources(join(path, "resources"), "resources", m["resources"], false)}
	if len(a.Resources) == 0 && len(d.errs) == before {
		d.missing(join(path, "resources"), "at least one resource is required")
	}
	return a
}

// ScarceResourceAvoidanceArgs are Koordinator's ScarceResourceAvoidanceArgs.
type ScarceResourceAvoidanceArgs struct {
	Resources []string
}

func (a ScarceResourceAvoidanceArgs) build(name string, t target) ([]scoring.WeightedScorer, []scoring.Filter, error) {
	av, err := sra.NewAvoidance(t.schema, a.Resources)
	if err != nil {
		return nil, nil, err
	}
	return scorer(scoring.NewAvoidanceScorer(name, av), nil)
}

// scarceResourceAvoidance decodes Koordinator's ScarceResourceAvoidanceArgs:
// resources: [nvidia.com/gpu, ...].
func (d *decoder) scarceResourceAvoidance(path string, raw any) ScorerArgs {
	m, ok := d.object(path, raw)
	if !ok {
		return ScarceResourceAvoidanceArgs{}
	}
	d.only(path, m, strictFields, "resources")
	rpath := join(path, "resources")
	if raw, present := m["resources"]; present {
		d.note("resources", rpath)
		if _, isList := raw.([]any); !isList {
			d.fail(rpath, "must be a list of resource names", raw)
			return ScarceResourceAvoidanceArgs{}
		}
	}
	before := len(d.errs)
	names := d.resourceList(rpath, m["resources"])
	if len(names) == 0 && len(d.errs) == before {
		d.missing(rpath, "at least one scarce resource is required")
	}
	return ScarceResourceAvoidanceArgs{Resources: names}
}

func (NodeResourcesFitPlusArgs) plugin() string { return NodeResourcesFitPlus }

func (a NodeResourcesFitPlusArgs) canonical() []yamlNode {
	resources := mapping("resources")
	for _, r := range a.Resources {
		resources.items = append(resources.items, mapping(r.Name,
			yamlNode{key: "type", scalar: r.Type.String()}, yamlNode{key: "weight", scalar: r.Weight}))
	}
	return []yamlNode{resources}
}

func (ScarceResourceAvoidanceArgs) plugin() string { return ScarceResourceAvoidance }

func (a ScarceResourceAvoidanceArgs) canonical() []yamlNode {
	return []yamlNode{sequence("resources", a.Resources)}
}
