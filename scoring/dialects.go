package scoring

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/strategy"
)

// resourceName checks a configured resource name; wildcards are allowed
// where allowWildcard is set.
func (d *decoder) resourceName(path, name string, allowWildcard bool) bool {
	if allowWildcard && strings.Contains(name, "*") {
		if err := strategy.CheckWildcard(name); err != nil {
			d.lenient(path, "invalid wildcard: "+err.Error(), name, "nothing (the pattern is dropped)")
			return false
		}
		return true
	}
	if err := resource.ValidateName(name); err != nil {
		d.fail(path, invalidName(name, err), name)
		return false
	}
	return true
}

// invalidName says why a resource name is not valid, without repeating the
// name the message quotes anyway.
func invalidName(name string, err error) string {
	return "not a valid resource name: " + strings.TrimPrefix(err.Error(), fmt.Sprintf("resource name %q: ", name))
}

// typedResources reads {name: {type, weight}}, the form shared by Volcano's
// resource-strategy-fit (volcano: wildcards allowed, read as Volcano reads
// them in compatibility mode) and Koordinator's NodeResourcesFitPlus. A
// missing weight is 1.
func (d *decoder) typedResources(path string, raw any, volcano bool) []strategy.Resource {
	m, ok := d.object(path, raw)
	if !ok {
		return nil
	}
	fields, ints := strictFields, strictInt
	if volcano {
		fields, ints = volcanoStruct, truncatedInt
	}
	var rs []strategy.Resource
	for _, name := range slices.Sorted(maps.Keys(m)) {
		rpath := key(path, name)
		if !d.resourceName(rpath, name, volcano) {
			continue
		}
		spec, ok := d.object(rpath, m[name])
		if !ok {
			continue
		}
		spec = d.only(rpath, spec, fields, "type", "weight")
		r := strategy.Resource{Name: name, Weight: 1}
		if raw, present := spec["type"]; !present {
			if !d.lenient(join(rpath, "type"), "required: want MostAllocated or LeastAllocated", nil, "LeastAllocated") {
				continue
			}
			r.Type = strategy.LeastAllocated
		} else if s, isStr := raw.(string); isStr {
			t, err := strategy.ParseType(s)
			if err != nil {
				if !d.lenient(join(rpath, "type"), "unknown strategy type, want MostAllocated or LeastAllocated", s, "LeastAllocated") {
					continue
				}
				t = strategy.LeastAllocated
			}
			r.Type = t
		} else {
			d.fail(join(rpath, "type"), "must be a string", raw)
			continue
		}
		if raw, present := spec["weight"]; present {
			w, ok := d.weight(join(rpath, "weight"), raw, ints)
			if !ok {
				continue
			}
			if w <= 0 {
				if !d.lenient(join(rpath, "weight"), "must be > 0", raw, "1") {
					continue
				}
				w = 1
			}
			r.Weight = w
		}
		rs = append(rs, r)
	}
	return rs
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

// fitPlus decodes Koordinator's NodeResourcesFitPlusArgs: resources:
// {name: {type, weight}}.
func (d *decoder) fitPlus(path string, raw any) ScorerArgs {
	m, ok := d.object(path, raw)
	if !ok {
		return NodeResourcesFitPlusArgs{}
	}
	d.only(path, m, strictFields, "resources")
	before := len(d.errs)
	a := NodeResourcesFitPlusArgs{Resources: d.typedResources(join(path, "resources"), m["resources"], false)}
	if len(a.Resources) == 0 && len(d.errs) == before {
		d.missing(join(path, "resources"), "at least one resource is required")
	}
	return a
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

// namedWeights reads kube-scheduler's [{name, weight}] (nameKey "name") or
// the legacy Policy's [{resource, weight}] (nameKey "resource"). A missing
// weight is 1, and so is kube-scheduler's 0 (its defaulting sets it);
// weights must be in (0, 100]; a name may appear once.
func (d *decoder) namedWeights(path string, raw any, nameKey string) []strategy.Resource {
	list, _ := d.list(path, raw)
	var rs []strategy.Resource
	for i, item := range list {
		ipath := index(path, i)
		m, ok := d.object(ipath, item)
		if !ok {
			continue
		}
		d.only(ipath, m, strictFields, nameKey, "weight")
		name, ok := d.str(join(ipath, nameKey), m[nameKey])
		if !ok || !d.resourceName(join(ipath, nameKey), name, false) {
			continue
		}
		if slices.ContainsFunc(rs, func(r strategy.Resource) bool { return r.Name == name }) {
			d.fail(join(ipath, nameKey), "appears twice in the list", name)
			continue
		}
		r := strategy.Resource{Name: name, Weight: 1}
		if raw, present := m["weight"]; present {
			w, ok := d.whole(join(ipath, "weight"), raw, strictInt)
			if !ok {
				continue
			}
			if w == 0 && nameKey == "name" {
				w = 1
			}
			if w <= 0 || w > 100 {
				d.fail(join(ipath, "weight"), "must be in (0, 100]", raw)
				continue
			}
			r.Weight = w
		}
		rs = append(rs, r)
	}
	return rs
}

func defaultKubeResources() []strategy.Resource {
	return []strategy.Resource{{Name: resource.CPU, Weight: 1}, {Name: resource.Memory, Weight: 1}}
}

// shape reads [{utilization, score}] and checks it as kube-scheduler does,
// reporting a bad point at its own path.
func (d *decoder) shape(path string, raw any) []strategy.ShapePoint {
	list, _ := d.list(path, raw)
	var pts []strategy.ShapePoint
	complete := true
	for i, item := range list {
		ipath := index(path, i)
		m, ok := d.object(ipath, item)
		if !ok {
			complete = false
			continue
		}
		d.only(ipath, m, strictFields, "utilization", "score")
		u, ok1 := d.whole(join(ipath, "utilization"), m["utilization"], strictInt)
		s, ok2 := d.whole(join(ipath, "score"), m["score"], strictInt)
		if !ok1 || !ok2 {
			complete = false
			continue
		}
		pts = append(pts, strategy.ShapePoint{Utilization: u, Score: s})
	}
	if !complete { // the points' own errors are reported; indices no longer match
		return pts
	}
	var se *strategy.ShapeError
	switch err := strategy.CheckShape(pts); {
	case errors.As(err, &se):
		d.fail(join(index(path, se.Point), se.Field), se.Detail, se.Value)
	case err != nil:
		d.fail(path, err.Error(), raw)
	}
	return pts
}

// nodeResourcesFit decodes kube-scheduler's NodeResourcesFitArgs:
//
//	scoringStrategy:
//	  type: MostAllocated | LeastAllocated | RequestedToCapacityRatio   # default LeastAllocated
//	  resources: [{name: cpu, weight: 1}, ...]                         # default cpu, memory
//	  requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}, ...]}
//	ignoredResources: [...]
//	ignoredResourceGroups: [...]
//
// and the KEP's older form, requestedToCapacityRatioArguments: {shape,
// resources: [{resource, weight}]}.
func (d *decoder) nodeResourcesFit(path string, raw any) ScorerArgs {
	m, ok := d.object(path, raw)
	if !ok {
		return NodeResourcesFitArgs{}
	}
	d.only(path, m, strictFields, "scoringStrategy", "ignoredResources", "ignoredResourceGroups", "requestedToCapacityRatioArguments")
	a := NodeResourcesFitArgs{Type: ScoringLeastAllocated, Resources: defaultKubeResources()}
	if legacy, present := m["requestedToCapacityRatioArguments"]; present {
		return d.legacyRTCR(join(path, "requestedToCapacityRatioArguments"), legacy)
	}
	for _, f := range []struct {
		k   string
		dst *[]string
	}{{"ignoredResources", &a.IgnoredResources}, {"ignoredResourceGroups", &a.IgnoredResourceGroups}} {
		list, _ := d.list(join(path, f.k), m[f.k])
		for i, item := range list {
			if s, ok := d.str(index(join(path, f.k), i), item); ok {
				*f.dst = append(*f.dst, s)
			}
		}
	}
	spath := join(path, "scoringStrategy")
	ss, ok := d.object(spath, m["scoringStrategy"])
	if !ok {
		return a
	}
	d.only(spath, ss, strictFields, "type", "resources", "requestedToCapacityRatio")
	if raw, present := ss["type"]; present {
		if s, ok := d.str(join(spath, "type"), raw); ok {
			switch s {
			case ScoringMostAllocated, ScoringLeastAllocated, ScoringRequestedToCapacityRatio:
				a.Type = s
			default:
				d.fail(join(spath, "type"), "unsupported scoring strategy type, want MostAllocated, LeastAllocated or RequestedToCapacityRatio", s)
			}
		}
	}
	if raw, present := ss["resources"]; present {
		if rs := d.namedWeights(join(spath, "resources"), raw, "name"); len(rs) > 0 {
			a.Resources = rs
		}
	}
	rtcr, hasRTCR := ss["requestedToCapacityRatio"]
	switch {
	case a.Type == ScoringRequestedToCapacityRatio && !hasRTCR:
		d.missing(join(spath, "requestedToCapacityRatio"), "must be specified when type is RequestedToCapacityRatio")
	case a.Type == ScoringRequestedToCapacityRatio:
		rpath := join(spath, "requestedToCapacityRatio")
		if rm, ok := d.object(rpath, rtcr); ok {
			d.only(rpath, rm, strictFields, "shape")
			a.Shape = d.shape(join(rpath, "shape"), rm["shape"])
		}
	case hasRTCR:
		d.fail(join(spath, "requestedToCapacityRatio"), "must be absent when type is not RequestedToCapacityRatio", rtcr)
	}
	return a
}

// legacyRTCR reads the KEP's requestedToCapacityRatioArguments: shape and
// resources [{resource, weight}] (default cpu and memory, weight 1).
func (d *decoder) legacyRTCR(path string, raw any) NodeResourcesFitArgs {
	a := NodeResourcesFitArgs{Type: ScoringRequestedToCapacityRatio, Resources: defaultKubeResources()}
	m, ok := d.object(path, raw)
	if !ok {
		return a
	}
	d.only(path, m, strictFields, "shape", "resources")
	a.Shape = d.shape(join(path, "shape"), m["shape"])
	if rs := d.namedWeights(join(path, "resources"), m["resources"], "resource"); len(rs) > 0 {
		a.Resources = rs
	}
	return a
}

// balanced decodes NodeResourcesBalancedAllocationArgs: resources [{name,
// weight: 1}] (default cpu and memory).
func (d *decoder) balanced(path string, raw any) ScorerArgs {
	m, ok := d.object(path, raw)
	if !ok {
		return BalancedAllocationArgs{}
	}
	d.only(path, m, strictFields, "resources")
	a := BalancedAllocationArgs{Resources: []string{resource.CPU, resource.Memory}}
	if raw, present := m["resources"]; present {
		rs := d.namedWeights(join(path, "resources"), raw, "name")
		for i, r := range rs {
			if r.Weight != 1 {
				d.fail(join(index(join(path, "resources"), i), "weight"), "must be 1", r.Weight)
			}
		}
		if len(rs) > 0 {
			a.Resources = a.Resources[:0]
			for _, r := range rs {
				a.Resources = append(a.Resources, r.Name)
			}
		}
	}
	return a
}

// kubeConf reads a KubeSchedulerConfiguration profile: the score plugins it
// enables (kube-scheduler's defaults NodeResourcesFit and
// NodeResourcesBalancedAllocation, weight 1, unless disabled) with their
// pluginConfig args, and the NodeResourcesFit filter unless disabled.
func (d *decoder) kubeConf(doc map[string]any, profileName string) *Config {
	c := &Config{}
	profiles, _ := d.list("profiles", doc["profiles"])
	pi := -1
	for i, p := range profiles {
		if m, ok := p.(map[string]any); ok && (profileName == "" || m["schedulerName"] == profileName) {
			pi = i
			break
		}
	}
	if pi < 0 {
		d.missing("profiles", "no profile named "+formatValue(profileName))
		return c
	}
	path := index("profiles", pi)
	profile, _ := d.object(path, profiles[pi])
	args := map[string]any{}
	cfgPath := map[string]string{}
	pcs, _ := d.list(join(path, "pluginConfig"), profile["pluginConfig"])
	for i, pc := range pcs {
		ppath := index(join(path, "pluginConfig"), i)
		m, ok := d.object(ppath, pc)
		if !ok {
			continue
		}
		if name, ok := d.str(join(ppath, "name"), m["name"]); ok {
			args[name] = m["args"]
			cfgPath[name] = join(ppath, "args")
		}
	}
	plugins, _ := d.object(join(path, "plugins"), profile["plugins"])
	enabled, disabled := d.extensionPoint(join(path, "plugins"), plugins, "score")
	multiEnabled, multiDisabled := d.extensionPoint(join(path, "plugins"), plugins, "multiPoint")
	_, filterDisabled := d.extensionPoint(join(path, "plugins"), plugins, "filter")
	off := func(name string, lists ...[]string) bool {
		for _, l := range lists {
			if contains(l, "*") || contains(l, name) {
				return true
			}
		}
		return false
	}
	type entry struct {
		name   string
		weight float64
	}
	var order []entry
	for _, def := range []string{NodeResourcesFit, NodeResourcesBalancedAllocation} {
		if !off(def, disabled, multiDisabled) {
			order = append(order, entry{def, 1})
		}
	}
	for _, e := range append(multiEnabled, enabled...) {
		w := float64(e.weight)
		if w == 0 { // kube-scheduler: an unset or zero weight is 1
			w = 1
		}
		replaced := false
		for i := range order {
			if order[i].name == e.name {
				order[i].weight, replaced = w, true
			}
		}
		if !replaced {
			order = append(order, entry{e.name, w})
		}
	}
	var fitArgs ScorerArgs = NodeResourcesFitArgs{Type: ScoringLeastAllocated, Resources: defaultKubeResources()}
	if raw, ok := args[NodeResourcesFit]; ok {
		fitArgs = d.nodeResourcesFit(cfgPath[NodeResourcesFit], raw)
	}
	for _, e := range order {
		if e.name == NodeResourcesFit {
			c.Scorers = append(c.Scorers, ScorerConfig{Name: e.name, Weight: e.weight, Args: fitArgs})
			continue
		}
		a, known := d.scorerArgs(cfgPath[e.name], e.name, args[e.name])
		if !known {
			d.warn("%s: score plugin %q has no resfit scorer; skipped", join(path, "plugins"), e.name)
			continue
		}
		c.Scorers = append(c.Scorers, ScorerConfig{Name: e.name, Weight: e.weight, Args: a})
	}
	if !off(NodeResourcesFit, filterDisabled, multiDisabled) {
		fa, _ := fitArgs.(NodeResourcesFitArgs)
		c.Filters = append(c.Filters, FilterConfig{Name: NodeResourcesFit, Args: fa})
	}
	return c
}

// enabledPlugin is one entry of plugins.<point>.enabled.
type enabledPlugin struct {
	name   string
	weight int64
}

// extensionPoint reads plugins.<point>.enabled and the names in disabled.
func (d *decoder) extensionPoint(path string, plugins map[string]any, point string) (enabled []enabledPlugin, disabled []string) {
	ppath := join(path, point)
	m, ok := d.object(ppath, plugins[point])
	if !ok {
		return nil, nil
	}
	for _, which := range []string{"enabled", "disabled"} {
		list, _ := d.list(join(ppath, which), m[which])
		for i, item := range list {
			ipath := index(join(ppath, which), i)
			pm, ok := d.object(ipath, item)
			if !ok {
				continue
			}
			name, ok := d.str(join(ipath, "name"), pm["name"])
			if !ok {
				continue
			}
			if which == "disabled" {
				disabled = append(disabled, name)
				continue
			}
			e := enabledPlugin{name: name}
			if raw, present := pm["weight"]; present {
				if x, ok := d.weight(join(ipath, "weight"), raw, strictInt); ok {
					if x < 0 {
						d.fail(join(ipath, "weight"), "must be ≥ 0", raw)
					}
					e.weight = x
				}
			}
			enabled = append(enabled, e)
		}
	}
	return enabled, disabled
}

// policy reads a legacy kube-scheduler Policy's priorities, the form the
// RequestedToCapacityRatio KEP is written in:
//
//	priorities:
//	- name: RequestedToCapacityRatioPriority
//	  weight: 5
//	  argument: {requestedToCapacityRatioArguments: {shape: [...], resources: [...]}}
//	- {name: MostRequestedPriority, weight: 1}
func (d *decoder) policy(doc map[string]any) *Config {
	c := &Config{Filters: []FilterConfig{{Name: NodeResourcesFit, Args: NodeResourcesFitArgs{}}}}
	list, _ := d.list("priorities", doc["priorities"])
	for i, item := range list {
		path := index("priorities", i)
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
		var args ScorerArgs
		switch name {
		case RequestedToCapacityRatioPriority:
			apath := join(path, "argument")
			am, ok := d.object(apath, m["argument"])
			if !ok {
				continue
			}
			d.only(apath, am, strictFields, "requestedToCapacityRatioArguments")
			args = d.legacyRTCR(join(apath, "requestedToCapacityRatioArguments"), am["requestedToCapacityRatioArguments"])
		case MostRequestedPriority:
			args = NodeResourcesFitArgs{Type: ScoringMostAllocated, Resources: defaultKubeResources()}
		case LeastRequestedPriority:
			args = NodeResourcesFitArgs{Type: ScoringLeastAllocated, Resources: defaultKubeResources()}
		case BalancedResourceAllocation:
			args = BalancedAllocationArgs{Resources: []string{resource.CPU, resource.Memory}}
		default:
			d.warn("%s: priority %q has no resfit scorer; skipped", join(path, "name"), name)
			continue
		}
		c.Scorers = append(c.Scorers, ScorerConfig{Name: name, Weight: weight, Args: args})
	}
	return c
}
