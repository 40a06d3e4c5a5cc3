package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/sra"
	"github.com/resfit/resfit/strategy"
)

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

func (a ResourceStrategyFitArgs) build(name string, t target) ([]scoring.WeightedScorer, []scoring.Filter, error) {
	f, err := strategy.NewVolcanoFit(t.schema, a.Resources, a.Weight)
	if err != nil {
		return nil, nil, err
	}
	scorers := []scoring.WeightedScorer{{Scorer: scoring.NewVolcanoScorer(name, f), Weight: 1}}
	var filters []scoring.Filter
	if a.Retention != nil {
		r, err := sra.NewRetention(t.schema, a.Retention.Weight, a.Retention.Resources)
		if err != nil {
			return nil, nil, err
		}
		scorers = append(scorers, scoring.WeightedScorer{Scorer: scoring.NewRetentionScorer(r), Weight: 1})
	}
	if a.Proportional != nil {
		pr, err := sra.NewProportional(t.schema, a.Proportional)
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
		d.note("resourceStrategyFitWeight", wpath)
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
	a.Resources = d.typedResources(join(path, "resources"), "resources", m["resources"], true)
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

func (a BinpackArgs) build(name string, t target) ([]scoring.WeightedScorer, []scoring.Filter, error) {
	f, err := strategy.NewBinpack(t.schema, a.Weight, a.CPU, a.Memory, a.Resources)
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
		d.note(child("", k), key(path, k))
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
		d.note(child("", "binpack.weight"), key(path, "binpack.weight"))
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
		d.note(child("", "binpack.resources"), key(path, "binpack.resources"))
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

// NodeOrderArgs are Volcano's nodeorder arguments. nodeorder adds
// kube-scheduler scores, each an integer on 0..100 times its weight; three
// of them are resource scores, which resfit computes as Volcano sets them
// up:
//
//   - leastrequested: NodeResourcesFit, LeastAllocated, cpu and memory
//     weighted 50 and 50 (default weight 1);
//   - mostrequested: NodeResourcesFit, MostAllocated, cpu and memory
//     weighted 1 and 1 (default weight 0, off);
//   - balancedresource: NodeResourcesBalancedAllocation over cpu, memory and
//     nvidia.com/gpu (default weight 1).
//
// A weight of 0 leaves the score out, as Volcano does not create it.
// Other holds the weights of its other scores (nodeaffinity, podaffinity,
// tainttoleration, imagelocality, podtopologyspread), which are not
// resource scores: the host scheduler computes them.
type NodeOrderArgs struct {
	LeastRequested, MostRequested, BalancedResource int64
	Other                                           map[string]int64
}

// nodeOrderWeights are nodeorder's arguments with Volcano's defaults, in
// the order Volcano documents them: the three resource scores first.
var nodeOrderWeights = []struct {
	key string
	def int64
}{
	{"leastrequested.weight", 1}, {"mostrequested.weight", 0}, {"balancedresource.weight", 1},
	{"nodeaffinity.weight", 2}, {"podaffinity.weight", 2}, {"tainttoleration.weight", 3},
	{"imagelocality.weight", 1}, {"podtopologyspread.weight", 2},
}

// nodeOrderBalancedResources are the resources Volcano's nodeorder hands
// NodeResourcesBalancedAllocation.
var nodeOrderBalancedResources = []string{resource.CPU, resource.Memory, "nvidia.com/gpu"}

func (a NodeOrderArgs) build(name string, t target) ([]scoring.WeightedScorer, []scoring.Filter, error) {
	var parts []scoring.WeightedScorer
	if a.LeastRequested > 0 {
		f, err := strategy.NewKubeFit(t.schema, strategy.LeastAllocated, []strategy.Resource{{Name: resource.CPU, Weight: 50}, {Name: resource.Memory, Weight: 50}})
		if err != nil {
			return nil, nil, err
		}
		parts = append(parts, scoring.WeightedScorer{Scorer: scoring.NewStrategyScorer(name+".leastrequested", f, false), Weight: float64(a.LeastRequested)})
	}
	if a.MostRequested > 0 {
		f, err := strategy.NewKubeFit(t.schema, strategy.MostAllocated, []strategy.Resource{{Name: resource.CPU, Weight: 1}, {Name: resource.Memory, Weight: 1}})
		if err != nil {
			return nil, nil, err
		}
		parts = append(parts, scoring.WeightedScorer{Scorer: scoring.NewStrategyScorer(name+".mostrequested", f, false), Weight: float64(a.MostRequested)})
	}
	if a.BalancedResource > 0 {
		b, err := strategy.NewBalancedAllocation(t.schema, nodeOrderBalancedResources)
		if err != nil {
			return nil, nil, err
		}
		parts = append(parts, scoring.WeightedScorer{Scorer: scoring.NewStrategyScorer(name+".balancedresource", b, true), Weight: float64(a.BalancedResource)})
	}
	return parts, nil, nil
}

// nodeOrder decodes Volcano's nodeorder arguments:
//
//	leastrequested.weight: 1
//	mostrequested.weight: 0
//	balancedresource.weight: 1
//	nodeaffinity.weight: 2        # and podaffinity, tainttoleration,
//	                              # imagelocality, podtopologyspread
//
// Each is read as Arguments.GetInt reads it: an integer, or (in
// compatibility mode) the default when it is not one. A weight must be
// ≥ 0 in either mode: Volcano would subtract a negative one, which
// resfit's totals do not do.
func (d *decoder) nodeOrder(path string, raw any) ScorerArgs {
	a := NodeOrderArgs{Other: map[string]int64{}}
	m, ok := d.object(path, raw)
	if !ok {
		return a
	}
	known := make([]string, len(nodeOrderWeights))
	for i, w := range nodeOrderWeights {
		known[i] = w.key
	}
	m = d.only(path, m, volcanoKeys, known...)
	var others []string
	for i, w := range nodeOrderWeights {
		v := w.def
		if raw, present := m[w.key]; present {
			d.note(child("", w.key), key(path, w.key))
			x, ok := d.weight(key(path, w.key), raw, ignoredInt)
			switch {
			case ok && x < 0:
				d.fail(key(path, w.key), "must be ≥ 0 (Volcano would subtract the score; resfit does not)", raw)
			case ok:
				v = x
			}
		}
		switch i {
		case 0:
			a.LeastRequested = v
		case 1:
			a.MostRequested = v
		case 2:
			a.BalancedResource = v
		default:
			a.Other[w.key] = v
			if v > 0 {
				others = append(others, fmt.Sprintf("%s (weight %d)", strings.TrimSuffix(w.key, ".weight"), v))
			}
		}
	}
	if others != nil {
		where := path // the plugin's entry, above its arguments
		if i := strings.LastIndexByte(path, '.'); i >= 0 {
			where = path[:i]
		}
		d.warn("%s (nodeorder): %s are not resource scores; the host scheduler computes them, and resfit scores leastrequested, mostrequested and balancedresource", d.displayPath(where), strings.Join(others, ", "))
	}
	return a
}

func (ResourceStrategyFitArgs) plugin() string { return ResourceStrategyFit }

// canonical writes resource-strategy-fit's arguments with scarce-resource
// avoidance in Volcano's released form, the one form that gives retention
// and the proportional filter each its own resources.
func (a ResourceStrategyFitArgs) canonical() []yamlNode {
	resources := mapping("resources")
	for _, r := range a.Resources {
		resources.items = append(resources.items, mapping(r.Name,
			yamlNode{key: "type", scalar: r.Type.String()}, yamlNode{key: "weight", scalar: r.Weight}))
	}
	out := []yamlNode{{key: "resourceStrategyFitWeight", scalar: a.Weight}, resources}
	if r := a.Retention; r != nil {
		names, weights := make([]string, len(r.Resources)), mapping("resourceWeight")
		for i, w := range r.Resources {
			names[i] = w.Name
			weights.items = append(weights.items, yamlNode{key: w.Name, scalar: w.Weight})
		}
		out = append(out, mapping("sra", yamlNode{key: "enable", scalar: true}, sequence("resources", names),
			yamlNode{key: "weight", scalar: r.Weight}, weights))
	} else {
		out = append(out, mapping("sra", yamlNode{key: "enable", scalar: false}))
	}
	if a.Proportional != nil {
		names, ratios := make([]string, len(a.Proportional)), mapping("resourceProportion")
		for i, r := range a.Proportional {
			names[i] = r.Resource
			ratios.items = append(ratios.items, yamlNode{key: r.Resource + ".cpu", scalar: r.CPU}, yamlNode{key: r.Resource + ".memory", scalar: r.Memory})
		}
		out = append(out, mapping("proportional", yamlNode{key: "enable", scalar: true}, sequence("resources", names), ratios))
	} else {
		out = append(out, mapping("proportional", yamlNode{key: "enable", scalar: false}))
	}
	return out
}

func (BinpackArgs) plugin() string { return Binpack }

func (a BinpackArgs) canonical() []yamlNode {
	names := slices.Sorted(maps.Keys(a.Resources))
	out := []yamlNode{
		{key: "binpack.weight", scalar: a.Weight},
		{key: "binpack.cpu", scalar: a.CPU},
		{key: "binpack.memory", scalar: a.Memory},
		{key: "binpack.resources", scalar: strings.Join(names, ", ")},
	}
	for _, n := range names {
		out = append(out, yamlNode{key: "binpack.resources." + n, scalar: a.Resources[n]})
	}
	return out
}

func (NodeOrderArgs) plugin() string { return NodeOrder }

func (a NodeOrderArgs) canonical() []yamlNode {
	out := []yamlNode{
		{key: "leastrequested.weight", scalar: a.LeastRequested},
		{key: "mostrequested.weight", scalar: a.MostRequested},
		{key: "balancedresource.weight", scalar: a.BalancedResource},
	}
	for _, w := range nodeOrderWeights[3:] {
		v, ok := a.Other[w.key]
		if !ok {
			v = w.def
		}
		out = append(out, yamlNode{key: w.key, scalar: v})
	}
	return out
}

// partWeight is the largest weight nodeorder gives one of its scores.
func (a NodeOrderArgs) partWeight() int64 {
	return max(a.LeastRequested, a.MostRequested, a.BalancedResource)
}
