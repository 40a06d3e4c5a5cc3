package config

import (
	"slices"
	"strings"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/lifetime"
	"github.com/resfit/resfit/strategy"
)

// PackLeastUsed is resfit's packing plugin (strategy.PackLeastUsed): a
// node scores by its least-used resource with the pod on it, 0..100.
const PackLeastUsed = strategy.PackLeastUsedName

// PackLeastUsedArgs are PackLeastUsed's arguments: the resources whose
// least-used one a node is scored by, and what it scores as until
// anything is known of when pods end.
type PackLeastUsedArgs struct {
	Resources []string
	// UntilEndsKnown, NodeResourcesBalancedAllocation, has the plugin score
	// as NodeResourcesBalancedAllocation over the same resources until
	// anything is known of when pods end or lifetime.FillShare of the
	// devices are in use (lifetime.UntilKnown), in a host that follows
	// ends (Host.Lifetimes): what ResfitFrag's tie-breaker
	// does by default, written out for a kube-scheduler profile that runs
	// ResfitFrag as plugins. "" (untilEndsKnown: PackLeastUsed, or none
	// written): it packs from the start.
	UntilEndsKnown string
}

func (PackLeastUsedArgs) plugin() string { return PackLeastUsed }

func (a PackLeastUsedArgs) build(name string, t target) ([]scoring.WeightedScorer, []scoring.Filter, error) {
	s, err := tieBreaker(t, name, PackLeastUsed, a.UntilEndsKnown, a.Resources)
	if err != nil {
		return nil, nil, err
	}
	return scorer(s, nil)
}

func (a PackLeastUsedArgs) canonical() []yamlNode {
	out := BalancedAllocationArgs{Resources: a.Resources}.canonical()
	if a.switches() {
		out = append(out, yamlNode{key: "untilEndsKnown", scalar: a.UntilEndsKnown})
	}
	return out
}

// switches reports whether the plugin scores as another until ends are
// known.
func (a PackLeastUsedArgs) switches() bool { return a.UntilEndsKnown != "" }

func (a PackLeastUsedArgs) readsLifetimes() bool { return a.switches() }

// packLeastUsed decodes PackLeastUsed's arguments as kube-scheduler's
// NodeResourcesBalancedAllocationArgs are written: resources [{name,
// weight: 1}], by default cpu and nvidia.com/gpu; and untilEndsKnown,
// by default none.
func (d *decoder) packLeastUsed(path string, raw any) ScorerArgs {
	a := PackLeastUsedArgs{Resources: d.resourceNames(path, raw, []string{resource.CPU, resource.GPU}, "untilEndsKnown")}
	if m, ok := raw.(map[string]any); ok {
		if raw, present := m["untilEndsKnown"]; present {
			if a.UntilEndsKnown = d.untilEndsKnown(join(path, "untilEndsKnown"), raw); a.UntilEndsKnown == PackLeastUsed {
				a.UntilEndsKnown = "" // packs from the start
			}
		}
	}
	return a
}

// tieBreakers are the scorers ResfitFrag's tie-breaker, and what it or
// PackLeastUsed scores as until ends are known, may be.
var tieBreakers = []string{PackLeastUsed, NodeResourcesBalancedAllocation}

// untilEndsKnown decodes an untilEndsKnown: one of tieBreakers.
func (d *decoder) untilEndsKnown(path string, raw any) string {
	d.note("untilEndsKnown", path)
	typ, ok := d.str(path, raw)
	if !ok {
		return ""
	}
	if !slices.Contains(tieBreakers, typ) {
		d.fail(path, "must be one of "+strings.Join(tieBreakers, ", "), raw)
		return ""
	}
	return typ
}

// tieBreaker builds the scorer of type typ (one of tieBreakers) over the
// named resources, named name; in a host that follows when pods end, one
// that scores as type until instead while nothing is known of any end
// and the devices are little used (lifetime.UntilKnown), when until is
// set and another type.
func tieBreaker(t target, name, typ, until string, names []string) (scoring.Scorer, error) {
	then, err := strategyOfType(t.schema, name, typ, names)
	if err != nil || until == "" || until == typ || t.lifetimes == nil {
		return then, err
	}
	before, err := strategyOfType(t.schema, until, until, names)
	if err != nil {
		return nil, err
	}
	return lifetime.NewUntilKnown(t.lifetimes, t.devices, before, then)
}

// strategyOfType is a PackLeastUsed or NodeResourcesBalancedAllocation
// scorer over the named resources, named name.
func strategyOfType(schema *resource.Schema, name, typ string, names []string) (scoring.Scorer, error) {
	if typ == NodeResourcesBalancedAllocation {
		b, err := strategy.NewBalancedAllocation(schema, names)
		if err != nil {
			return nil, err
		}
		return scoring.NewStrategyScorer(name, b, true), nil
	}
	p, err := strategy.NewPackLeastUsed(schema, names)
	if err != nil {
		return nil, err
	}
	return scoring.NewStrategyScorer(name, p, true), nil
}
