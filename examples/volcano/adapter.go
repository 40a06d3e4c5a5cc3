// Package volcano runs resfit as Volcano scheduler plugins, under names
// of their own beside Volcano's (resfit, resfit-resource-strategy-fit,
// resfit-binpack, resfit-nodeorder, resfit-fgd, resfit-frag), on the host
// layer every resfit host shares: the session's
// schema is the cluster's by kubebridge.SchemaFor (its nodes' and pods'
// resource names), a task is its pod as kubebridge.NewTask reads it
// (requests by every rule, pod group, Volcano's scoring annotations,
// devices, the GPU models it accepts), the device view of the GPUs is
// each node's with its tasks' pods holding theirs (kubebridge.NodeDevices)
// and the tasks the session allocates holding theirs
// (kubebridge.HoldDevices), and a plugin's configuration is built into
// scoring.Pipelines over the view (config.Config.BuildFor: its scores and
// its filters apart, as Volcano asks for them), each kept across the
// session's tasks by a scoring.Placer.
//
// Which GPU inside a node a task gets is the sharing stack's choice
// (Volcano's deviceshare plugin, HAMi); which node, resfit's.
//
// What this file holds is the thin layer of Volcano's own forms, tested
// everywhere: decoding the plugin arguments exactly as Volcano hands them
// over (parsed by yaml.v2, every dialect resfit reads), and Volcano's
// amounts (float64: millicores, bytes, and scalar resources in thousandths
// but for pods) in resfit's canonical units without allocating. The glue
// that implements Volcano's framework.Plugin is in plugin.go, built with
// -tags volcano against a Volcano source tree by check.sh.
package volcano

import (
	"fmt"
	"slices"
	"strings"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring/config"
)

// The plugins' names in volcano-scheduler.conf, which resfit's Volcano
// scheduler (cmd/vc-scheduler) registers beside Volcano's own: resfit for a
// whole configuration in resfit's own form (plugins and filters); and one
// name per plugin, resfit-resource-strategy-fit, resfit-binpack and
// resfit-nodeorder (Volcano's arguments, computed as Volcano computes
// them, under names that do not shadow Volcano's own plugins: Volcano
// keeps whichever plugin registers a name last), resfit-fgd and
// resfit-frag (resfit's fragmentation plugins, arguments as
// config.FGDArgs and config.ResfitFragArgs). Volcano sums node-order
// scores as float64, so a whole configuration is one plugin here, its
// weighted total as it is (ResfitFrag's 0..111300 included).
const (
	ResfitPluginName              = config.VolcanoResfit
	ResourceStrategyFitPluginName = "resfit-resource-strategy-fit"
	BinpackPluginName             = "resfit-binpack"
	NodeOrderPluginName           = "resfit-nodeorder"
	FGDPluginName                 = "resfit-fgd"
	ResfitFragPluginName          = "resfit-frag"
)

// PluginNames are every plugin the package provides (config.VolcanoPluginNames).
var PluginNames = config.VolcanoPluginNames()

// Config is a plugin's decoded configuration.
type Config struct {
	// Name is the plugin's name in volcano-scheduler.conf.
	Name string
	// Scoring builds the pipeline: the plugin's scores and the filters it
	// brings (resource-strategy-fit's proportional one, when configured).
	Scoring *config.Config
	// Warnings are the values compatibility mode changed.
	Warnings []string
}

