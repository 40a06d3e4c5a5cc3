package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/resfit/resfit/scoring"
)

// resfit's own kube-scheduler plugins (examples/kubescheduler): what each
// runs with the arguments a profile's pluginConfig gives it, and how
// kube-scheduler scores it. The plugins decode their arguments here, and so
// does a KubeSchedulerConfiguration read by Load, so that both run the
// same configuration.

// KubeResourceStrategyFit is the name of resfit's kube-scheduler plugin that
// runs a whole resfit configuration (ResourceStrategyFit in a profile); its
// arguments are a configuration in any form Load reads.
const KubeResourceStrategyFit = "ResourceStrategyFit"

// kubePlugins are resfit's kube-scheduler plugins: ResourceStrategyFit,
// and the plugins that run one resfit plugin alone under its own name.
var kubePlugins = []string{KubeResourceStrategyFit, FGD, NodeResourcesFitPlus, ScarceResourceAvoidance, Lifetime, LearnedLifetime, NodeSize}

// kubePluginsWithoutFilters are those of them that bring no filters: a
// profile that enables them at score alone leaves nothing out.
var kubePluginsWithoutFilters = []string{NodeResourcesFitPlus, ScarceResourceAvoidance, Lifetime, LearnedLifetime, NodeSize}

// KubeRooms is resfit's kube-scheduler plugin that honours the rooms its
// descheduler holds (PreFilter, Filter, Reserve): it scores nothing, and
// explain leaves it out.
const KubeRooms = "ResfitRooms"

// kubeInTree are the plugins kube-scheduler v1.37.2 builds in
// (frameworkplugins.NewInTreeRegistry; held to it by
// examples/kubescheduler's TestInTreePluginsAreKubes), and kubeDefaultScores
// those its default profile enables at score with their weights
// (getDefaultPlugins) beside NodeResourcesFit and
// NodeResourcesBalancedAllocation, which resfit reads.
var (
	kubeInTree = []string{
		"DefaultBinder", "DefaultPreemption", "DeferredPodScheduling", "DynamicResources", "GangScheduling",
		"ImageLocality", "InterPodAffinity", "NodeAffinity", "NodeDeclaredFeatures", "NodeName", "NodePorts",
		NodeResourcesBalancedAllocation, NodeResourcesFit, "NodeUnschedulable", "NodeVolumeLimits",
		"PodGroupPodsCount", "PodTopologySpread", "PrioritySort", "SchedulingGates", "TaintToleration",
		"TopologyPlacementGenerator", "VolumeBinding", "VolumeRestrictions", "VolumeZone",
	}
	kubeDefaultScores = []string{"TaintToleration", "NodeAffinity", "VolumeBinding", "PodTopologySpread", "InterPodAffinity", "DynamicResources", "ImageLocality"}
)

// KubeInTreePlugins are kubeInTree, for the test that holds them to
// kube-scheduler's registry.
func KubeInTreePlugins() []string { return slices.Clone(kubeInTree) }

// KubeResfitPlugins are resfit's kube-scheduler plugins this package
// reads (KubePlugin) and KubeRooms, for the test that holds them to what
// examples/kubescheduler registers.
func KubeResfitPlugins() []string { return append(slices.Clone(kubePlugins), KubeRooms) }

// KubeScale is the score scale of a kube-scheduler plugin (fwk.MaxNodeScore).
const KubeScale = 100

// KubePluginArgs are one of resfit's kube-scheduler plugins with the
// configuration it runs: for ResourceStrategyFit the configuration its
// arguments give, for each of the others (FGD, NodeResourcesFitPlus,
// ScarceResourceAvoidance, ResfitLifetime, ResfitLearnedLifetime,
// ResfitNodeSize: kubePlugins) that plugin alone at weight 1 with its
// arguments. kube-scheduler scores
// the plugin 0 to 100: the configuration's total over its maximum, rounded
// (scoring.ScaleTotal); the plugin filters with the configuration's
// filters, and those its plugins bring, where the profile enables it at
// filter.
type KubePluginArgs struct {
	Plugin string
	Config *Config
}

