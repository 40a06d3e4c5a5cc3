// Package config reads scoring configurations in the forms users deploy
// them — resfit's own, Volcano's volcano-scheduler.conf and plugin
// arguments, kube-scheduler's KubeSchedulerConfiguration (Koordinator's
// plugins included), the legacy Policy of the RequestedToCapacityRatio KEP
// — into one validated Config, and builds a scoring.Pipeline from it.
//
// Each dialect is in a file of its own: resfit's form (native.go), Volcano
// (volcano.go, with its scarce-resource avoidance in sra.go),
// kube-scheduler (kube.go), Koordinator (koordinator.go) and the legacy
// Policy (policy.go); resfit's own fragmentation plugins, FGD and
// ResfitFrag, which every form can name, are in frag.go; resfit's
// kube-scheduler plugins (ResourceStrategyFit, which runs a whole
// configuration, and the plugins that run one alone), as a profile enables
// them and as the plugins decode their arguments (KubePlugin), in
// kubeplugins.go. A document goes one way through them: Load
// (config.go) finds the configuration in its file (manifest.go: bare, in a
// ConfigMap, among manifests), decode (config.go) picks the dialect by its
// top-level fields, the dialect's file reads its plugin list and hands each
// plugin's arguments to scorerArgs (config.go), which calls that plugin's
// decoder, in the file of the dialect the plugin comes from. Each plugin's
// arguments type is next to its decoder and builds its scorers and
// filters. All share one small decoder (decode.go, with resource lists in
// resources.go) that carries the field path of every value, so that every
// bad value is reported, all at once, as path, rule and value:
//
//	resources["nvidia.com/gpu"].weight: must be > 0, got -1
//
// Options.Compat instead reproduces what Volcano silently does with bad
// values, with a warning per changed value. Config.Canonical (render.go)
// writes back what was understood. Config.BuildFor builds the pipeline for
// what a host gives beside the schema (its device view, Host).
package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/lifetime"
)

// Plugin names, as upstream configurations spell them.
const (
	NodeResourcesFit                = scoring.NodeResourcesFit
	NodeResourcesBalancedAllocation = "NodeResourcesBalancedAllocation"
	NodeResourcesFitPlus            = "NodeResourcesFitPlus"
	ScarceResourceAvoidance         = "ScarceResourceAvoidance"
	ResourceStrategyFit             = "resource-strategy-fit"
	Binpack                         = "binpack"
	NodeOrder                       = "nodeorder"
	// Legacy scheduler Policy priorities (the KEP's configuration form).
	RequestedToCapacityRatioPriority = "RequestedToCapacityRatioPriority"
	MostRequestedPriority            = "MostRequestedPriority"
	LeastRequestedPriority           = "LeastRequestedPriority"
	BalancedResourceAllocation       = "BalancedResourceAllocation"
)

// Names of the pipeline parts that scarce-resource avoidance adds.
const (
	SRARetention    = scoring.SRARetention
	SRAProportional = scoring.SRAProportional
)

// Options control decoding.
type Options struct {
	// Compat reproduces what Volcano silently does with bad values instead
	// of failing: a resource weight ≤ 0 becomes 1, an unknown strategy type
	// LeastAllocated, a negative plugin weight 10, an invalid wildcard is
	// dropped. Each change is reported in Config.Warnings.
	Compat bool
	// Profile picks the KubeSchedulerConfiguration profile by schedulerName
	// (default-scheduler for a profile without one); it may be empty only
	// when there is one profile, and is not looked at in other forms.
	Profile string
}

// Config is a validated scoring configuration: which filters run and which
// scorers, with their plugin weights and arguments. Build turns it into a
// Pipeline for a schema.
type Config struct {
	Filters []FilterConfig
	Scorers []ScorerConfig
	// Warnings lists what was skipped or, in compatibility mode, changed.
	Warnings []string
	// Source says where Load found the configuration when it was inside a
	// ConfigMap or among other documents; empty otherwise.
	Source string
	// NoHostDeviceShare leaves the host's DeviceShare filter out: only the
	// configuration's plugins filter, as in a KubeSchedulerConfiguration
	// profile, where resfit's plugins that filter with the device view
	// (ResourceStrategyFit and FGD, KubePluginArgs) bring it themselves.
	NoHostDeviceShare bool
	// SchedulerName is the schedulerName of the KubeSchedulerConfiguration
	// profile read (default-scheduler for a profile without one): the
	// scheduler whose pods the configuration scores. It is empty in the
	// other forms.
	SchedulerName string
	// KubeScorers are, for a KubeSchedulerConfiguration profile, kube's own
	// plugins that score in it beside resfit's (its default profile's
	// TaintToleration, NodeAffinity, VolumeBinding, PodTopologySpread,
	// InterPodAffinity, DynamicResources and ImageLocality unless
	// disabled, and those it enables): they run
	// in kube-scheduler, and resfit leaves them out of what it scores.
	KubeScorers []string
}

// FilterConfig enables one filter.
type FilterConfig struct {
	Name string
	Args FilterArgs
	// Source says where the filter was enabled, or why it runs.
	Source string
}

