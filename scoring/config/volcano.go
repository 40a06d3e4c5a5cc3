package config

import (
	"maps"
	"slices"
	"strings"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/sra"
	"github.com/resfit/resfit/strategy"
)

// Volcano: volcano-scheduler.conf, and the arguments of its
// resource-strategy-fit (scarce-resource avoidance is in sra.go) and binpack
// plugins.

// volcanoConf reads a volcano-scheduler.conf: every plugin of every tier,
// each scoring on its own scale (Volcano adds node-order scores unweighted),
// behind the fit check Volcano's allocate action makes.
func (d *decoder) volcanoConf(doc map[string]any) *Config {
	c := &Config{Filters: []FilterConfig{{Name: NodeResourcesFit, Args: NodeResourcesFitArgs{}}}}
	tiers, _ := d.list("tiers", doc["tiers"])
	for i, t := range tiers {
		tpath := index("tiers", i)
		tm, ok := d.object(tpath, t)
		if !ok {
			continue
		}
		plugins, _ := d.list(join(tpath, "plugins"), tm["plugins"])
		for j, p := range plugins {
			path := index(join(tpath, "plugins"), j)
			m, ok := d.object(path, p)
			if !ok {
				continue
			}
			name, ok := d.str(join(path, "name"), m["name"])
			if !ok {
				continue
			}
			args, known := d.scorerArgs(join(path, "arguments"), name, m["arguments"])
			if !known {
				d.warn("%s: plugin %q has no resfit scorer; skipped", join(path, "name"), name)
				continue
			}
			c.Scorers = append(c.Scorers, ScorerConfig{Name: name, Weight: 1, Args: args})
		}
	}
	return c
}

// ResourceStrategyFitArgs are Volcano's resource-strategy-fit arguments,
// scarce-resource avoidance included.
type ResourceStrategyFitArgs struct {
	Weight    int64               // resourceStrategyFitWeight
	Resources []strategy.Resource // names may be wildcard patterns
	// Retention adds the sra retention score (scorer "sra.retention"); nil
	// means off.
	Retention *RetentionArgs
	// Proportional adds the sra proportional filter ("sra.proportional");
	// nil means off.
	Proportional []sra.Ratio
}

func (a ResourceStrategyFitArgs) build(name string, schema *resource.Schema) ([]scoring.WeightedScorer, []scoring.Filter, error) {
	f, err := strategy.NewVolcanoFit(schema, a.Resources, a.Weight)
	if err != nil {
		return nil, nil, err
	}
	scorers := []scoring.WeightedScorer{{Scorer: scoring.NewVolcanoScorer(name, f), Weight: 1}}
	var filters []scoring.Filter
	if a.Retention != nil {
		r, err := sra.NewRetention(schema, a.Retention.Weight, a.Retention.Resources)
		if err != nil {
			return nil, nil, err
		}
		scorers = append(scorers, scoring.WeightedScorer{Scorer: scoring.NewRetentionScorer(r), Weight: 1})
	}
	if a.Proportional != nil {
		pr, err := sra.NewProportional(schema, a.Proportional)
		if err != nil {
			return nil, nil, err
		}
		f, err := scoring.NewProportionalFilter(pr)
		if err != nil {
			return nil, nil, err
		}
		filters = append(filters, f)
	}
	return scorers, filters, nil
}

