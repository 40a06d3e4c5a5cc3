package config

import (
	"maps"
	"slices"
	"strings"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/sra"
)

// Scarce-resource avoidance in resource-strategy-fit's arguments: the
// design's flat and nested forms and Volcano's released form.

// RetentionArgs configure Volcano's sra retention score (see sra.Retention).
type RetentionArgs struct {
	Weight    int64
	Resources []sra.Weighted
}

// sraPolicy is one SRA policy as read from any dialect, before validation.
type sraPolicy struct {
	enabled    bool
	path       string // where its resources list is
	resources  []string
	weight     *int64 // retention only
	weightRaw  any    // the raw weight, for messages
	weightPath string
	weights    map[string]any // retention: resource → weight
	ratios     map[string]any // proportional: "<resource>.cpu|memory" → ratio
	wpath      func(k string) string
	rpath      func(k string) string
	released   bool   // Volcano's released form (a missing weight turns it off)
	enablePath string // where it was turned on or off; empty when it was not
}

// decodeSRA reads scarce-resource avoidance from resource-strategy-fit
// arguments, in whichever form they use: the flat dotted form
// (sra.policy, sra.resources, sra.retention.weight, sra.retention.<name>,
// sra.proportional.<name>.cpu), the nested form (sra: {policy, resources,
// retention, proportional}), or Volcano's released form (sra: {enable,
// resources, weight, resourceWeight}, proportional: {enable, resources,
// resourceProportion}).
func (d *decoder) decodeSRA(path string, m map[string]any, a *ResourceStrategyFitArgs) {
	var flat []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if strings.HasPrefix(k, "sra.") {
			flat = append(flat, k)
		}
	}
	nested, hasNested := m["sra"]
	released, hasReleasedProportional := m["proportional"]
	if len(flat) > 0 && (hasNested || hasReleasedProportional) {
		d.fail(key(path, flat[0]), "flat sra.* keys cannot be mixed with an sra or proportional object", m[flat[0]])
		return
	}
	var retention, proportional sraPolicy
	switch {
	case len(flat) > 0:
		retention, proportional = d.flatSRA(path, m, flat)
	case hasNested:
		retention, proportional = d.nestedSRA(join(path, "sra"), nested)
	}
	if hasReleasedProportional {
		if proportional.enabled || proportional.ratios != nil {
			d.fail(join(path, "proportional"), "proportional is configured twice (sra.proportional and proportional)", released)
		} else {
			proportional = d.releasedProportional(join(path, "proportional"), released)
		}
	}
	a.Retention = d.retention(retention)
	a.Proportional = d.proportional(proportional)
}

func (d *decoder) flatSRA(path string, m map[string]any, keys []string) (ret, prop sraPolicy) {
	ret.weights, prop.ratios = map[string]any{}, map[string]any{}
	ret.wpath = func(k string) string { return key(path, "sra.retention."+k) }
	prop.rpath = func(k string) string { return key(path, "sra.proportional."+k) }
	var resources []string
	for _, k := range keys {
		v := m[k]
		switch {
		case k == "sra.policy":
			ret.enabled, prop.enabled = d.policies(key(path, k), v)
			ret.enablePath, prop.enablePath = key(path, k), key(path, k)
		case k == "sra.resources":
			resources = d.resourceList(key(path, k), v)
		case k == "sra.retention.weight":
			ret.weightRaw, ret.weightPath = v, key(path, k)
			if w, ok := d.weight(key(path, k), v, truncatedInt); ok {
				ret.weight = &w
			}
		case strings.HasPrefix(k, "sra.retention."):
			ret.weights[strings.TrimPrefix(k, "sra.retention.")] = v
		case strings.HasPrefix(k, "sra.proportional."):
			prop.ratios[strings.TrimPrefix(k, "sra.proportional.")] = v
		default:
			d.fail(key(path, k), "unknown field; known are sra.policy, sra.resources, sra.retention.weight, sra.retention.<resource>, sra.proportional.<resource>.cpu|memory", v)
		}
	}
	ret.resources, prop.resources = resources, resources
	ret.path, prop.path = key(path, "sra.resources"), key(path, "sra.resources")
	return ret, prop
}