// ScorerConfig enables one scoring plugin with its weight in the total.
type ScorerConfig struct {
	Name   string
	Weight float64
	Args   ScorerArgs
	// ScoresOff leaves the plugin's scores out and FiltersOff the filters
	// it brings, as Volcano's enableNodeOrder: false and enablePredicate:
	// false do.
	ScoresOff, FiltersOff bool
	// Sources says where each value was read: the key "" is the plugin's
	// entry, "weight" its weight, and a path under "args" (as Canonical
	// writes it, args.resources["nvidia.com/gpu"].weight) an argument.
	// A value not listed is a default.
	Sources map[string]string
}

// ScorerArgs are one scoring plugin's decoded arguments. A plugin builds
// every part it stands for through one method: its scorers, with weights
// relative to the plugin's (resource-strategy-fit with sra retention is two
// scorers), and the filters it brings (its sra proportional filter).
type ScorerArgs interface {
	build(name string, t target) ([]scoring.WeightedScorer, []scoring.Filter, error)
	// plugin is the name resfit's own form knows the plugin by, and
	// canonical its arguments in that form, every default filled in.
	plugin() string
	canonical() []yamlNode
}

// FilterArgs are one filter's decoded arguments.
type FilterArgs interface {
	buildFilter(schema *resource.Schema) (scoring.Filter, error)
}

// scorer is a plugin's single scorer at the plugin's own weight.
func scorer(s scoring.Scorer, err error) ([]scoring.WeightedScorer, []scoring.Filter, error) {
	if err != nil {
		return nil, nil, err
	}
	return []scoring.WeightedScorer{{Scorer: s, Weight: 1}}, nil, nil
}

// Host is what a host gives a configuration's plugins beside the schema.
type Host struct {
	// Devices is the host's device view (resource.Devices), its rows the
	// rows of the tables the pipeline scores, kept up to date by the host
	// (a host's cache keeps one: kubebridge/cache). With it the pipeline checks a
	// task's devices one by one (the DeviceShare filter, right after the
	// configured filters), and the plugins that read devices (FGD,
	// ResfitFrag) can be built; nil: neither.
	Devices *resource.Devices
	// NoDeviceShare leaves the DeviceShare filter out, for a host that
	// asks for a configuration's scores and filters apart (Volcano's node
	// order scores every node it is given, whatever the predicates said).
	NoDeviceShare bool
	// Lifetimes is the host's view of when its nodes empty (a
	// lifetime.Tracker's Nodes), its rows the tables' rows, with which
	// ResfitFrag's lifetime term is built; nil leaves the term out.
	Lifetimes *lifetime.Nodes
}

// target is what a plugin is built for.
type target struct {
	schema    *resource.Schema
	devices   *resource.Devices
	lifetimes *lifetime.Nodes
}

// Build makes the pipeline for a schema, for a host without a device view
// (BuildFor with Host{}).
func (c *Config) Build(schema *resource.Schema) (*scoring.Pipeline, error) {
	return c.BuildFor(schema, Host{})
}

// BuildFor makes the pipeline for a schema and what the host gives: the
// configured filters, the DeviceShare filter over the host's device view,
// then each scoring plugin's scorers (weighted by its weight) and the
// filters it brings. Without an FGD or ResfitFrag plugin the result is
// immutable and safe for concurrent use; with one, it remembers results
// for the device view and serves one scheduling loop (frag.Scorer).
func (c *Config) BuildFor(schema *resource.Schema, host Host) (*scoring.Pipeline, error) {
	var errs []string
	var filters, brought []scoring.Filter
	for i, f := range c.Filters {
		built, err := f.Args.buildFilter(schema)
		if err != nil {
			errs = append(errs, fmt.Sprintf("filters[%d] (%s): %v", i, f.Name, err))
			continue
		}
		filters = append(filters, built)
	}
	if host.Devices != nil && !host.NoDeviceShare && !c.NoHostDeviceShare {
		deviceShare, err := scoring.NewDeviceFilter(host.Devices)
		if err != nil {
			return nil, err
		}
		filters = append(filters, deviceShare)
	}
	t := target{schema: schema, devices: host.Devices, lifetimes: host.Lifetimes}
	var scorers []scoring.WeightedScorer
	for i, s := range c.Scorers {
		parts, plugged, err := s.Args.build(s.Name, t)
		if err != nil {
			errs = append(errs, fmt.Sprintf("scorers[%d] (%s): %v", i, s.Name, err))
			continue
		}
		if !s.ScoresOff {
			for _, p := range parts {
				scorers = append(scorers, scoring.WeightedScorer{Scorer: p.Scorer, Weight: p.Weight * s.Weight})
			}
		}
		if !s.FiltersOff {
			brought = append(brought, plugged...)
		}
	}
	if errs != nil {
		return nil, errors.New(strings.Join(errs, "\n"))
	}
	return scoring.NewPipeline(schema, append(filters, brought...), scorers)
}

