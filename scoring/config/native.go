package config

import (
	"strings"
)

// native reads resfit's own form: plugins, a list of {name, weight, args}
// (or arguments), and filters, a list of filter names (default
// [NodeResourcesFit], with the NodeResourcesFit plugin's args when it has
// one).
func (d *decoder) native(doc map[string]any) *Config {
	d.only(d.root, doc, strictFields, "plugins", "filters")
	c := &Config{}
	plugins, _ := d.list(d.at("plugins"), doc["plugins"])
	fitArgs := NodeResourcesFitArgs{}
	for i, p := range plugins {
		path := index(d.at("plugins"), i)
		m, ok := d.object(path, p)
		if !ok {
			continue
		}
		d.only(path, m, strictFields, "name", "weight", "args", "arguments")
		name, ok := d.str(join(path, "name"), m["name"])
		if !ok {
			continue
		}
		weight := d.pluginWeight(join(path, "weight"), m["weight"])
		argsKey := "args"
		if m["arguments"] != nil {
			argsKey = "arguments"
		}
		args, known := d.scorerArgs(join(path, argsKey), name, m[argsKey])
		if !known {
			d.fail(join(path, "name"), "unknown plugin; known are "+strings.Join(knownScorers, ", "), name)
			continue
		}
		if fa, ok := args.(NodeResourcesFitArgs); ok {
			fitArgs = fa
		}
		c.Scorers = append(c.Scorers, ScorerConfig{Name: name, Weight: weight, Args: args})
	}
	filters := []any{NodeResourcesFit}
	if raw, present := doc["filters"]; present {
		filters, _ = d.list(d.at("filters"), raw)
	}
	for i, f := range filters {
		name, ok := d.str(index(d.at("filters"), i), f)
		if !ok {
			continue
		}
		if name != NodeResourcesFit {
			d.fail(index(d.at("filters"), i), "unknown filter; known is "+NodeResourcesFit, name)
			continue
		}
		c.Filters = append(c.Filters, FilterConfig{Name: name, Args: fitArgs})
	}
	return c
}

var knownScorers = []string{ResourceStrategyFit, Binpack, NodeOrder, NodeResourcesFit, NodeResourcesBalancedAllocation, NodeResourcesFitPlus, ScarceResourceAvoidance}

// pluginWeight reads a plugin's weight in the total: a whole number in
// [0, resource.MaxWeight], 1 when absent.
func (d *decoder) pluginWeight(path string, raw any) float64 {
	if raw == nil {
		return 1
	}
	w, ok := d.weight(path, raw, strictInt)
	if !ok {
		return 0
	}
	if w < 0 {
		d.fail(path, "must be ≥ 0", raw)
		return 0
	}
	return float64(w)
}
