package scoring

import (
	"errors"
	"fmt"
	"strings"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/sra"
	"github.com/resfit/resfit/strategy"
)

// Options control decoding.
type Options struct {
	// Compat reproduces what Volcano silently does with bad values instead
	// of failing: a resource weight ≤ 0 becomes 1, an unknown strategy type
	// LeastAllocated, a negative plugin weight 10, an invalid wildcard is
	// dropped. Each change is reported in Config.Warnings.
	Compat bool
	// Profile picks the KubeSchedulerConfiguration profile by schedulerName;
	// empty means the first.
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
}

// FilterConfig enables one filter.
type FilterConfig struct {
	Name string
	Args FilterArgs
}

// ScorerConfig enables one scorer with its weight in the total.
type ScorerConfig struct {
	Name   string
	Weight float64
	Args   ScorerArgs
}

// ScorerArgs are one scorer's decoded arguments.
type ScorerArgs interface {
	buildScorer(name string, schema *resource.Schema) (Scorer, error)
}

// FilterArgs are one filter's decoded arguments.
type FilterArgs interface {
	buildFilter(schema *resource.Schema) (Filter, error)
}

// ResourceStrategyFitArgs are Volcano's resource-strategy-fit arguments,
// scarce-resource avoidance included.
type ResourceStrategyFitArgs struct {
	Weight    int64               // resourceStrategyFitWeight
	Resources []strategy.Resource // names may be wildcard patterns
	// Retention adds the sra retention score (scorer "sra.retention"); nil
	// means off.
	Retention *RetentionArgs
	// Proportional adds the sra proportional filter ("sra.proportional");
	// nil means off.
	Proportional []sra.Ratio
}

func (a ResourceStrategyFitArgs) buildScorer(name string, schema *resource.Schema) (Scorer, error) {
	f, err := strategy.NewVolcanoFit(schema, a.Resources, a.Weight)
	if err != nil {
		return nil, err
	}
	return &volcanoScorer{name: name, f: f}, nil
}

// BinpackArgs are Volcano's binpack arguments.
type BinpackArgs struct {
	Weight, CPU, Memory int64
	Resources           map[string]int64
}

func (a BinpackArgs) buildScorer(name string, schema *resource.Schema) (Scorer, error) {
	f, err := strategy.NewBinpack(schema, a.Weight, a.CPU, a.Memory, a.Resources)
	if err != nil {
		return nil, err
	}
	return &volcanoScorer{name: name, f: f}, nil
}

// NodeResourcesFitPlusArgs are Koordinator's NodeResourcesFitPlus arguments.
type NodeResourcesFitPlusArgs struct {
	Resources []strategy.Resource
}

func (a NodeResourcesFitPlusArgs) buildScorer(name string, schema *resource.Schema) (Scorer, error) {
	f, err := strategy.NewKoordinatorFit(schema, a.Resources)
	if err != nil {
		return nil, err
	}
	return &koordinatorScorer{name: name, f: f}, nil
}

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

func (a NodeResourcesFitArgs) buildScorer(name string, schema *resource.Schema) (Scorer, error) {
	var s nodeBatchScorer
	var err error
	switch a.Type {
	case ScoringRequestedToCapacityRatio:
		s, err = strategy.NewRequestedToCapacityRatio(schema, a.Resources, a.Shape)
	default:
		var t strategy.Type
		if t, err = strategy.ParseType(a.Type); err == nil {
			s, err = strategy.NewKubeFit(schema, t, a.Resources)
		}
	}
	if err != nil {
		return nil, err
	}
	return &kubeScorer{name: name, s: s}, nil
}

func (a NodeResourcesFitArgs) buildFilter(*resource.Schema) (Filter, error) {
	return NewFitFilter(a.IgnoredResources, a.IgnoredResourceGroups), nil
}

// BalancedAllocationArgs are kube-scheduler's
// NodeResourcesBalancedAllocationArgs.
type BalancedAllocationArgs struct {
	Resources []string
}

func (a BalancedAllocationArgs) buildScorer(name string, schema *resource.Schema) (Scorer, error) {
	b, err := strategy.NewBalancedAllocation(schema, a.Resources)
	if err != nil {
		return nil, err
	}
	return &kubeScorer{name: name, s: b, plain: true}, nil
}

// Build makes the pipeline for a schema. The result is immutable and safe
// for concurrent use.
func (c *Config) Build(schema *resource.Schema) (*Pipeline, error) {
	var errs []string
	var filters []Filter
	for i, f := range c.Filters {
		built, err := f.Args.buildFilter(schema)
		if err != nil {
			errs = append(errs, fmt.Sprintf("filters[%d] (%s): %v", i, f.Name, err))
			continue
		}
		filters = append(filters, built)
	}
	var scorers []WeightedScorer
	for i, s := range c.Scorers {
		built, err := s.Args.buildScorer(s.Name, schema)
		if err != nil {
			errs = append(errs, fmt.Sprintf("scorers[%d] (%s): %v", i, s.Name, err))
			continue
		}
		scorers = append(scorers, WeightedScorer{Scorer: built, Weight: s.Weight})
		rsf, ok := s.Args.(ResourceStrategyFitArgs)
		if !ok {
			continue
		}
		if rsf.Retention != nil {
			r, err := sra.NewRetention(schema, rsf.Retention.Weight, rsf.Retention.Resources)
			if err != nil {
				errs = append(errs, fmt.Sprintf("scorers[%d] (%s): %v", i, s.Name, err))
				continue
			}
			scorers = append(scorers, WeightedScorer{Scorer: &retentionScorer{r: r}, Weight: s.Weight})
		}
		if rsf.Proportional != nil {
			p, err := sra.NewProportional(schema, rsf.Proportional)
			if err != nil {
				errs = append(errs, fmt.Sprintf("scorers[%d] (%s): %v", i, s.Name, err))
				continue
			}
			filters = append(filters, &ProportionalFilter{p: p})
		}
	}
	if errs != nil {
		return nil, errors.New(strings.Join(errs, "\n"))
	}
	return NewPipeline(schema, filters, scorers)
}

