package config

import (
	"maps"
	"slices"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// NodeSize is resfit's node-size plugin alone (sra.Size: the smaller node
// first, beside the cluster's largest node, 0..100), the part ResfitFrag
// adds at NodeSizeWeight. It is the plugin a kube-scheduler profile
// enables at weight 1 (DefaultNodeSizeWeight) beside FGD,
// ResourceStrategyFit and the lifetime plugins to run ResfitFrag as it is
// by default. Its one argument, largest, is the reference node (resource
// name to amount); without it the reference is the host's largest node,
// each resource apart, as nodes come and go. In a host that follows when
// pods end (Host.Lifetimes) it counts once anything is known of any pod's
// end and, while no pod has ended (a cluster filling from empty), half of
// the GPUs are in use (lifetime.NewOnceKnown, lifetime.OnceKnownFillShare);
// it scores every node 0 until then.
const NodeSize = "ResfitNodeSize"

// NodeSizeArgs are NodeSize's arguments: the reference node, resource name
// to amount in the resource's canonical unit; nil for the host's largest.
type NodeSizeArgs struct {
	Largest map[string]int64
}

func (NodeSizeArgs) plugin() string { return NodeSize }

func (a NodeSizeArgs) build(_ string, t target) ([]scoring.WeightedScorer, []scoring.Filter, error) {
	return scorer(nodeSizeScorer(t, a.Largest))
}

func (a NodeSizeArgs) canonical() []yamlNode {
	if a.Largest == nil {
		return nil
	}
	return []yamlNode{largestNodeYAML(a.Largest)}
}

// readsLifetimes is true: where the host follows ends, the part waits for
// one.
func (NodeSizeArgs) readsLifetimes() bool { return true }

// largestNodeYAML writes a reference node as the mapping largest, its
// resources in name order.
func largestNodeYAML(largest map[string]int64) yamlNode {
	names := slices.Sorted(maps.Keys(largest))
	items := make([]yamlNode, len(names))
	for i, name := range names {
		items[i] = yamlNode{key: name, scalar: resource.FormatAmount(name, largest[name])}
	}
	return mapping("largest", items...)
}

// nodeSizeArgs decodes NodeSize's arguments: nothing, or {largest:
// {resource: amount, ...}}.
func (d *decoder) nodeSizeArgs(path string, raw any) ScorerArgs {
	var a NodeSizeArgs
	d.args(path, raw, NodeSize, map[string]func(string, any){"largest": func(vpath string, v any) { a.Largest = d.largestNode(vpath, v) }})
	return a
}
