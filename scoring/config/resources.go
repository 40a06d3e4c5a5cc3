package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/strategy"
)

// Resource lists as the dialects write them.

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
// missing weight is 1. rel is the list's path in resfit's own form, for
// notes.
func (d *decoder) typedResources(path, rel string, raw any, volcano bool) []strategy.Resource {
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
		rrel := child(rel, name)
		if _, present := spec["type"]; present {
			d.note(child(rrel, "type"), join(rpath, "type"))
		}
		if _, present := spec["weight"]; present {
			d.note(child(rrel, "weight"), join(rpath, "weight"))
		}
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
