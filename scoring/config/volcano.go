package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/resfit/resfit/resource"
)

// volcanoConf reads a volcano-scheduler.conf: every plugin of every tier.
// Volcano adds the node-order scores of all of them, unweighted, behind the
// fit check its allocate action makes; resfit does the same with the
// plugins that score resources (resource-strategy-fit, binpack, nodeorder's
// resource scores) and names, in Warnings, each plugin it leaves to the
// host scheduler. A plugin Volcano does not have is an error (a warning in
// compatibility mode: Volcano logs it and runs without it).
func (d *decoder) volcanoConf(doc map[string]any) *Config {
	d.only(d.root, doc, volcanoKeys, "actions", "tiers", "configurations", "metrics")
	if raw, present := doc["actions"]; present {
		d.str(d.at("actions"), raw)
	}
	c := &Config{Filters: []FilterConfig{{Name: NodeResourcesFit, Args: NodeResourcesFitArgs{}, Source: "Volcano's allocate action checks that a task fits"}}}
	var host []string // plugins that are not node scores, as `path "name"`
	tiers, _ := d.list(d.at("tiers"), doc["tiers"])
	for i, t := range tiers {
		tpath := index(d.at("tiers"), i)
		tm, ok := d.object(tpath, t)
		if !ok {
			continue
		}
		d.only(tpath, tm, volcanoKeys, "plugins")
		plugins, _ := d.list(join(tpath, "plugins"), tm["plugins"])
		for j, p := range plugins {
			path := index(join(tpath, "plugins"), j)
			m, ok := d.object(path, p)
			if !ok {
				continue
			}
			m = d.only(path, m, volcanoKeys, volcanoPluginOptions...)
			name, ok := d.str(join(path, "name"), m["name"])
			if !ok {
				continue
			}
			scores, filters := true, true
			for _, opt := range volcanoPluginOptions[2:] {
				if raw, present := m[opt]; present {
					on, ok := d.volcanoBool(join(path, opt), raw)
					switch {
					case ok && opt == "enableNodeOrder":
						scores = on
					case ok && opt == "enablePredicate":
						filters = on
					}
				}
			}
			if name == VolcanoResfit {
				c.Scorers, c.Filters = d.volcanoResfit(path, m["arguments"], scores, filters, c.Scorers, c.Filters)
				continue
			}
			name = VolcanoPlugin(name)
			args, notes, known := d.plugin(join(path, "arguments"), name, m["arguments"])
			if !known {
				role, ok := volcanoHostPlugins[name]
				switch {
				case !ok:
					d.lenient(join(path, "name"), "not a Volcano plugin; known are "+strings.Join(volcanoPluginNames(), ", "), name, "nothing (Volcano skips a plugin it does not know)")
				case role == "":
					host = append(host, fmt.Sprintf("%s %q", strings.TrimPrefix(path, d.root+"."), name))
				default:
					d.warn("%s (%s): %s", path, name, role)
				}
				continue
			}
			if !scores {
				d.warn("%s (%s): enableNodeOrder is false, so Volcano adds none of its scores; left out", path, name)
			}
			notes[""], notes["weight"] = path, "Volcano adds node-order scores unweighted"
			for field, opt := range map[string]string{"scores": "enableNodeOrder", "filters": "enablePredicate"} {
				if m[opt] != nil {
					notes[field] = join(path, opt)
				}
			}
			c.Scorers = append(c.Scorers, ScorerConfig{Name: name, Weight: 1, Args: args, ScoresOff: !scores, FiltersOff: !filters, Sources: notes})
		}
	}
	if host != nil {
		verb := "has"
		if len(host) > 1 {
			verb = "have"
		}
		where := ""
		if d.root != "" {
			where = d.root + ": "
		}
		d.warn("%s%s %s no resfit scorer: not node scores (job, task and queue order, gang scheduling, admission, eviction); the host scheduler runs them", where, strings.Join(host, ", "), verb)
	}
	return c
}

// volcanoResfit reads the arguments of a tier's resfit plugin, a
// configuration in resfit's own form, and adds its scorers (each off where
// the tier's entry turns node order or predicates off) and its filters
// that are not there yet to a Volcano configuration's.
func (d *decoder) volcanoResfit(path string, raw any, scores, filters bool, scorers []ScorerConfig, have []FilterConfig) ([]ScorerConfig, []FilterConfig) {
	apath := join(path, "arguments")
	doc, ok := d.object(apath, raw)
	if !ok {
		return scorers, have
	}
	if doc["plugins"] == nil {
		d.missing(join(apath, "plugins"), "the resfit plugin's arguments are a configuration in resfit's own form: plugins (a list of {name, weight, args}) and optionally filters")
		return scorers, have
	}
	saved := d.root
	d.root = apath
	sub := d.native(doc)
	d.root = saved
	if !scores {
		d.warn("%s (%s): enableNodeOrder is false, so Volcano adds none of its scores; left out", path, VolcanoResfit)
	}
	for _, sc := range sub.Scorers {
		sc.ScoresOff = sc.ScoresOff || !scores
		sc.FiltersOff = sc.FiltersOff || !filters
		scorers = append(scorers, sc)
	}
	for _, f := range sub.Filters {
		if !slices.ContainsFunc(have, func(h FilterConfig) bool { return h.Name == f.Name }) {
			have = append(have, f)
		}
	}
	return scorers, have
}