// Load decodes a configuration from YAML or JSON. It recognises, by their
// top-level fields:
//
//   - resfit's own form: plugins (a list of {name, weight, args}) and
//     optionally filters (a list of names; default [NodeResourcesFit]);
//   - a Volcano scheduler configuration (volcano-scheduler.conf): tiers;
//   - a KubeSchedulerConfiguration (Koordinator's included): profiles;
//   - a legacy kube-scheduler Policy, as in the RequestedToCapacityRatio
//     KEP: priorities.
//
// Every bad value is reported with its field path, all of them at once, in
// a *ConfigError: values of the wrong kind, out of their documented range
// (every weight is at most resource.MaxWeight), NaN or infinite; a mapping
// key that is not a string; a key given twice in one mapping (in
// compatibility mode the last wins, with a warning).
func Load(data []byte, opts Options) (*Config, error) {
	d := &decoder{compat: opts.Compat}
	doc, ok := d.document(data)
	if !ok {
		return nil, d.err()
	}
	return d.decode(doc, opts)
}

// Decode is Load for an already decoded document (from encoding/json, or
// YAML decoded into map[string]any).
func Decode(doc map[string]any, opts Options) (*Config, error) {
	return (&decoder{compat: opts.Compat}).decode(doc, opts)
}

func (d *decoder) decode(doc map[string]any, opts Options) (*Config, error) {
	var c *Config
	switch {
	case doc["plugins"] != nil && doc["profiles"] == nil:
		c = d.native(doc)
	case doc["tiers"] != nil:
		c = d.volcanoConf(doc)
	case doc["profiles"] != nil:
		c = d.kubeConf(doc, opts.Profile)
	case doc["priorities"] != nil:
		c = d.policy(doc)
	default:
		d.missing("(root)", "unrecognised configuration: want plugins (resfit), tiers (Volcano), profiles (KubeSchedulerConfiguration) or priorities (Policy)")
	}
	if err := d.err(); err != nil {
		return nil, err
	}
	c.Warnings = d.warns
	return c, nil
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

// scorerArgs decodes a known scoring plugin's arguments; known is false for
// a plugin resfit does not provide.
func (d *decoder) scorerArgs(path, plugin string, raw any) (ScorerArgs, bool) {
	switch plugin {
	case ResourceStrategyFit:
		return d.resourceStrategyFit(path, raw), true
	case Binpack:
		return d.binpack(path, raw), true
	case NodeResourcesFitPlus:
		return d.fitPlus(path, raw), true
	case NodeResourcesFit:
		return d.nodeResourcesFit(path, raw), true
	case NodeResourcesBalancedAllocation:
		return d.balanced(path, raw), true
	case ScarceResourceAvoidance:
		return d.scarceResourceAvoidance(path, raw), true
	}
	return nil, false
}

func (d *decoder) native(doc map[string]any) *Config {
	d.only("", doc, strictFields, "plugins", "filters")
	c := &Config{}
	plugins, _ := d.list("plugins", doc["plugins"])
	fitArgs := NodeResourcesFitArgs{}
	for i, p := range plugins {
		path := index("plugins", i)
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
		filters, _ = d.list("filters", raw)
	}
	for i, f := range filters {
		name, ok := d.str(index("filters", i), f)
		if !ok {
			continue
		}
		if name != NodeResourcesFit {
			d.fail(index("filters", i), "unknown filter; known is "+NodeResourcesFit, name)
			continue
		}
		c.Filters = append(c.Filters, FilterConfig{Name: name, Args: fitArgs})
	}
	return c
}

var knownScorers = []string{ResourceStrategyFit, Binpack, NodeResourcesFit, NodeResourcesBalancedAllocation, NodeResourcesFitPlus, ScarceResourceAvoidance}

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

// volcanoConf reads a volcano-scheduler.conf: every plugin of every tier,
// each scoring on its own scale (Volcano adds node-order scores unweighted),
// behind the fit check Volcano's allocate action makes.
func (d *decoder) volcanoConf(doc map[string]any) *Config {
	c := &Config{Filters: []FilterConfig{{Name: NodeResourcesFit, Args: NodeResourcesFitArgs{}}}}
	tiers, _ := d.list("tiers", doc["tiers"])
	for i, t := range tiers {
		tpath := index("tiers", i)
		tm, ok := d.object(tpath, t)
		if !ok {
			continue
		}
		plugins, _ := d.list(join(tpath, "plugins"), tm["plugins"])
		for j, p := range plugins {
			path := index(join(tpath, "plugins"), j)
			m, ok := d.object(path, p)
			if !ok {
				continue
			}
			name, ok := d.str(join(path, "name"), m["name"])
			if !ok {
				continue
			}
			args, known := d.scorerArgs(join(path, "arguments"), name, m["arguments"])
			if !known {
				d.warn("%s: plugin %q has no resfit scorer; skipped", join(path, "name"), name)
				continue
			}
			c.Scorers = append(c.Scorers, ScorerConfig{Name: name, Weight: 1, Args: args})
		}
	}
	return c
}