// resourceStrategyFit decodes Volcano's resource-strategy-fit arguments:
//
//	resourceStrategyFitWeight: 10        # default 10
//	resources:                           # default cpu and memory LeastAllocated, weight 1
//	  nvidia.com/gpu: {type: MostAllocated, weight: 2}
//	  cpu: {type: LeastAllocated, weight: 1}
func (d *decoder) resourceStrategyFit(path string, raw any) ScorerArgs {
	m, ok := d.object(path, raw)
	if !ok {
		return ResourceStrategyFitArgs{}
	}
	plain := map[string]any{}
	for k, v := range m {
		if !strings.HasPrefix(k, "sra.") {
			plain[k] = v
		}
	}
	d.only(path, plain, volcanoKeys, "resourceStrategyFitWeight", "resources", "sra", "proportional")
	a := ResourceStrategyFitArgs{Weight: strategy.DefaultVolcanoPluginWeight}
	d.decodeSRA(path, m, &a)
	if raw, present := m["resourceStrategyFitWeight"]; present {
		wpath := join(path, "resourceStrategyFitWeight")
		if w, ok := d.weight(wpath, raw, truncatedInt); ok {
			switch {
			case w > 0:
				a.Weight = w
			case w == 0 && d.compat:
				d.warn("%s: 0 turns resource-strategy-fit scoring off, as in Volcano", wpath)
				a.Weight = 0
			case d.lenient(wpath, "must be > 0", raw, "10"):
				a.Weight = strategy.DefaultVolcanoPluginWeight
			}
		}
	}
	a.Resources = d.typedResources(join(path, "resources"), m["resources"], true)
	if len(a.Resources) == 0 {
		a.Resources = []strategy.Resource{
			{Name: resource.CPU, Type: strategy.LeastAllocated, Weight: 1},
			{Name: resource.Memory, Type: strategy.LeastAllocated, Weight: 1},
		}
	}
	return a
}

// BinpackArgs are Volcano's binpack arguments.
type BinpackArgs struct {
	Weight, CPU, Memory int64
	Resources           map[string]int64
}

func (a BinpackArgs) build(name string, schema *resource.Schema) ([]scoring.WeightedScorer, []scoring.Filter, error) {
	f, err := strategy.NewBinpack(schema, a.Weight, a.CPU, a.Memory, a.Resources)
	if err != nil {
		return nil, nil, err
	}
	return scorer(scoring.NewVolcanoScorer(name, f), nil)
}

// binpack decodes Volcano's flat binpack arguments:
//
//	binpack.weight: 10
//	binpack.cpu: 5
//	binpack.memory: 1
//	binpack.resources: nvidia.com/gpu, example.com/foo
//	binpack.resources.nvidia.com/gpu: 2
//
// Weights default to 1; 0 is allowed (binpack.weight 0 turns it off).
func (d *decoder) binpack(path string, raw any) ScorerArgs {
	m, ok := d.object(path, raw)
	if !ok {
		return BinpackArgs{}
	}
	a := BinpackArgs{Weight: 1, CPU: 1, Memory: 1, Resources: map[string]int64{}}
	weight := func(k string, dst *int64) {
		raw, present := m[k]
		if !present {
			return
		}
		w, ok := d.weight(key(path, k), raw, ignoredInt)
		if !ok {
			return
		}
		if w < 0 {
			if !d.lenient(key(path, k), "must be ≥ 0", raw, "1") {
				return
			}
			w = 1
		}
		*dst = w
	}
	if raw, present := m["binpack.weight"]; present {
		if w, ok := d.weight(key(path, "binpack.weight"), raw, ignoredInt); ok {
			if w < 0 {
				d.fail(key(path, "binpack.weight"), "must be ≥ 0", raw)
			} else {
				a.Weight = w
			}
		}
	}
	weight("binpack.cpu", &a.CPU)
	weight("binpack.memory", &a.Memory)
	listed := map[string]bool{}
	if raw, present := m["binpack.resources"]; present {
		if s, ok := d.str(key(path, "binpack.resources"), raw); ok {
			for _, name := range strings.Split(s, ",") {
				name = strings.TrimSpace(name)
				if name == "" {
					continue
				}
				if !d.resourceName(key(path, "binpack.resources"), name, false) {
					continue
				}
				listed[name] = true
				w := int64(1)
				weight("binpack.resources."+name, &w)
				a.Resources[name] = w
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch {
		case k == "binpack.weight" || k == "binpack.cpu" || k == "binpack.memory" || k == "binpack.resources":
		case strings.HasPrefix(k, "binpack.resources.") && listed[strings.TrimPrefix(k, "binpack.resources.")]:
		case strings.HasPrefix(k, "binpack.resources."):
			d.lenient(key(path, k), "names a resource not listed in binpack.resources", m[k], "nothing (ignored)")
		default:
			const known = "binpack.weight, binpack.cpu, binpack.memory, binpack.resources, binpack.resources.<name>"
			if d.compat {
				d.warn("%s: unknown field, ignored as Volcano ignores it (known are %s)", key(path, k), known)
			} else {
				d.fail(key(path, k), "unknown field; known are "+known, m[k])
			}
		}
	}
	return a
}
