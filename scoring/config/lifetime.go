package config

import (
	"maps"
	"slices"

	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/lifetime"
)

// Lifetime is resfit's lifetime plugin alone (scoring/lifetime): a node
// scores by how likely the pod is to end before the node would empty
// anyway, 0..100, the term ResfitFrag adds at LifetimeWeight. It is the
// plugin a kube-scheduler profile enables beside FGD and
// ResourceStrategyFit to run ResfitFrag with its lifetime term. Its one
// argument, ends, says whose ends it follows: all (the default) or
// declared, beside LearnedLifetime for the learned ones, so that a profile
// weighs the two apart as ResfitFrag's lifetime: {weight, learnedWeight}
// does (ResfitFrag's default: declared at DefaultLifetimeWeight, learned
// at DefaultLearnedLifetimeWeight). Built for a host that does not
// follow when pods end (no Host.Lifetimes), it adds nothing: 0 on every
// node (nothing is known of when any node empties).
const Lifetime = "ResfitLifetime"

// LearnedLifetime is the lifetime plugin for the pods whose ends were
// learned (scoring.Task.EndsLearned) alone, adding nothing for the others
// (0 everywhere): enabled beside Lifetime with ends: declared, at
// ResfitFrag's learnedWeight. It takes no arguments.
const LearnedLifetime = "ResfitLearnedLifetime"

// LifetimeArgs are Lifetime's and LearnedLifetime's arguments: whose ends
// the plugin follows (lifetime.AllEnds, DeclaredEnds; LearnedLifetime's
// LearnedEnds).
type LifetimeArgs struct {
	Ends lifetime.Ends
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
	if a.Ends == lifetime.DeclaredEnds {
		return []yamlNode{{key: "ends", scalar: "declared"}}
	}
	return nil
}

func (LifetimeArgs) readsLifetimes() bool { return true }

// learnedLifetimeArgs decodes LearnedLifetime's arguments: none.
func (d *decoder) learnedLifetimeArgs(path string, raw any) ScorerArgs {
	d.noArgs(path, raw, LearnedLifetime)
	return LifetimeArgs{Ends: lifetime.LearnedEnds}
}

// lifetimeArgs decodes Lifetime's arguments: nothing, or {ends: all} or
// {ends: declared} (the learned ends are LearnedLifetime's).
func (d *decoder) lifetimeArgs(path string, raw any) ScorerArgs {
	var a LifetimeArgs
	d.oneArg(path, raw, Lifetime, "ends", func(vpath string, v any) {
		switch s, ok := d.str(vpath, v); {
		case !ok, s == "all":
		case s == "declared":
			a.Ends = lifetime.DeclaredEnds
		default:
			d.fail(vpath, "must be all or declared (the learned ones are "+LearnedLifetime+"'s)", v)
		}
	})
	return a
}

// oneArg decodes the arguments of a plugin that takes one, arg: read gets
// its path and value where it is given; apiVersion and kind pass, and any
// other key is refused.
func (d *decoder) oneArg(path string, raw any, plugin, arg string, read func(path string, v any)) {
	m, ok := d.object(path, raw)
	if !ok {
		return
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch k {
		case "apiVersion", "kind":
		case arg:
			d.note(arg, join(path, k))
			read(join(path, k), m[k])
		default:
			d.fail(key(path, k), plugin+" takes one argument, "+arg, m[k])
		}
	}
}

// noArgs refuses any argument of a plugin that takes none.
func (d *decoder) noArgs(path string, raw any, plugin string) {
	if m, ok := d.object(path, raw); ok {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if k != "apiVersion" && k != "kind" {
				d.fail(key(path, k), plugin+" takes no arguments", m[k])
			}
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
