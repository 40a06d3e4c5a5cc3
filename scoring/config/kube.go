package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/strategy"
)

// kube-scheduler: KubeSchedulerConfiguration, and the arguments of
// NodeResourcesFit (with RequestedToCapacityRatio) and
// NodeResourcesBalancedAllocation.

// Scoring strategy types of kube-scheduler's NodeResourcesFit.
const (
	ScoringMostAllocated            = "MostAllocated"
	ScoringLeastAllocated           = "LeastAllocated"
	ScoringRequestedToCapacityRatio = "RequestedToCapacityRatio"
)

// NodeResourcesFitArgs are kube-scheduler's NodeResourcesFitArgs.
type NodeResourcesFitArgs struct {
	Type      string // ScoringMostAllocated, ScoringLeastAllocated or ScoringRequestedToCapacityRatio
	Resources []strategy.Resource
	Shape     []strategy.ShapePoint // RequestedToCapacityRatio only
	// IgnoredResources and IgnoredResourceGroups are not checked by the
	// NodeResourcesFit filter.
	IgnoredResources, IgnoredResourceGroups []string
}

func (a NodeResourcesFitArgs) build(name string, t target) ([]scoring.WeightedScorer, []scoring.Filter, error) {
	var s scoring.RowsScorer
	var err error
	switch a.Type {
	case ScoringRequestedToCapacityRatio:
		s, err = strategy.NewRequestedToCapacityRatio(t.schema, a.Resources, a.Shape)
	default:
		var typ strategy.Type
		if typ, err = strategy.ParseType(a.Type); err == nil {
			s, err = strategy.NewKubeFit(t.schema, typ, a.Resources)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	return scorer(scoring.NewStrategyScorer(name, s, false), nil)
}

func (a NodeResourcesFitArgs) buildFilter(*resource.Schema) (scoring.Filter, error) {
	return scoring.NewFitFilter(a.IgnoredResources, a.IgnoredResourceGroups), nil
}

// BalancedAllocationArgs are kube-scheduler's
// NodeResourcesBalancedAllocationArgs.
type BalancedAllocationArgs struct {
	Resources []string
}

func (a BalancedAllocationArgs) build(name string, t target) ([]scoring.WeightedScorer, []scoring.Filter, error) {
	b, err := strategy.NewBalancedAllocation(t.schema, a.Resources)
	if err != nil {
		return nil, nil, err
	}
	return scorer(scoring.NewStrategyScorer(name, b, true), nil)
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
	d.ignored(path, m, &a)
	spath := join(path, "scoringStrategy")
	ss, ok := d.object(spath, m["scoringStrategy"])
	if !ok {
		return a
	}
	d.only(spath, ss, strictFields, "type", "resources", "requestedToCapacityRatio")
	if raw, present := ss["type"]; present {
		d.note("scoringStrategy.type", join(spath, "type"))
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
		d.note("scoringStrategy.resources", join(spath, "resources"))
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
			d.note("scoringStrategy.requestedToCapacityRatio.shape", join(rpath, "shape"))
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
	d.note("scoringStrategy.type", path)
	d.note("scoringStrategy.requestedToCapacityRatio.shape", join(path, "shape"))
	a.Shape = d.shape(join(path, "shape"), m["shape"])
	if m["resources"] != nil {
		d.note("scoringStrategy.resources", join(path, "resources"))
	}
	if rs := d.namedWeights(join(path, "resources"), m["resources"], "resource"); len(rs) > 0 {
		a.Resources = rs
	}
	return a
}

// balanced decodes NodeResourcesBalancedAllocationArgs: resources [{name,
// weight: 1}] (default cpu and memory).
func (d *decoder) balanced(path string, raw any) ScorerArgs {
	return BalancedAllocationArgs{Resources: d.resourceNames(path, raw, []string{resource.CPU, resource.Memory})}
}

// resourceNames reads {resources: [{name, weight: 1}]}, the arguments of
// NodeResourcesBalancedAllocation and of the scorers written like it, and
// returns the names, or defaults when none are given (nil when the
// arguments are not an object).
func (d *decoder) resourceNames(path string, raw any, defaults []string, known ...string) []string {
	m, ok := d.object(path, raw)
	if !ok {
		return nil
	}
	d.only(path, m, strictFields, append([]string{"resources"}, known...)...)
	names := defaults
	if raw, present := m["resources"]; present {
		d.note("resources", join(path, "resources"))
		rs := d.namedWeights(join(path, "resources"), raw, "name")
		for i, r := range rs {
			if r.Weight != 1 {
				d.fail(join(index(join(path, "resources"), i), "weight"), "must be 1", r.Weight)
			}
		}
		if len(rs) > 0 {
			names = nil
			for _, r := range rs {
				names = append(names, r.Name)
			}
		}
	}
	return names
}

// kubeConf reads a KubeSchedulerConfiguration profile: the score plugins it
// enables (kube-scheduler's defaults NodeResourcesFit and
// NodeResourcesBalancedAllocation, weight 1, unless disabled) with their
// pluginConfig args, and the NodeResourcesFit filter unless disabled.
// Without profiles it is kube-scheduler's default profile; with several,
// profileName must name one (a profile without a schedulerName is
// default-scheduler, as kube-scheduler names it).
func (d *decoder) kubeConf(doc map[string]any, profileName string) *Config {
	c := &Config{NoHostDeviceShare: true}
	d.kubeOuter(doc)
	profiles, _ := d.list(d.at("profiles"), doc["profiles"])
	if len(profiles) == 0 && (profileName == "" || profileName == "default-scheduler") {
		profiles = []any{map[string]any{}} // kube-scheduler's default profile
	}
	var names []string
	pi := -1
	for i, p := range profiles {
		m, _ := p.(map[string]any)
		name := kubeProfileName(m)
		names = append(names, formatValue(name))
		if pi < 0 && m != nil && (profileName == "" || name == profileName) {
			pi = i
		}
	}
	switch {
	case len(profiles) > 1 && profileName == "":
		d.missing(d.at("profiles"), fmt.Sprintf("%d profiles (%s): name the one to read by its schedulerName (kubectl resfit --profile)", len(profiles), strings.Join(names, ", ")))
		return c
	case pi < 0:
		d.missing(d.at("profiles"), fmt.Sprintf("no profile named %s; the profiles are %s", formatValue(profileName), strings.Join(names, ", ")))
		return c
	}
	path := index(d.at("profiles"), pi)
	profile, _ := d.object(path, profiles[pi])
	c.SchedulerName = kubeProfileName(profile)
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
	filterEnabled, filterDisabled := d.extensionPoint(join(path, "plugins"), plugins, "filter")
	off := func(name string, lists ...[]string) bool {
		for _, l := range lists {
			if slices.Contains(l, "*") || slices.Contains(l, name) {
				return true
			}
		}
		return false
	}
	const defaultProfile = "kube-scheduler's default profile"
	type entry struct {
		name           string
		weight         float64
		source, weighs string // where it was enabled and its weight set
	}
	var order []entry
	for _, def := range []string{NodeResourcesFit, NodeResourcesBalancedAllocation} {
		if !off(def, disabled, multiDisabled) {
			order = append(order, entry{def, 1, defaultProfile, defaultProfile})
		}
	}
	for _, e := range append(multiEnabled, enabled...) {
		w, weighs := float64(e.weight), join(e.path, "weight")
		if !e.hasWeight {
			weighs = "kube-scheduler's default for an unset weight"
		}
		if w == 0 { // kube-scheduler: an unset or zero weight is 1
			w = 1
		}
		replaced := false
		for i := range order {
			if order[i].name == e.name {
				order[i].weight, order[i].source, order[i].weighs, replaced = w, e.path, weighs, true
			}
		}
		if !replaced {
			order = append(order, entry{e.name, w, e.path, weighs})
		}
	}
	var fitArgs ScorerArgs = NodeResourcesFitArgs{Type: ScoringLeastAllocated, Resources: defaultKubeResources()}
	fitNotes := map[string]string{}
	if raw, ok := args[NodeResourcesFit]; ok {
		fitArgs, fitNotes, _ = d.plugin(cfgPath[NodeResourcesFit], NodeResourcesFit, raw)
	}
	filters := func(name string) bool {
		return !off(name, filterDisabled, multiDisabled) &&
			(slices.ContainsFunc(filterEnabled, func(e enabledPlugin) bool { return e.name == name }) ||
				slices.ContainsFunc(multiEnabled, func(e enabledPlugin) bool { return e.name == name }))
	}
	var notResfits []string // kube's plugins that score beside resfit's
	for _, def := range kubeDefaultScores {
		if !off(def, disabled, multiDisabled) && !slices.ContainsFunc(order, func(e entry) bool { return e.name == def }) {
			notResfits = append(notResfits, def)
		}
	}
	for _, e := range order {
		a, notes, known := fitArgs, fitNotes, true
		var filtersOff bool
		switch {
		case e.name == KubeRooms:
			continue // it scores nothing
		case slices.Contains(kubeInTree, e.name) && e.name != NodeResourcesFit && e.name != NodeResourcesBalancedAllocation:
			notResfits = append(notResfits, e.name)
			continue

		case slices.Contains(kubePlugins, e.name):
			// resfit's own kube-scheduler plugins, decoded as the plugin
			// decodes its arguments.
			apath, given := cfgPath[e.name]
			if !given {
				apath = join(path, "pluginConfig")
			}
			a, known = d.kubePlugin(apath, e.name, args[e.name])
			notes = map[string]string{}
			if filtersOff = !filters(e.name) && !slices.Contains(kubePluginsWithoutFilters, e.name); filtersOff {
				d.warn("%s: %s scores but is not enabled at filter; kube-scheduler then scores 0 where its filters reject a node, and explain leaves its filters out (enable it under multiPoint)", join(path, "plugins"), e.name)
			}
		case e.name != NodeResourcesFit:
			a, notes, known = d.plugin(cfgPath[e.name], e.name, args[e.name])
		}
		if !known {
			// kube-scheduler does not start with it.
			d.fail(join(e.source, "name"), fmt.Sprintf("no such plugin: kube-scheduler v1.37.2 builds in %s, and resfit's build adds %s",
				strings.Join(kubeInTree, ", "), strings.Join(append(slices.Clone(kubePlugins), KubeRooms), ", ")), e.name)
			continue
		}
		if !slices.Contains(kubeInTree, e.name) && !slices.Contains(kubePlugins, e.name) {
			d.warn("%s: %s is a resfit plugin that resfit's kube-scheduler does not register (it registers %s): kubectl resfit reads it, kube-scheduler does not start with it", join(e.source, "name"), e.name, strings.Join(append(slices.Clone(kubePlugins), KubeRooms), ", "))
		}
		notes = maps.Clone(notes)
		notes[""], notes["weight"] = e.source, e.weighs
		d.weightProduct(e.weighs, e.weight, a)
		c.Scorers = append(c.Scorers, ScorerConfig{Name: e.name, Weight: e.weight, Args: a, Sources: notes, FiltersOff: filtersOff})
	}
	c.KubeScorers = notResfits
	if !off(NodeResourcesFit, filterDisabled, multiDisabled) {
		fa, _ := fitArgs.(NodeResourcesFitArgs)
		c.Filters = append(c.Filters, FilterConfig{Name: NodeResourcesFit, Args: NodeResourcesFitArgs{IgnoredResources: fa.IgnoredResources, IgnoredResourceGroups: fa.IgnoredResourceGroups}, Source: defaultProfile})
	}
	return c
}

// enabledPlugin is one entry of plugins.<point>.enabled.
type enabledPlugin struct {
	name      string
	weight    int64
	path      string
	hasWeight bool
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
			e := enabledPlugin{name: name, path: ipath}
			if raw, present := pm["weight"]; present {
				e.hasWeight = true
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

func (NodeResourcesFitArgs) plugin() string { return NodeResourcesFit }

func (a NodeResourcesFitArgs) canonical() []yamlNode {
	ss := mapping("scoringStrategy", yamlNode{key: "type", scalar: a.Type}, namedNodes("resources", a.Resources))
	if a.Type == ScoringRequestedToCapacityRatio {
		shape := yamlNode{key: "shape", seq: true, items: []yamlNode{}}
		for _, p := range a.Shape {
			shape.items = append(shape.items, mapping("", yamlNode{key: "utilization", scalar: p.Utilization}, yamlNode{key: "score", scalar: p.Score}))
		}
		ss.items = append(ss.items, mapping("requestedToCapacityRatio", shape))
	}
	return []yamlNode{ss, sequence("ignoredResources", a.IgnoredResources), sequence("ignoredResourceGroups", a.IgnoredResourceGroups)}
}

func (BalancedAllocationArgs) plugin() string { return NodeResourcesBalancedAllocation }

func (a BalancedAllocationArgs) canonical() []yamlNode {
	rs := make([]strategy.Resource, len(a.Resources))
	for i, n := range a.Resources {
		rs[i] = strategy.Resource{Name: n, Weight: 1}
	}
	return []yamlNode{namedNodes("resources", rs)}
}

// namedNodes writes kube-scheduler's [{name, weight}].
func namedNodes(key string, rs []strategy.Resource) yamlNode {
	n := yamlNode{key: key, seq: true, items: []yamlNode{}}
	for _, r := range rs {
		n.items = append(n.items, mapping("", yamlNode{key: "name", scalar: r.Name}, yamlNode{key: "weight", scalar: r.Weight}))
	}
	return n
}

// ignored reads NodeResourcesFitArgs' ignoredResources and
// ignoredResourceGroups from m, the arguments at path.
func (d *decoder) ignored(path string, m map[string]any, a *NodeResourcesFitArgs) {
	for _, f := range []struct {
		k   string
		dst *[]string
	}{{"ignoredResources", &a.IgnoredResources}, {"ignoredResourceGroups", &a.IgnoredResourceGroups}} {
		if m[f.k] != nil {
			d.note(f.k, join(path, f.k))
		}
		list, _ := d.list(join(path, f.k), m[f.k])
		for i, item := range list {
			if s, ok := d.str(index(join(path, f.k), i), item); ok {
				*f.dst = append(*f.dst, s)
			}
		}
	}
}

// The fields of kube-scheduler v1.37's KubeSchedulerConfiguration
// (kubescheduler.config.k8s.io/v1), its profiles, their plugins (the
// extension points), plugin sets, plugins and plugin configs, as its
// loader decodes them strictly: any other key is an error there, and here.
var (
	kubeConfigFields = []string{"parallelism", "leaderElection", "clientConnection", "enableProfiling", "enableContentionProfiling",
		"percentageOfNodesToScore", "podInitialBackoffSeconds", "podMaxBackoffSeconds", "profiles", "extenders", "delayCacheUntilActive"}
	kubeProfileFields   = []string{"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"}
	kubeExtensionPoints = []string{"preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "reserve", "permit",
		"preBind", "bind", "postBind", "multiPoint", "placementGenerate", "placementScore", "podGroupPostFilter"}
	kubePluginSetFields    = []string{"enabled", "disabled"}
	kubePluginFields       = []string{"name", "weight"}
	kubePluginConfigFields = []string{"name", "args"}
)

// KubeSchedulerAPIVersion is the one version of KubeSchedulerConfiguration
// kube-scheduler v1.37 reads.
const KubeSchedulerAPIVersion = "kubescheduler.config.k8s.io/v1"

// kubeOuter checks a KubeSchedulerConfiguration's outer layer as
// kube-scheduler's loader does (strict decoding, then
// ValidateKubeSchedulerConfiguration): its version and kind where given
// (a document of profiles alone, without either, is read as a
// configuration's body), every key at every level down to the plugins and
// their configs, the profiles' names (defaulted to default-scheduler, none
// twice), each profile's plugin configs (none twice), and the numbers kube
// validates. The plugins' arguments are checked where each is read.
func (d *decoder) kubeOuter(doc map[string]any) {
	if v, ok := doc["apiVersion"]; ok && v != KubeSchedulerAPIVersion {
		d.fail(d.at("apiVersion"), "kube-scheduler v1.37 reads "+KubeSchedulerAPIVersion+" only", v)
	}
	if v, ok := doc["kind"]; ok && v != "KubeSchedulerConfiguration" {
		d.fail(d.at("kind"), "must be KubeSchedulerConfiguration", v)
	}
	d.only(d.root, doc, strictFields, kubeConfigFields...)
	d.kubePercentage(d.at("percentageOfNodesToScore"), doc["percentageOfNodesToScore"])
	backoff := map[string]int64{"podInitialBackoffSeconds": 1, "podMaxBackoffSeconds": 10} // kube's defaults
	for _, f := range []string{"parallelism", "podInitialBackoffSeconds", "podMaxBackoffSeconds"} {
		if v, ok := doc[f]; ok {
			n, ok := d.weight(d.at(f), v, strictInt)
			if ok && n <= 0 && f != "podMaxBackoffSeconds" {
				d.fail(d.at(f), "must be greater than 0", v)
			}
			if ok {
				backoff[f] = n
			}
		}
	}
	if backoff["podMaxBackoffSeconds"] < backoff["podInitialBackoffSeconds"] {
		d.fail(d.at("podMaxBackoffSeconds"), fmt.Sprintf("must be at least podInitialBackoffSeconds (%v)", backoff["podInitialBackoffSeconds"]), backoff["podMaxBackoffSeconds"])
	}
	profiles, _ := d.list(d.at("profiles"), doc["profiles"])
	seen := map[string]bool{}
	for i, p := range profiles {
		path := index(d.at("profiles"), i)
		m, ok := d.object(path, p)
		if !ok {
			continue
		}
		d.only(path, m, strictFields, kubeProfileFields...)
		name := kubeProfileName(m)
		switch v, present := m["schedulerName"]; {
		case !present && len(profiles) > 1: // kube names only a lone profile
			d.missing(join(path, "schedulerName"), "required where there are several profiles")
		case present:
			if s, ok := d.str(join(path, "schedulerName"), v); ok && s == "" {
				d.fail(join(path, "schedulerName"), "must not be empty", v)
			}
		}
		if seen[name] {
			d.fail(join(path, "schedulerName"), "appears in two profiles", name)
		}
		seen[name] = true
		d.kubePercentage(join(path, "percentageOfNodesToScore"), m["percentageOfNodesToScore"])
		plugins, _ := d.object(join(path, "plugins"), m["plugins"])
		d.only(join(path, "plugins"), plugins, strictFields, kubeExtensionPoints...)
		for _, point := range slices.Sorted(maps.Keys(plugins)) {
			ppath := join(join(path, "plugins"), point)
			set, ok := d.object(ppath, plugins[point])
			if !ok {
				continue
			}
			d.only(ppath, set, strictFields, kubePluginSetFields...)
			for _, which := range kubePluginSetFields {
				list, _ := d.list(join(ppath, which), set[which])
				for j, item := range list {
					if pm, ok := d.object(index(join(ppath, which), j), item); ok {
						d.only(index(join(ppath, which), j), pm, strictFields, kubePluginFields...)
					}
				}
			}
		}
		configs, _ := d.list(join(path, "pluginConfig"), m["pluginConfig"])
		named := map[string]bool{}
		for j, pc := range configs {
			cpath := index(join(path, "pluginConfig"), j)
			pm, ok := d.object(cpath, pc)
			if !ok {
				continue
			}
			d.only(cpath, pm, strictFields, kubePluginConfigFields...)
			if name, ok := pm["name"].(string); ok {
				if named[name] {
					d.fail(join(cpath, "name"), "configured twice in the profile", name)
				}
				named[name] = true
			}
		}
	}
}

// kubePercentage checks a percentageOfNodesToScore: a whole number in
// [0, 100], as kube validates it; absent is kube's default.
func (d *decoder) kubePercentage(path string, v any) {
	if v == nil {
		return
	}
	if n, ok := d.weight(path, v, strictInt); ok && (n < 0 || n > 100) {
		d.fail(path, "must be in [0, 100]", v)
	}
}

// kubeProfileName is a profile's schedulerName, default-scheduler where it
// has none (kube-scheduler's default; "" where it is not a string).
func kubeProfileName(m map[string]any) string {
	v, present := m["schedulerName"]
	if !present || v == nil {
		return "default-scheduler"
	}
	name, _ := v.(string)
	return name
}