// volcanoPluginOptions are the fields of a Volcano tier's plugin entry
// (conf.PluginOption): its name, its arguments, and the switches for each
// extension point, which Volcano turns on when they are absent.
var volcanoPluginOptions = []string{"name", "arguments",
	"enableJobOrder", "enableHierarchy", "enableJobReady", "enableJobPipelined", "enableTaskOrder",
	"enablePreemptable", "enableReclaimable", "enablePreemptive", "enableQueueOrder", "enabledClusterOrder",
	"enablePredicate", "enableBestNode", "enableNodeOrder", "enableTargetJob", "enableReservedNodes",
	"enableJobEnqueued", "enabledVictim", "enableJobStarving", "enabledOverused", "enabledAllocatable",
	"enabledHyperNodeOrder", "enabledSubJobReady", "enabledSubJobPipelined", "enabledSubJobOrder",
	"enabledHyperNodeGradient"}

// volcanoHostPlugins are Volcano's plugins (its plugin factory) that resfit
// does not compute, with what a user should know about each; an empty
// note means the plugin scores no nodes, and one warning lists them all.
var volcanoHostPlugins = map[string]string{
	"priority":               "",
	"gang":                   "",
	"conformance":            "",
	"overcommit":             "",
	"proportion":             "",
	"capacity":               "",
	"sla":                    "",
	"pdb":                    "",
	"cdp":                    "",
	"rescheduling":           "",
	"resourcequota":          "",
	"drf":                    "job and queue order by dominant resource share, not a node score; the host scheduler runs it (scoring/drf computes the same shares and order)",
	"predicates":             "its resource check is resfit's fit filter, which always runs; its other filters (node affinity, taints, ports, volumes, pod affinity, DRA) and its volume-binding score are left to the host scheduler",
	"deviceshare":            "scores nodes for shared GPUs (binpack or spread over devices); the host scheduler adds that score (resfit's DeviceShare filter and scoring/frag work on the same device view)",
	"tdm":                    "scores nodes by time-division revocable zones; the host scheduler adds that score",
	"task-topology":          "scores nodes by the job's task affinity; the host scheduler adds that score",
	"numa-aware":             "scores nodes by NUMA placement; the host scheduler adds that score",
	"usage":                  "scores nodes by measured load; the host scheduler adds that score",
	"nodegroup":              "scores nodes by queue and node-group affinity; the host scheduler adds that score",
	"network-topology-aware": "scores nodes and hypernodes by network topology; the host scheduler adds that score",
	"extender":               "calls an HTTP extender that may filter and score nodes; the host scheduler runs it",
}

// volcanoAliases are the names resfit's Volcano scheduler
// (examples/volcano) registers resfit's plugins under, beside Volcano's
// own: resfit's computation of Volcano's resource-strategy-fit, binpack
// and nodeorder under names that do not shadow Volcano's (Volcano keeps
// whichever plugin registers a name last), and resfit's fragmentation
// plugins.
var volcanoAliases = map[string]string{
	"resfit-resource-strategy-fit": ResourceStrategyFit,
	"resfit-binpack":               Binpack,
	"resfit-nodeorder":             NodeOrder,
	"resfit-fgd":                   FGD,
	"resfit-frag":                  ResfitFrag,
}

// VolcanoResfit is the Volcano plugin of resfit's Volcano scheduler whose
// arguments are a whole configuration in resfit's own form (plugins and
// filters): one node-order score, the configuration's weighted total.
const VolcanoResfit = "resfit"

// VolcanoPlugin is the name resfit's configuration gives the plugin a
// volcano-scheduler.conf calls name: ResourceStrategyFit for
// resfit-resource-strategy-fit, FGD for resfit-fgd and so on (resfit's
// plugins under the names resfit's Volcano scheduler registers), name
// itself for every other (Volcano's resource-strategy-fit, binpack and
// nodeorder, which resfit computes as Volcano does, are named alike in
// both).
func VolcanoPlugin(name string) string {
	if alias, ok := volcanoAliases[name]; ok {
		return alias
	}
	return name
}

// VolcanoPluginNames are the names resfit's Volcano scheduler registers
// resfit's plugins under, sorted: VolcanoResfit and one per plugin.
func VolcanoPluginNames() []string {
	names := append(slices.Collect(maps.Keys(volcanoAliases)), VolcanoResfit)
	slices.Sort(names)
	return names
}

// volcanoPluginNames are every plugin name a Volcano configuration may use.
func volcanoPluginNames() []string {
	names := append(slices.Collect(maps.Keys(volcanoHostPlugins)), ResourceStrategyFit, Binpack, NodeOrder)
	names = append(names, VolcanoPluginNames()...)
	slices.Sort(names)
	return names
}

// volcanoBool reads a plugin switch as Volcano's YAML decoder does: a YAML
// boolean; anything else makes Volcano refuse the whole configuration.
func (d *decoder) volcanoBool(path string, v any) (bool, bool) {
	b, ok := v.(bool)
	if !ok {
		d.fail(path, "must be true or false (Volcano refuses the configuration otherwise)", v)
	}
	return b, ok
}

// weightProduct checks that a plugin's weight times the weights it gives
// its own scores (nodeorder's) stays within resource.MaxWeight, the bound
// on every weight in a pipeline.
func (d *decoder) weightProduct(path string, weight float64, args ScorerArgs) {
	a, ok := args.(interface{ partWeight() int64 })
	if !ok || weight*float64(a.partWeight()) <= resource.MaxWeight {
		return
	}
	d.fail(path, fmt.Sprintf("times the plugin's largest weight of its own (%d) must be at most %d, the bound on every weight", a.partWeight(), resource.MaxWeight), int64(weight))
}