// Decode reads a plugin's arguments as Volcano passes them (a
// framework.Arguments, that is a map[string]interface{} from yaml.v2 with
// nested map[interface{}]interface{}). With compat, it does what Volcano
// does with bad values, and warns; without, bad values are errors. A name
// outside PluginNames is an error.
func Decode(plugin string, arguments map[string]any, compat bool) (*Config, error) {
	if !slices.Contains(PluginNames, plugin) {
		return nil, fmt.Errorf("unknown plugin %q (the package provides %s)", plugin, strings.Join(PluginNames, ", "))
	}
	doc, ok := normalize(arguments).(map[string]any)
	if !ok {
		doc = map[string]any{}
	}
	if plugin == ResfitPluginName {
		return decodeResfit(doc, compat)
	}
	name := config.VolcanoPlugin(plugin)
	args, warnings, err := config.DecodeArgs(name, doc, config.Options{Compat: compat})
	if err != nil {
		return nil, err
	}
	return &Config{
		Name:     plugin,
		Scoring:  &config.Config{Scorers: []config.ScorerConfig{{Name: name, Weight: 1, Args: args}}},
		Warnings: warnings,
	}, nil
}

// decodeResfit reads the resfit plugin's arguments, a configuration in
// resfit's own form. Its NodeResourcesFit filter is left to Volcano, whose
// allocate action checks that a task fits (counting what pipelined and
// releasing tasks free) before it asks the plugins.
func decodeResfit(doc map[string]any, compat bool) (*Config, error) {
	if doc["plugins"] == nil || doc["tiers"] != nil || doc["profiles"] != nil || doc["priorities"] != nil {
		return nil, fmt.Errorf("%s: the arguments are a configuration in resfit's own form: plugins (a list of {name, weight, args}) and optionally filters", ResfitPluginName)
	}
	c, err := config.Decode(doc, config.Options{Compat: compat})
	if err != nil {
		return nil, err
	}
	c.Filters = slices.DeleteFunc(c.Filters, func(f config.FilterConfig) bool { return f.Name == config.NodeResourcesFit })
	return &Config{Name: ResfitPluginName, Scoring: c, Warnings: c.Warnings}, nil
}

// Apart returns the configuration's scores alone and its filters alone, as
// Volcano asks for them apart: node order scores every node it is given,
// whatever the predicates said, and the predicate filters. Each is
// c with the other part turned off (config.ScorerConfig's ScoresOff and
// FiltersOff), so both are built from the one configuration.
func (c *Config) Apart() (scores, filters *config.Config) {
	scores, filters = &config.Config{}, &config.Config{Filters: c.Scoring.Filters}
	for _, s := range c.Scoring.Scorers {
		s.FiltersOff = true
		scores.Scorers = append(scores.Scorers, s)
		s.FiltersOff, s.ScoresOff = false, true
		filters.Scorers = append(filters.Scorers, s)
	}
	return scores, filters
}

// normalize turns yaml.v2's map[interface{}]interface{} into
// map[string]any, recursively.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	}
	return v
}

// Amount is a scalar resource's amount as Volcano keeps it in resfit's
// canonical unit, held to [0, resource.MaxAmount] (resource.ClampFloat):
// Volcano counts every scalar resource in thousandths (a quantity's
// MilliValue) but pods, which it counts whole; resfit counts cpu and
// extended resources in thousandths too, and the others (ephemeral-storage,
// hugepages-*) in whole units.
func Amount(name string, v float64) int64 {
	if resource.UnitOf(name) == resource.Milli || name == resource.Pods {
		return resource.ClampFloat(v)
	}
	return resource.ClampFloat(v / 1000)
}

// Fill writes a Volcano resource amount into dst (one amount per schema
// slot), in canonical units: milliCPU in millicores, memory in bytes,
// scalars by Amount. scalars is Volcano's ScalarResources map as it is
// (any string key type). Resources outside the schema are ignored. It
// does not allocate.
func Fill[K ~string](schema *resource.Schema, dst resource.Vector, milliCPU, memory float64, scalars map[K]float64) {
	clear(dst)
	if i, ok := schema.Slot(resource.CPU); ok {
		dst[i] = resource.ClampFloat(milliCPU)
	}
	if i, ok := schema.Slot(resource.Memory); ok {
		dst[i] = resource.ClampFloat(memory)
	}
	for name, v := range scalars {
		if i, ok := schema.Slot(string(name)); ok {
			dst[i] = Amount(string(name), v)
		}
	}
}