// KubePlugin decodes the arguments a KubeSchedulerConfiguration profile's
// pluginConfig gives resfit's kube-scheduler plugin of that name (nil or
// empty args: its defaults) into the configuration it runs: for
// ResourceStrategyFit a configuration in any form Load reads (its field
// paths start at the arguments), for each of the others that plugin alone
// at weight 1. An unknown name is an error, and so are plugins in
// ResourceStrategyFit's configuration that ask the host's one lifetime
// model for options that do not go together (Config.LifetimeModel).
func KubePlugin(name string, args map[string]any, opts Options) (*Config, error) {
	d := &decoder{compat: opts.Compat}
	a, known := d.kubePlugin("", name, args)
	if !known {
		return nil, fmt.Errorf("unknown plugin %q; resfit's kube-scheduler plugins are %s", name, strings.Join(kubePlugins, ", "))
	}
	d.oneLifetimeModel(a.Config)
	if err := d.err(); err != nil {
		return nil, err
	}
	a.Config.Warnings = d.warns
	return a.Config, nil
}

// kubePlugin decodes the arguments of resfit's kube-scheduler plugin name
// at path; known is false for any other name.
func (d *decoder) kubePlugin(path, name string, raw any) (KubePluginArgs, bool) {
	if !slices.Contains(kubePlugins, name) {
		return KubePluginArgs{}, false
	}
	a := KubePluginArgs{Plugin: name, Config: &Config{}}
	if m, ok := raw.(map[string]any); ok && (m["apiVersion"] != nil || m["kind"] != nil) {
		// kube-scheduler hands an out-of-tree plugin its args as they were
		// written, type fields included.
		m = maps.Clone(m)
		delete(m, "apiVersion")
		delete(m, "kind")
		raw = m
	}
	if name != KubeResourceStrategyFit {
		args, notes, _ := d.plugin(path, name, raw)
		notes[""] = path
		a.Config.Scorers = []ScorerConfig{{Name: name, Weight: 1, Args: args, Sources: notes}}
		return a, true
	}
	doc, ok := raw.(map[string]any)
	if raw != nil && !ok {
		d.object(path, raw) // reports the value
		return a, true
	}
	if len(doc) == 0 { // kube-scheduler hands a plugin without args nothing
		d.missing(path, "ResourceStrategyFit needs a configuration (plugins: ...) as its args")
		return a, true
	}
	saved := d.root
	d.root = path
	defer func() { d.root = saved }()
	if c := d.dialect(doc, Options{}); c != nil { // a profile in it: the first
		a.Config = c
	}
	return a, true
}

func (a KubePluginArgs) plugin() string { return a.Plugin }

// build makes the plugin's one scorer, its configuration's pipeline scaled
// to 0..KubeScale, and brings the configuration's filters: for
// ResourceStrategyFit and FGD, which filter with the host's device view,
// the DeviceShare filter first.
func (a KubePluginArgs) build(name string, t target) ([]scoring.WeightedScorer, []scoring.Filter, error) {
	noDeviceShare := a.Plugin != KubeResourceStrategyFit && a.Plugin != FGD
	p, err := a.Config.BuildFor(t.schema, Host{Devices: t.devices, NoDeviceShare: noDeviceShare, Lifetimes: t.lifetimes})
	if err != nil {
		return nil, nil, err
	}
	s, err := scoring.NewScaledScorer(name, p, KubeScale)
	if err != nil {
		return nil, nil, err
	}
	return []scoring.WeightedScorer{{Scorer: s, Weight: 1}}, s.Filters(), nil
}

func (a KubePluginArgs) readsLifetimes() bool { return a.Config.ReadsLifetimes() }

// canonical writes the plugin's arguments: ResourceStrategyFit's whole
// configuration (its filters and plugins), or the one plugin's arguments.
// Their comments are already set.
func (a KubePluginArgs) canonical() []yamlNode {
	if a.Plugin != KubeResourceStrategyFit {
		if len(a.Config.Scorers) != 1 {
			return nil
		}
		s := a.Config.Scorers[0]
		args := s.Args.canonical()
		comment(args, "args", s.Sources, false)
		return args
	}
	return a.Config.nodes()
}