// Load decodes a configuration from YAML or JSON. It recognises, by their
// top-level fields:
//
//   - resfit's own form: plugins (a list of {name, weight, args}) and
//     optionally filters (a list of names; default [NodeResourcesFit]);
//   - a Volcano scheduler configuration (volcano-scheduler.conf): tiers;
//   - a KubeSchedulerConfiguration (Koordinator's included): profiles, or
//     its kind;
//   - a legacy kube-scheduler Policy, as in the RequestedToCapacityRatio
//     KEP: priorities.
//
// Each may also come as users keep it: inside a ConfigMap (any data key;
// field paths then start at data["<key>"]), or as the one configuration
// (or ConfigMap holding one) among the documents of a multi-document file
// of manifests (paths start at "(document N)"). Config.Source says where
// it was found.
//
// Every bad value is reported with its field path, all of them at once, in
// a *ConfigError: values of the wrong kind, out of their documented range
// (every weight is at most resource.MaxWeight), NaN or infinite; a mapping
// key that is not a string; a key given twice in one mapping (in
// compatibility mode the last wins, with a warning).
func Load(data []byte, opts Options) (*Config, error) {
	d := &decoder{compat: opts.Compat}
	doc, source, ok := d.file(data)
	if !ok {
		return nil, d.err()
	}
	c, err := d.decode(doc, opts)
	if err != nil {
		return nil, err
	}
	c.Source = source
	return c, nil
}

// Decode is Load for an already decoded document (from encoding/json, or
// YAML decoded into map[string]any).
func Decode(doc map[string]any, opts Options) (*Config, error) {
	return (&decoder{compat: opts.Compat}).decode(doc, opts)
}

func (d *decoder) decode(doc map[string]any, opts Options) (*Config, error) {
	c := d.dialect(doc, opts)
	if c != nil {
		d.oneLifetimeModel(c)
	}
	if err := d.err(); err != nil {
		return nil, err
	}
	c.Warnings = d.warns
	return c, nil
}

// dialect reads a document in the dialect its top-level fields name; nil
// when they name none (an error is then reported).
func (d *decoder) dialect(doc map[string]any, opts Options) *Config {
	var c *Config
	switch {
	case doc["plugins"] != nil && doc["profiles"] == nil:
		c = d.native(doc)
	case doc["tiers"] != nil:
		c = d.volcanoConf(doc)
	case doc["profiles"] != nil || doc["kind"] == "KubeSchedulerConfiguration":
		c = d.kubeConf(doc, opts.Profile)
	case doc["priorities"] != nil:
		c = d.policy(doc)
	default:
		d.missing(d.rootPath(), "unrecognised configuration: want plugins (resfit), tiers (Volcano), profiles (KubeSchedulerConfiguration) or priorities (Policy)")
	}
	return c
}

// DecodeArgs decodes one plugin's upstream arguments, as a scheduler hands
// them to a plugin (Volcano's framework.Arguments, a pluginConfig's args).
// Its field paths start at the arguments.
func DecodeArgs(plugin string, args map[string]any, opts Options) (ScorerArgs, []string, error) {
	d := &decoder{compat: opts.Compat}
	a, known := d.scorerArgs("", plugin, args)
	if !known {
		return nil, nil, fmt.Errorf("unknown plugin %q", plugin)
	}
	if err := d.err(); err != nil {
		return nil, nil, err
	}
	return a, d.warns, nil
}

// plugin decodes one scoring plugin's arguments with the notes of where
// each value was read.
func (d *decoder) plugin(path, name string, raw any) (ScorerArgs, map[string]string, bool) {
	saved := d.notes
	d.notes = map[string]string{}
	defer func() { d.notes = saved }()
	args, known := d.scorerArgs(path, name, raw)
	return args, d.notes, known
}

// scorerArgs decodes a known scoring plugin's arguments; known is false for
// a plugin resfit does not provide.
func (d *decoder) scorerArgs(path, plugin string, raw any) (ScorerArgs, bool) {
	switch plugin {
	case ResourceStrategyFit:
		return d.resourceStrategyFit(path, raw), true
	case Binpack:
		return d.binpack(path, raw), true
	case NodeOrder:
		return d.nodeOrder(path, raw), true
	case NodeResourcesFitPlus:
		return d.fitPlus(path, raw), true
	case NodeResourcesFit:
		return d.nodeResourcesFit(path, raw), true
	case NodeResourcesBalancedAllocation:
		return d.balanced(path, raw), true
	case PackLeastUsed:
		return d.packLeastUsed(path, raw), true
	case ScarceResourceAvoidance:
		return d.scarceResourceAvoidance(path, raw), true
	case FGD:
		a, _ := d.fgd(path, raw)
		return a, true
	case ResfitFrag:
		return d.resfitFrag(path, raw), true
	case Lifetime:
		return d.lifetimeArgs(path, raw), true
	case LearnedLifetime:
		return d.learnedLifetimeArgs(path, raw), true
	case NodeSize:
		return d.nodeSizeArgs(path, raw), true
	}
	return nil, false
}
