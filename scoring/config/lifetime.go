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
// ResourceStrategyFit (at weight DefaultLifetimeWeight) to run ResfitFrag
// with its lifetime term. It takes no arguments. Built for a host that
// does not follow when pods end (no Host.Lifetimes), it scores every node
// alike (lifetime.MaxScore: nothing is known of when any node empties).
const Lifetime = "ResfitLifetime"

// LifetimeArgs are Lifetime's arguments: none.
type LifetimeArgs struct{}

func (LifetimeArgs) plugin() string { return Lifetime }

func (LifetimeArgs) build(name string, t target) ([]scoring.WeightedScorer, []scoring.Filter, error) {
	return scorer(lifetime.NewScorer(t.lifetimes, t.devices), nil)
}

func (LifetimeArgs) canonical() []yamlNode { return nil }

func (LifetimeArgs) readsLifetimes() bool { return true }

// lifetimeArgs decodes Lifetime's arguments: nothing, or an empty object.
func (d *decoder) lifetimeArgs(path string, raw any) ScorerArgs {
	if m, ok := d.object(path, raw); ok {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if k != "apiVersion" && k != "kind" {
				d.fail(key(path, k), Lifetime+" takes no arguments", m[k])
			}
		}
	}
	return LifetimeArgs{}
}

// lifetimeReader is a plugin that reads the host's lifetime view when it
// has one.
type lifetimeReader interface{ readsLifetimes() bool }

func (a ResfitFragArgs) readsLifetimes() bool {
	return a.LifetimeWeight > 0 || a.LearnedLifetimeWeight > 0
}

// ReadsLifetimes reports whether a scorer of the configuration reads a
// host's lifetime view (Host.Lifetimes): Lifetime, or ResfitFrag with a
// lifetime weight. A host need follow when pods end only for such a
// configuration.
func (c *Config) ReadsLifetimes() bool {
	for _, s := range c.Scorers {
		if r, ok := s.Args.(lifetimeReader); ok && r.readsLifetimes() {
			return true
		}
	}
	return false
}
