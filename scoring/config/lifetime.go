package config

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/lifetime"
)

// Lifetime is resfit's lifetime plugin alone (scoring/lifetime): a node
// scores by how likely the pod is to end before the node would empty
// anyway, 0..100, the term ResfitFrag adds at LifetimeWeight. It is the
// plugin a kube-scheduler profile enables beside FGD and
// ResourceStrategyFit to run ResfitFrag with its lifetime term. Its
// argument ends says whose ends it follows: all (the default) or
// declared, beside LearnedLifetime for the learned ones, so that a profile
// weighs the two apart as ResfitFrag's lifetime: {weight, learnedWeight}
// does (ResfitFrag's default: declared at DefaultLifetimeWeight, learned
// at DefaultLearnedLifetimeWeight); its argument model is the options
// of the host's lifetime model (LifetimeArgs.Model). Built for a host
// that does not follow when pods end (no Host.Lifetimes), it adds
// nothing: 0 on every node (nothing is known of when any node empties).
const Lifetime = "ResfitLifetime"

// LearnedLifetime is the lifetime plugin for the pods whose ends were
// learned (scoring.Task.EndsLearned) alone, adding nothing for the others
// (0 everywhere): enabled beside Lifetime with ends: declared, at
// ResfitFrag's learnedWeight. Its one argument is model, as Lifetime's.
const LearnedLifetime = "ResfitLearnedLifetime"

// LifetimeArgs are Lifetime's and LearnedLifetime's arguments: whose ends
// the plugin follows (lifetime.AllEnds, DeclaredEnds; LearnedLifetime's
// LearnedEnds).
type LifetimeArgs struct {
	Ends lifetime.Ends
	// Model is what the host's lifetime model is asked to learn with, as
	// ResfitFragArgs.LifetimeModel.
	Model lifetime.ModelOptions
}

func (a LifetimeArgs) plugin() string {
	if a.Ends == lifetime.LearnedEnds {
		return LearnedLifetime
	}
	return Lifetime
}

func (a LifetimeArgs) build(name string, t target) ([]scoring.WeightedScorer, []scoring.Filter, error) {
	return scorer(lifetime.NewScorerFor(t.lifetimes, t.devices, a.Ends), nil)
}

func (a LifetimeArgs) canonical() []yamlNode {
	var out []yamlNode
	if a.Ends == lifetime.DeclaredEnds {
		out = append(out, yamlNode{key: "ends", scalar: "declared"})
	}
	return append(out, lifetimeModelYAML(a.Model)...)
}

// modelAsker is a plugin that may ask the host's lifetime model for
// options.
type modelAsker interface {
	lifetimeModel() (lifetime.ModelOptions, error)
}

func (a LifetimeArgs) lifetimeModel() (lifetime.ModelOptions, error)   { return a.Model, nil }
func (a ResfitFragArgs) lifetimeModel() (lifetime.ModelOptions, error) { return a.LifetimeModel, nil }
func (a KubePluginArgs) lifetimeModel() (lifetime.ModelOptions, error) {
	return a.Config.LifetimeModel()
}

// LifetimeModel is what the configuration asks of the host's lifetime
// model (lifetime.NewModel's options): the options its plugins give
// (ResfitFrag's lifetime: {model}, ResfitLifetime's and
// ResfitLearnedLifetime's model), merged field by field
// (lifetime.ModelOptions.Merge); every option none gives is unset (0: its
// default). One host keeps one model, so two plugins that set an option
// apart, or whose options do not go together (a window below the
// minSamples), are an error naming both; Load refuses such a
// configuration.
func (c *Config) LifetimeModel() (lifetime.ModelOptions, error) {
	o, _, err := c.lifetimeModel()
	return o, err
}

// lifetimeModel is LifetimeModel, and the index of the scorer whose
// options clash with those before it (-1 when none does).
func (c *Config) lifetimeModel() (lifetime.ModelOptions, int, error) {
	var out lifetime.ModelOptions
	from := ""
	for i, s := range c.Scorers {
		a, ok := s.Args.(modelAsker)
		if !ok {
			continue
		}
		o, err := a.lifetimeModel()
		if err != nil {
			return lifetime.ModelOptions{}, i, err
		}
		if o == (lifetime.ModelOptions{}) {
			continue
		}
		if out, err = out.Merge(o); err == nil {
			err = out.Check() // each alone checked, the two may not fit
		}
		if err != nil {
			return lifetime.ModelOptions{}, i, fmt.Errorf("%s and %s ask the host's one lifetime model for options that do not go together: %w", from, s.Name, err)
		}
		from = s.Name
	}
	return out, -1, nil
}

// oneLifetimeModel refuses a configuration whose plugins ask the host's
// one lifetime model for options that do not go together, at where the
// later one gives them.
func (d *decoder) oneLifetimeModel(c *Config) {
	_, i, err := c.lifetimeModel()
	if err == nil {
		return
	}
	d.missing(cmp.Or(modelSource(c.Scorers[i]), c.Scorers[i].Sources[""], d.rootPath()), err.Error())
}

// modelSource is where a plugin's lifetime model options were read ("" if
// it does not say): its model argument, ResfitFrag's lifetime, or those of
// the plugin a kube-scheduler plugin runs.
func modelSource(s ScorerConfig) string {
	if k, ok := s.Args.(KubePluginArgs); ok && k.Config != nil {
		for _, inner := range k.Config.Scorers {
			if path := modelSource(inner); path != "" {
				return path
			}
		}
	}
	return cmp.Or(s.Sources[under("args", "model")], s.Sources[under("args", "lifetime")])
}