func (d *decoder) nestedSRA(path string, raw any) (ret, prop sraPolicy) {
	m, ok := d.object(path, raw)
	if !ok {
		return
	}
	// Volcano decodes its released form with mapstructure; resfit also reads
	// the design's form here. One check covers both forms' fields.
	m = d.only(path, m, volcanoStruct, "enable", "resources", "weight", "resourceWeight", "policy", "retention", "proportional")
	releasedKeys := m["enable"] != nil || m["weight"] != nil || m["resourceWeight"] != nil
	specKeys := m["policy"] != nil || m["retention"] != nil || m["proportional"] != nil
	if releasedKeys && specKeys {
		d.fail(path, "mixes Volcano's released form (enable, weight, resourceWeight) with the design's (policy, retention, proportional)", raw)
		return
	}
	if releasedKeys {
		ret = sraPolicy{released: true, path: join(path, "resources"), weightRaw: m["weight"], weightPath: join(path, "weight")}
		ret.enabled = d.enable(join(path, "enable"), m["enable"])
		if m["enable"] != nil {
			ret.enablePath = join(path, "enable")
		}
		ret.resources = d.resourceList(join(path, "resources"), m["resources"])
		if m["weight"] != nil {
			if w, ok := d.weight(join(path, "weight"), m["weight"], truncatedInt); ok {
				ret.weight = &w
			}
		}
		ret.weights, _ = d.object(join(path, "resourceWeight"), m["resourceWeight"])
		ret.wpath = func(k string) string { return key(join(path, "resourceWeight"), k) }
		return ret, prop
	}
	ret.enabled, prop.enabled = d.policies(join(path, "policy"), m["policy"])
	if m["policy"] != nil {
		ret.enablePath, prop.enablePath = join(path, "policy"), join(path, "policy")
	}
	resources := d.resourceList(join(path, "resources"), m["resources"])
	ret.resources, prop.resources = resources, resources
	ret.path, prop.path = join(path, "resources"), join(path, "resources")
	rm, _ := d.object(join(path, "retention"), m["retention"])
	ret.weights = map[string]any{}
	for k, v := range rm {
		if k == "weight" {
			ret.weightRaw, ret.weightPath = v, join(join(path, "retention"), "weight")
			if w, ok := d.weight(join(join(path, "retention"), "weight"), v, truncatedInt); ok {
				ret.weight = &w
			}
			continue
		}
		ret.weights[k] = v
	}
	ret.wpath = func(k string) string { return key(join(path, "retention"), k) }
	prop.ratios, _ = d.object(join(path, "proportional"), m["proportional"])
	prop.rpath = func(k string) string { return key(join(path, "proportional"), k) }
	return ret, prop
}

func (d *decoder) releasedProportional(path string, raw any) sraPolicy {
	m, ok := d.object(path, raw)
	if !ok {
		return sraPolicy{}
	}
	m = d.only(path, m, volcanoStruct, "enable", "resources", "resourceProportion")
	p := sraPolicy{released: true, path: join(path, "resources")}
	p.enabled = d.enable(join(path, "enable"), m["enable"])
	if m["enable"] != nil {
		p.enablePath = join(path, "enable")
	}
	p.resources = d.resourceList(join(path, "resources"), m["resources"])
	p.ratios, _ = d.object(join(path, "resourceProportion"), m["resourceProportion"])
	p.rpath = func(k string) string { return key(join(path, "resourceProportion"), k) }
	return p
}

func (d *decoder) enable(path string, raw any) bool {
	if raw == nil {
		return false
	}
	b, _ := d.boolean(path, raw)
	return b
}

// policies reads "retention", "proportional" or both, comma-separated.
func (d *decoder) policies(path string, raw any) (retention, proportional bool) {
	s, ok := d.str(path, raw)
	if !ok {
		return
	}
	for _, p := range strings.Split(s, ",") {
		switch strings.TrimSpace(p) {
		case "retention":
			retention = true
		case "proportional":
			proportional = true
		default:
			d.fail(path, "unknown sra policy, want retention, proportional or both", s)
		}
	}
	return
}

// resourceList reads "a, b" (Volcano's form) or a YAML list of names.
func (d *decoder) resourceList(path string, raw any) []string {
	var names []string
	switch v := raw.(type) {
	case nil:
	case string:
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
	case []any:
		for i, item := range v {
			if s, ok := d.str(index(path, i), item); ok {
				names = append(names, s)
			}
		}
	default:
		d.fail(path, "must be a comma-separated string or a list of resource names", raw)
		return nil
	}
	var valid []string
	for _, n := range names {
		if err := resource.ValidateName(n); err != nil {
			d.fail(path, invalidName(n, err), n)
			continue
		}
		if slices.Contains(valid, n) {
			d.fail(path, "lists a resource twice", n)
			continue
		}
		valid = append(valid, n)
	}
	return valid
}

