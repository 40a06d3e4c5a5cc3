package strategy

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/resfit/resfit/resource"
)

// DefaultVolcanoPluginWeight is resourceStrategyFitWeight when none is set.
const DefaultVolcanoPluginWeight = 10

// VolcanoFit is Volcano's resource-strategy-fit score, in float64, as
// Volcano computes it. Per node, over the resources the task requests
// (req_i > 0) that have a configuration:
//
//	if alloc_i = 0 or w_i = 0: s_i = 0 (the weight still counts)
//	else if used_i + req_i > alloc_i: the whole node scores 0
//	else MostAllocated:  s_i = (req_i + used_i) · w_i / alloc_i
//	     LeastAllocated: s_i = (alloc_i − req_i − used_i) · w_i / alloc_i
//	score = (Σ s_i / Σ w_i) × (100 × resourceStrategyFitWeight)
//
// so the result lies in [0, 100 × resourceStrategyFitWeight]. A resource's
// configuration is its exact name, else the wildcard pattern ("nvidia.com/*")
// with the longest matching prefix. Resources are summed cpu, memory, then
// schema order (Volcano sums extended resources in map order, which can move
// the last bit of a float; the score is otherwise identical).
type VolcanoFit struct {
	k            int
	specs        []slotSpec // in summation order; weight 0 is allowed
	order        []int      // all slots, cpu and memory first
	pluginWeight int64
}

// VolcanoOrder returns the schema's slots in the order Volcano sums them:
// cpu, memory, then the rest.
func volcanoOrder(schema *resource.Schema) []int {
	order := make([]int, 0, schema.Len())
	for _, n := range []string{resource.CPU, resource.Memory} {
		if slot, ok := schema.Slot(n); ok {
			order = append(order, slot)
		}
	}
	for i := 0; i < schema.Len(); i++ {
		if n := schema.Name(i); n != resource.CPU && n != resource.Memory {
			order = append(order, i)
		}
	}
	return order
}

// CheckWildcard reports whether a resource key is usable: a plain name, or a
// pattern with one '*' at its end after a non-empty prefix ("nvidia.com/*").
// A lone "*" is not allowed.
func CheckWildcard(key string) error {
	if !strings.Contains(key, "*") {
		return nil
	}
	switch {
	case key == "*":
		return fmt.Errorf("a lone \"*\" is not supported; use a prefix pattern such as \"nvidia.com/*\"")
	case strings.Count(key, "*") != 1 || !strings.HasSuffix(key, "*"):
		return fmt.Errorf("only one trailing '*' is supported, as in \"nvidia.com/*\"")
	}
	return nil
}

// NewVolcanoFit builds the scorer. Keys may be wildcard patterns (see
// CheckWildcard); weights must be in [0, resource.MaxWeight] (Volcano's
// binpack allows 0, which counts nothing); types MostAllocated or
// LeastAllocated; pluginWeight in [0, resource.MaxWeight].
func NewVolcanoFit(schema *resource.Schema, rs []Resource, pluginWeight int64) (*VolcanoFit, error) {
	seen := map[string]bool{}
	var errs []string
	for i, r := range rs {
		if err := CheckWildcard(r.Name); err != nil {
			errs = append(errs, fmt.Sprintf("resources[%d] (%s): %v", i, r.Name, err))
		}
		if seen[r.Name] {
			errs = append(errs, fmt.Sprintf("resources[%d]: %q appears twice", i, r.Name))
		}
		seen[r.Name] = true
		if r.Weight < 0 || r.Weight > resource.MaxWeight {
			errs = append(errs, fmt.Sprintf("resources[%d] (%s): weight must be in [0, %d], got %d", i, r.Name, resource.MaxWeight, r.Weight))
		}
		if r.Type != MostAllocated && r.Type != LeastAllocated {
			errs = append(errs, fmt.Sprintf("resources[%d] (%s): unknown strategy type %v", i, r.Name, r.Type))
		}
	}
	if pluginWeight < 0 || pluginWeight > resource.MaxWeight {
		errs = append(errs, fmt.Sprintf("plugin weight must be in [0, %d], got %d", resource.MaxWeight, pluginWeight))
	}
	if errs != nil {
		return nil, fmt.Errorf("resource-strategy-fit: %s", strings.Join(errs, "; "))
	}
	f := &VolcanoFit{k: schema.Len(), order: volcanoOrder(schema), pluginWeight: pluginWeight}
	for _, slot := range f.order {
		if r, ok := matchResource(schema.Name(slot), rs); ok {
			f.specs = append(f.specs, slotSpec{slot: slot, typ: r.Type, weight: r.Weight})
		}
	}
	return f, nil
}