// lifetimeModelYAML is the model's options that are set, as a model
// mapping; nothing where none is.
func lifetimeModelYAML(o lifetime.ModelOptions) []yamlNode {
	var items []yamlNode
	if o.Window != 0 {
		items = append(items, yamlNode{key: "window", scalar: o.Window})
	}
	if o.MinSamples != 0 {
		items = append(items, yamlNode{key: "minSamples", scalar: o.MinSamples})
	}
	if o.Quantile != 0 {
		items = append(items, yamlNode{key: "quantile", scalar: o.Quantile})
	}
	if items == nil {
		return nil
	}
	return []yamlNode{mapping("model", items...)}
}

// lifetimeModel decodes the options of the model a host learns when pods
// end by (lifetime.ModelOptions): {window: N, minSamples: N, quantile:
// q}, each one not given at lifetime's default; a value lifetime cannot
// use is an error at its field's path (minSamples is at most the window,
// the default one where none is given).
func (d *decoder) lifetimeModel(path string, raw any) lifetime.ModelOptions {
	var o lifetime.ModelOptions
	m, ok := d.object(path, raw)
	if !ok {
		return o
	}
	d.only(path, m, strictFields, "window", "minSamples", "quantile")
	if !d.wholeFields(path, m, wholeField{"window", &o.Window, 1, math.MaxInt32}, wholeField{"minSamples", &o.MinSamples, 1, math.MaxInt32}) {
		return lifetime.ModelOptions{}
	}
	if raw, present := m["quantile"]; present {
		if q, ok := d.number(join(path, "quantile"), raw); ok {
			if !(q > 0 && q < 1) {
				d.fail(join(path, "quantile"), "must be in (0, 1)", raw)
				return lifetime.ModelOptions{}
			}
			o.Quantile = q
		}
	}
	var bad *lifetime.OptionError
	if err := o.Check(); errors.As(err, &bad) {
		if _, given := m[bad.Field]; !given && bad.Field == "minSamples" {
			// the default minSamples above the window given
			d.fail(join(path, "window"), fmt.Sprintf("must be at least minSamples, %d by default (give minSamples too)", bad.Value), o.Window)
		} else {
			d.fail(join(path, bad.Field), bad.Detail, bad.Value)
		}
		return lifetime.ModelOptions{}
	}
	return o
}

func (LifetimeArgs) readsLifetimes() bool { return true }

// learnedLifetimeArgs decodes LearnedLifetime's arguments: nothing, or
// {model: {...}}, the host's lifetime model's options (lifetimeModel).
func (d *decoder) learnedLifetimeArgs(path string, raw any) ScorerArgs {
	a := LifetimeArgs{Ends: lifetime.LearnedEnds}
	d.args(path, raw, LearnedLifetime, map[string]func(string, any){
		"model": func(vpath string, v any) { a.Model = d.lifetimeModel(vpath, v) },
	})
	return a
}

// lifetimeArgs decodes Lifetime's arguments: nothing, or {ends: all} or
// {ends: declared} (the learned ends are LearnedLifetime's), and {model:
// {...}}, the host's lifetime model's options (lifetimeModel).
func (d *decoder) lifetimeArgs(path string, raw any) ScorerArgs {
	var a LifetimeArgs
	d.args(path, raw, Lifetime, map[string]func(string, any){
		"ends": func(vpath string, v any) {
			switch s, ok := d.str(vpath, v); {
			case !ok, s == "all":
			case s == "declared":
				a.Ends = lifetime.DeclaredEnds
			default:
				d.fail(vpath, "must be all or declared (the learned ones are "+LearnedLifetime+"'s)", v)
			}
		},
		"model": func(vpath string, v any) { a.Model = d.lifetimeModel(vpath, v) },
	})
	return a
}

// args decodes the arguments of a plugin that takes those of read: each
// one given is read with its path and value; apiVersion and kind pass,
// and any other key is refused, naming the arguments the plugin takes.
func (d *decoder) args(path string, raw any, plugin string, read map[string]func(path string, v any)) {
	m, ok := d.object(path, raw)
	if !ok {
		return
	}
	names := slices.Sorted(maps.Keys(read))
	takes := plugin + " takes one argument, " + names[0]
	if len(names) > 1 {
		takes = plugin + " takes the arguments " + strings.Join(names, ", ")
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch r, known := read[k]; {
		case k == "apiVersion", k == "kind":
		case known:
			d.note(k, join(path, k))
			r(join(path, k), m[k])
		default:
			d.fail(key(path, k), takes, m[k])
		}
	}
}

// lifetimeReader is a plugin that reads the host's lifetime view when it
// has one.
type lifetimeReader interface{ readsLifetimes() bool }

func (a ResfitFragArgs) readsLifetimes() bool {
	return a.LifetimeWeight > 0 || a.LearnedLifetimeWeight > 0 || a.NodeSizeWeight > 0 || (a.UntilEndsKnown != "" && a.UntilEndsKnown != a.TieBreak)
}

// ReadsLifetimes reports whether a scorer of the configuration reads a
// host's lifetime view (Host.Lifetimes): Lifetime, NodeSize, ResfitFrag
// with a lifetime weight, a node size or a tie-breaker that waits for
// ends (UntilEndsKnown), or PackLeastUsed that does. A host need follow when pods end only for such a
// configuration.
func (c *Config) ReadsLifetimes() bool {
	for _, s := range c.Scorers {
		if r, ok := s.Args.(lifetimeReader); ok && r.readsLifetimes() {
			return true
		}
	}
	return false
}
