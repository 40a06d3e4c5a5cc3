package config

import (
	"slices"
	"strings"
)

// native reads resfit's own form, the form Config.Canonical writes:
//
//	hostDeviceShare: true          # false: the host adds no DeviceShare filter
//	filters:                       # default [NodeResourcesFit]
//	- NodeResourcesFit             # a name, or {name, args: {ignoredResources,
//	                               # ignoredResourceGroups}}
//	plugins:
//	- name: resource-strategy-fit  # any plugin resfit knows
//	  weight: 1                    # default 1
//	  scores: true                 # false leaves its scores out
//	  filters: true                # false leaves out the filters it brings
//	  kubeScheduler: false         # true: scored 0-100 as resfit's kube-scheduler
//	                               # plugin of that name scores (KubePluginArgs);
//	                               # always so for ResourceStrategyFit
//	  args: {...}                  # the plugin's upstream arguments (or arguments)
//
// A NodeResourcesFit filter given by name takes the NodeResourcesFit
// plugin's ignoredResources and ignoredResourceGroups, when the plugin is
// configured.
func (d *decoder) native(doc map[string]any) *Config {
	d.only(d.root, doc, strictFields, "plugins", "filters", "hostDeviceShare")
	c := &Config{}
	if raw, present := doc["hostDeviceShare"]; present {
		on, _ := d.boolean(d.at("hostDeviceShare"), raw)
		c.NoHostDeviceShare = !on
	}
	plugins, _ := d.list(d.at("plugins"), doc["plugins"])
	fitArgs := NodeResourcesFitArgs{}
	for i, p := range plugins {
		path := index(d.at("plugins"), i)
		m, ok := d.object(path, p)
		if !ok {
			continue
		}
		d.only(path, m, strictFields, "name", "weight", "scores", "filters", "kubeScheduler", "args", "arguments")
		name, ok := d.str(join(path, "name"), m["name"])
		if !ok {
			continue
		}
		weight := d.pluginWeight(join(path, "weight"), m["weight"])
		argsKey := "args"
		if m["arguments"] != nil {
			argsKey = "arguments"
		}
		kube, ok := d.kubeScheduler(path, name, m)
		if !ok {
			continue
		}
		var args ScorerArgs
		var notes map[string]string
		if kube {
			args, _ = d.kubePlugin(join(path, argsKey), name, m[argsKey])
			notes = map[string]string{"kubeScheduler": join(path, "kubeScheduler")}
		} else {
			var known bool
			if args, notes, known = d.plugin(join(path, argsKey), name, m[argsKey]); !known {
				d.fail(join(path, "name"), "unknown plugin; known are "+strings.Join(knownScorers, ", ")+" and resfit's kube-scheduler plugin "+KubeResourceStrategyFit, name)
				continue
			}
		}
		notes[""] = path
		sc := ScorerConfig{Name: name, Weight: weight, Args: args, Sources: notes}
		for _, sw := range []struct {
			field string
			off   *bool
		}{{"scores", &sc.ScoresOff}, {"filters", &sc.FiltersOff}} {
			if raw, present := m[sw.field]; present {
				notes[sw.field] = join(path, sw.field)
				on, _ := d.boolean(join(path, sw.field), raw)
				*sw.off = !on
			}
		}
		if m["weight"] != nil {
			notes["weight"] = join(path, "weight")
		}
		d.weightProduct(join(path, "weight"), weight, args)
		if fa, ok := args.(NodeResourcesFitArgs); ok {
			fitArgs = NodeResourcesFitArgs{IgnoredResources: fa.IgnoredResources, IgnoredResourceGroups: fa.IgnoredResourceGroups}
		}
		c.Scorers = append(c.Scorers, sc)
	}
	filters := []any{NodeResourcesFit}
	raw, present := doc["filters"]
	if present {
		filters, _ = d.list(d.at("filters"), raw)
	}
	for i, f := range filters {
		fpath := index(d.at("filters"), i)
		source := fpath
		if !present {
			source = "default"
		}
		name, args := d.filter(fpath, f, fitArgs)
		if name != "" {
			c.Filters = append(c.Filters, FilterConfig{Name: name, Args: args, Source: source})
		}
	}
	return c
}

// kubeScheduler reads a plugin entry's kubeScheduler: whether it is one of
// resfit's kube-scheduler plugins, as ResourceStrategyFit always is; ok is
// false when the entry is wrong.
func (d *decoder) kubeScheduler(path, name string, m map[string]any) (kube, ok bool) {
	raw, present := m["kubeScheduler"]
	if !present {
		return name == KubeResourceStrategyFit, true
	}
	on, ok := d.boolean(join(path, "kubeScheduler"), raw)
	switch {
	case !ok:
		return false, false
	case on && !slices.Contains(kubePlugins, name):
		d.fail(join(path, "kubeScheduler"), "only resfit's kube-scheduler plugins ("+strings.Join(kubePlugins, ", ")+") score as one; "+formatValue(name)+" is not one", raw)
		return false, false
	case !on && name == KubeResourceStrategyFit:
		d.fail(join(path, "kubeScheduler"), "ResourceStrategyFit is resfit's kube-scheduler plugin: must be true", raw)
		return false, false
	}
	return on, true
}

// filter reads one entry of filters: a name, or {name, args}; a name alone
// takes the arguments of the plugin of that name (given).
func (d *decoder) filter(path string, raw any, given NodeResourcesFitArgs) (string, NodeResourcesFitArgs) {
	npath, args := path, given
	if m, isObject := raw.(map[string]any); isObject {
		d.only(path, m, strictFields, "name", "args")
		npath, raw = join(path, "name"), m["name"]
		args = NodeResourcesFitArgs{}
		apath := join(path, "args")
		if am, ok := d.object(apath, m["args"]); ok {
			d.only(apath, am, strictFields, "ignoredResources", "ignoredResourceGroups")
			d.ignored(apath, am, &args)
		}
	}
	name, ok := d.str(npath, raw)
	if !ok {
		return "", args
	}
	if name != NodeResourcesFit {
		d.fail(npath, "unknown filter; known is "+NodeResourcesFit, name)
		return "", args
	}
	return name, args
}

var knownScorers = []string{ResourceStrategyFit, Binpack, NodeOrder, NodeResourcesFit, NodeResourcesBalancedAllocation, PackLeastUsed, NodeResourcesFitPlus, ScarceResourceAvoidance, FGD, ResfitFrag}

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