// matchResource finds name's configuration: an exact key first, else the
// wildcard with the longest prefix.
func matchResource(name string, rs []Resource) (Resource, bool) {
	best, bestLen := Resource{}, -1
	for _, r := range rs {
		if r.Name == name {
			return r, true
		}
		if prefix, ok := strings.CutSuffix(r.Name, "*"); ok && strings.HasPrefix(name, prefix) && len(prefix) > bestLen {
			best, bestLen = r, len(prefix)
		}
	}
	return best, bestLen >= 0
}

// MaxScore is the largest score: 100 × the plugin weight.
func (f *VolcanoFit) MaxScore() float64 { return MaxNodeScore * float64(f.pluginWeight) }

// Override replaces the configured strategy for one task, as Volcano's pod
// annotations volcano.sh/resource-strategy-scoring-type and
// volcano.sh/resource-strategy-weight do: one type for every resource, and a
// weight for each resource that is to count.
type Override struct {
	typ     Type
	weights []int64 // per slot; -1 means not listed
	zero    bool
}

// AppendKey appends to b bytes that are equal for two overrides exactly
// when they score alike (nil included), so that tasks can be grouped by
// override without comparing pointers.
func (o *Override) AppendKey(b []byte) []byte {
	if o == nil {
		return append(b, 0)
	}
	zero := byte(0)
	if o.zero {
		zero = 1
	}
	b = append(b, 1, zero, byte(o.typ))
	for _, w := range o.weights {
		b = binary.LittleEndian.AppendUint64(b, uint64(w))
	}
	return b
}

// ZeroOverride scores every node 0 for the task. It is what Volcano does
// when a task's annotations are present but unusable (weights missing or not
// JSON, unknown type).
func ZeroOverride() *Override { return &Override{zero: true} }

// Volcano's per-pod scoring annotations (resource-strategy-fit): a
// strategy type and a JSON object of weights by resource name.
const (
	VolcanoScoringTypeAnnotation = "volcano.sh/resource-strategy-scoring-type"
	VolcanoWeightAnnotation      = "volcano.sh/resource-strategy-weight"
)

// VolcanoOverride reads a pod's Volcano scoring annotations
// (ParseVolcanoAnnotations of VolcanoScoringTypeAnnotation and
// VolcanoWeightAnnotation): nil when it has none.
func VolcanoOverride(schema *resource.Schema, annotations map[string]string) (*Override, error) {
	return ParseVolcanoAnnotations(schema, annotations[VolcanoScoringTypeAnnotation], annotations[VolcanoWeightAnnotation])
}

// ParseVolcanoAnnotations reads the two annotations into an Override.
// scoringType empty means no override (nil, nil). An unusable pair is an
// error naming the annotation; callers that want Volcano's behaviour use
// ZeroOverride instead. Weights must be whole numbers in
// [0, resource.MaxWeight]: the annotations are written by any pod's author,
// and a larger weight would let one pod outweigh every other plugin, so it
// is as unusable as bad JSON. Resources outside the schema are never
// requested and are ignored.
func ParseVolcanoAnnotations(schema *resource.Schema, scoringType, weightsJSON string) (*Override, error) {
	if scoringType == "" {
		return nil, nil
	}
	t, err := ParseType(scoringType)
	if err != nil {
		return nil, fmt.Errorf("annotation %s: %w", VolcanoScoringTypeAnnotation, err)
	}
	if weightsJSON == "" {
		return nil, fmt.Errorf("annotation %s: missing while %s is %q", VolcanoWeightAnnotation, VolcanoScoringTypeAnnotation, scoringType)
	}
	var weights map[string]int64
	if err := json.Unmarshal([]byte(weightsJSON), &weights); err != nil {
		return nil, fmt.Errorf("annotation %s: want a JSON object of integer weights, got %q: %v", VolcanoWeightAnnotation, weightsJSON, err)
	}
	o := &Override{typ: t, weights: make([]int64, schema.Len())}
	for i := range o.weights {
		o.weights[i] = -1
	}
	names := make([]string, 0, len(weights))
	for n := range weights {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w := weights[n]
		if w < 0 || w > resource.MaxWeight {
			return nil, fmt.Errorf("annotation %s: %q: weight must be in [0, %d], got %d", VolcanoWeightAnnotation, n, resource.MaxWeight, w)
		}
		if slot, ok := schema.Slot(n); ok {
			o.weights[slot] = w
		}
	}
	return o, nil
}