func (d *decoder) retention(p sraPolicy) *RetentionArgs {
	p.note(d, "sra")
	for _, k := range slices.Sorted(maps.Keys(p.weights)) {
		if !slices.Contains(p.resources, k) {
			d.lenient(p.wpath(k), "names a resource not listed in the sra resources", p.weights[k], "nothing (ignored)")
		}
	}
	if !p.enabled {
		return nil
	}
	if len(p.resources) == 0 {
		d.missing(p.path, "at least one scarce resource is required for the retention policy")
		return nil
	}
	a := &RetentionArgs{Weight: 1}
	switch {
	case p.weight != nil && *p.weight > 0:
		a.Weight = *p.weight
	case p.weight != nil:
		// Volcano registers no sra score for a weight ≤ 0.
		d.lenient(p.weightPath, "must be > 0", p.weightRaw, "0, which turns retention off")
		return nil
	case p.released && d.compat:
		d.warn("%s: missing; Volcano reads it as 0 and turns retention off", strings.TrimSuffix(p.path, "resources")+"weight")
		return nil
	case p.released:
		d.missing(strings.TrimSuffix(p.path, "resources")+"weight", "required when sra.enable is true (Volcano would silently turn retention off)")
		return nil
	}
	for _, n := range p.resources {
		w := int64(1)
		if raw, ok := p.weights[n]; ok {
			x, ok := d.weight(p.wpath(n), raw, truncatedInt)
			if !ok {
				continue
			}
			switch {
			case x > 0:
				w = x
			case x == 0 && d.compat:
				d.warn("%s: weight 0 makes the resource count for nothing, as in Volcano", p.wpath(n))
				w = 0
			case x < 0 && d.compat:
				d.warn("%s: must be > 0, got %d; using 1 as Volcano does", p.wpath(n), x)
			default:
				d.fail(p.wpath(n), "must be > 0", raw)
				continue
			}
		}
		a.Resources = append(a.Resources, sra.Weighted{Name: n, Weight: w})
	}
	return a
}

func (d *decoder) proportional(p sraPolicy) []sra.Ratio {
	p.note(d, "proportional")
	ratios := map[string]*sra.Ratio{}
	for _, n := range p.resources {
		ratios[n] = &sra.Ratio{Resource: n, CPU: 1, Memory: 1}
	}
	for _, k := range slices.Sorted(maps.Keys(p.ratios)) {
		kpath := p.rpath(k)
		primary, secondary, ok := sra.SplitProportionKey(k)
		if !ok {
			d.fail(kpath, "want <resource>.cpu or <resource>.memory", p.ratios[k])
			continue
		}
		r, listed := ratios[primary]
		if !listed {
			d.lenient(kpath, "names a resource not listed in the proportional resources", p.ratios[k], "nothing (ignored)")
			continue
		}
		v, ok := d.number(kpath, p.ratios[k])
		if !ok {
			continue
		}
		if v < 0 {
			if !d.lenient(kpath, "must be ≥ 0", p.ratios[k], "1") {
				continue
			}
			v = 1
		}
		if secondary == resource.CPU {
			r.CPU = v
		} else {
			r.Memory = v
		}
	}
	if !p.enabled {
		return nil
	}
	if len(p.resources) == 0 {
		d.missing(p.path, "at least one primary resource is required for the proportional policy")
		return nil
	}
	out := make([]sra.Ratio, 0, len(p.resources))
	for _, n := range p.resources {
		out = append(out, *ratios[n])
	}
	return out
}

// note records where the policy's values were read, under rel (sra or
// proportional) as Canonical writes them in Volcano's released form.
func (p sraPolicy) note(d *decoder, rel string) {
	if p.enablePath != "" {
		d.note(rel+".enable", p.enablePath)
	}
	if len(p.resources) > 0 {
		d.note(rel+".resources", p.path)
	}
	if p.weight != nil {
		d.note(rel+".weight", p.weightPath)
	}
	for k := range p.weights {
		d.note(child(rel+".resourceWeight", k), p.wpath(k))
	}
	for k := range p.ratios {
		d.note(child(rel+".resourceProportion", k), p.rpath(k))
	}
}