// taskSlots gathers the resources that count for this task, in summation
// order. It returns ok = false when the task scores 0 everywhere.
func (f *VolcanoFit) taskSlots(req []int64, o *Override, dst *[resource.MaxResources]taskSlot) ([]taskSlot, bool) {
	n := 0
	if o == nil {
		for _, s := range f.specs {
			if req[s.slot] > 0 {
				dst[n] = taskSlot{slot: s.slot, typ: s.typ, weight: s.weight, req: req[s.slot]}
				n++
			}
		}
		return dst[:n], true
	}
	if o.zero || len(o.weights) != len(req) {
		return nil, false
	}
	for _, slot := range f.order {
		if w := o.weights[slot]; w >= 0 && req[slot] > 0 {
			dst[n] = taskSlot{slot: slot, typ: o.typ, weight: w, req: req[slot]}
			n++
		}
	}
	return dst[:n], true
}

// ScoreNode scores one node; o may be nil. It panics if a vector's length
// is not the schema's.
func (f *VolcanoFit) ScoreNode(req []int64, o *Override, alloc, used []int64) float64 {
	resource.MustLen("strategy.VolcanoFit.ScoreNode", f.k, req, alloc, used)
	var buf [resource.MaxResources]taskSlot
	slots, ok := f.taskSlots(req, o, &buf)
	if !ok {
		return 0
	}
	return volcanoNode(slots, alloc, used) * (MaxNodeScore * float64(f.pluginWeight))
}

// ScoreNodes scores every node of rows into out; o may be nil.
func (f *VolcanoFit) ScoreNodes(req []int64, o *Override, rows resource.Rows, out []float64) error {
	if err := checkRows(f.k, req, rows, out); err != nil {
		return err
	}
	alloc, used := rows.Allocatable, rows.Used
	var buf [resource.MaxResources]taskSlot
	slots, ok := f.taskSlots(req, o, &buf)
	if !ok {
		clear(out)
		return nil
	}
	scale := MaxNodeScore * float64(f.pluginWeight)
	if rows.Columns.Has() && volcanoKernel(slots, rows.Columns, scale, out) {
		return nil
	}
	k := len(req)
	for i := range out {
		out[i] = volcanoNode(slots, alloc[i*k:i*k+k], used[i*k:i*k+k]) * scale
	}
	return nil
}

// volcanoNode returns Σ s_i / Σ w_i, before the plugin scale.
func volcanoNode(slots []taskSlot, alloc, used []int64) float64 {
	score := 0.0
	var weightSum int64
	for _, s := range slots {
		capacity := alloc[s.slot]
		if capacity == 0 || s.weight == 0 {
			weightSum += s.weight
			continue
		}
		usedFinally := float64(s.req) + float64(used[s.slot])
		c := float64(capacity)
		if usedFinally > c {
			return 0
		}
		switch s.typ {
		case MostAllocated:
			score += usedFinally * float64(s.weight) / c
		case LeastAllocated:
			score += (c - usedFinally) * float64(s.weight) / c
		}
		weightSum += s.weight
	}
	if weightSum > 0 {
		score /= float64(weightSum)
	}
	return score
}

// Binpack weights, as Volcano's binpack plugin defaults them.
const (
	DefaultBinpackWeight = 1
)

// NewBinpack builds Volcano's binpack score: MostAllocated for cpu, memory
// and the listed extended resources, each with its weight (0 allowed),
// scaled by 100 × weight. It is VolcanoFit with every type MostAllocated:
//
//	score = (Σ (req_i + used_i) · w_i / alloc_i) / Σ w_i × 100 × binpack.weight
//
// with a node scoring 0 when any requested resource would overflow. cpu and
// memory weights replace any given for them in resources, as Volcano does.
func NewBinpack(schema *resource.Schema, weight, cpu, memory int64, resources map[string]int64) (*VolcanoFit, error) {
	rs := make([]Resource, 0, len(resources)+2)
	for _, n := range slices.Sorted(maps.Keys(resources)) {
		if n == resource.CPU || n == resource.Memory {
			continue
		}
		rs = append(rs, Resource{Name: n, Type: MostAllocated, Weight: resources[n]})
	}
	rs = append(rs, Resource{Name: resource.CPU, Type: MostAllocated, Weight: cpu},
		Resource{Name: resource.Memory, Type: MostAllocated, Weight: memory})
	f, err := NewVolcanoFit(schema, rs, weight)
	if err != nil {
		return nil, fmt.Errorf("binpack: %w", err)
	}
	return f, nil
}
