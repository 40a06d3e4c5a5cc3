package strategy

import (
	"fmt"
	"math"

	"github.com/resfit/resfit/resource"
)

// kubeResources resolves a kube-scheduler resource list against a schema.
// A configured resource outside the schema is on no node and requested by
// no task, so kube-scheduler would skip it on every node; it is dropped.
func kubeResources(schema *resource.Schema, rs []Resource, t Type) []slotSpec {
	specs := make([]slotSpec, 0, len(rs))
	for _, r := range rs {
		slot, ok := schema.Slot(r.Name)
		if !ok {
			continue
		}
		typ := t
		if typ == 0 {
			typ = r.Type
		}
		specs = append(specs, slotSpec{slot: slot, typ: typ, weight: r.Weight, scalar: resource.IsScalar(r.Name)})
	}
	return specs
}

// kubeTaskSlots keeps the resources kube-scheduler scores for this request:
// it skips a scalar resource (extended, hugepages) the pod does not request.
func kubeTaskSlots(specs []slotSpec, req []int64, dst *[resource.MaxResources]taskSlot) []taskSlot {
	n := 0
	for _, s := range specs {
		if s.scalar && req[s.slot] == 0 {
			continue
		}
		dst[n] = taskSlot{slot: s.slot, typ: s.typ, weight: s.weight, req: req[s.slot]}
		n++
	}
	return dst[:n]
}

// KubeFit is kube-scheduler v1.37's NodeResourcesFit score with the
// MostAllocated or LeastAllocated strategy: one type for all resources, a
// weight per resource. Per node:
//
//	for each configured resource i, skipping a scalar resource the pod does
//	not request and any resource with allocatable 0:
//	    requested_i = used_i + req_i
//	    s_i = MostRequestedScore(requested_i, alloc_i) or LeastRequestedScore(...)
//	score = Σ(w_i·s_i) / Σw_i   (truncated; 0 when no resource is left)
//
// kube-scheduler scores with "non-zero" requests (resource.PodRequests with
// nonZero, and the node's used amounts summed the same way).
type KubeFit struct {
	typ   Type
	k     int // schema length
	specs []slotSpec
}

// NewKubeFit builds a KubeFit of type t (MostAllocated or LeastAllocated).
// Resource.Type is ignored; at least one resource is required (as in
// kube-scheduler, which refuses to score with none), weights must be in
// [1, resource.MaxWeight] and names distinct.
func NewKubeFit(schema *resource.Schema, t Type, rs []Resource) (*KubeFit, error) {
	if t != MostAllocated && t != LeastAllocated {
		return nil, fmt.Errorf("NodeResourcesFit: unknown strategy type %v", t)
	}
	if err := checkResources(rs, false); err != nil {
		return nil, fmt.Errorf("NodeResourcesFit: %w", err)
	}
	return &KubeFit{typ: t, k: schema.Len(), specs: kubeResources(schema, rs, t)}, nil
}

// ScoreNode scores one node; the result is in [0, 100]. It panics if a
// vector's length is not the schema's.
func (f *KubeFit) ScoreNode(req, alloc, used []int64) float64 {
	resource.MustLen("strategy.KubeFit.ScoreNode", f.k, req, alloc, used)
	var buf [resource.MaxResources]taskSlot
	return float64(kubeFitNode(kubeTaskSlots(f.specs, req, &buf), alloc, used))
}

// ScoreNodes scores every node of rows into out.
func (f *KubeFit) ScoreNodes(req []int64, rows resource.Rows, out []float64) error {
	if err := checkRows(f.k, req, rows, out); err != nil {
		return err
	}
	alloc, used := rows.Allocatable, rows.Used
	var buf [resource.MaxResources]taskSlot
	slots := kubeTaskSlots(f.specs, req, &buf)
	if rows.Columns.Has() && fitKernel(slots, rows.Columns, out, false) {
		return nil
	}
	k := len(req)
	for i := range out {
		out[i] = float64(kubeFitNode(slots, alloc[i*k:i*k+k], used[i*k:i*k+k]))
	}
	return nil
}

func kubeFitNode(slots []taskSlot, alloc, used []int64) int64 {
	var score, weightSum int64
	for _, s := range slots {
		capacity := alloc[s.slot]
		if capacity == 0 {
			continue
		}
		score += requestedScore(s.typ, used[s.slot]+s.req, capacity) * s.weight
		weightSum += s.weight
	}
	if weightSum == 0 {
		return 0
	}
	return score / weightSum
}

// ShapePoint is one point of a RequestedToCapacityRatio shape as configured
// upstream: Utilization in [0, 100], Score in [0, 10].
type ShapePoint struct {
	Utilization int64
	Score       int64
}

// MaxShapeScore is the largest Score of a ShapePoint.
const MaxShapeScore = 10

// RequestedToCapacityRatio is kube-scheduler v1.37's NodeResourcesFit score
// with the RequestedToCapacityRatio strategy (KEP "Extending
// RequestedToCapacityRatio to support resource bin packing of extended
// resources"). Shape scores are scaled ×10 to 0..100, and per node:
//
//	for each configured resource i, skipping as KubeFit does:
//	    u_i = (used_i + req_i) × 100 / alloc_i   (truncated; 100 if over capacity)
//	    s_i = f(u_i), f broken-linear through the shape, truncating
//	    resources with s_i = 0 do not count, nor does their weight
//	score = round(Σ(w_i·s_i) / Σw_i)   (math.Round; 0 when nothing counts)
//
// The KEP's own worked example rounds the utilisation (37.5 → 4 on the old
// 0..10 scale); kube-scheduler truncates it first (37 → 3) and scores on
// 0..100. This type follows kube-scheduler.
type RequestedToCapacityRatio struct {
	k     int
	specs []slotSpec
	shape []ShapePoint // scores ×10
}

// NewRequestedToCapacityRatio builds the scorer. Resources are as for
// NewKubeFit; the shape needs at least one point, utilisations strictly
// increasing in [0, 100], scores in [0, 10].
func NewRequestedToCapacityRatio(schema *resource.Schema, rs []Resource, shape []ShapePoint) (*RequestedToCapacityRatio, error) {
	if err := checkResources(rs, false); err != nil {
		return nil, fmt.Errorf("RequestedToCapacityRatio: %w", err)
	}
	if err := CheckShape(shape); err != nil {
		return nil, fmt.Errorf("RequestedToCapacityRatio: %w", err)
	}
	scaled := make([]ShapePoint, len(shape))
	for i, p := range shape {
		scaled[i] = ShapePoint{Utilization: p.Utilization, Score: p.Score * (MaxNodeScore / MaxShapeScore)}
	}
	return &RequestedToCapacityRatio{k: schema.Len(), specs: kubeResources(schema, rs, MostAllocated), shape: scaled}, nil
}

// ShapeError is a shape point kube-scheduler would refuse: Field
// ("utilization" or "score") of point Point.
type ShapeError struct {
	Point  int
	Field  string
	Detail string
	Value  int64
}

func (e *ShapeError) Error() string {
	return fmt.Sprintf("shape[%d].%s: %s, got %d", e.Point, e.Field, e.Detail, e.Value)
}

// CheckShape validates a shape as kube-scheduler does: at least one point,
// utilisations strictly increasing in [0, 100], scores in [0, 10]. A bad
// point is reported as a *ShapeError.
func CheckShape(shape []ShapePoint) error {
	if len(shape) == 0 {
		return fmt.Errorf("shape: at least one point must be specified")
	}
	for i, p := range shape {
		if i > 0 && shape[i-1].Utilization >= p.Utilization {
			return &ShapeError{i, "utilization", fmt.Sprintf("values must be sorted in increasing order: must be above the previous point's %d", shape[i-1].Utilization), p.Utilization}
		}
		if p.Utilization < 0 || p.Utilization > 100 {
			return &ShapeError{i, "utilization", "must be in [0, 100]", p.Utilization}
		}
		if p.Score < 0 || p.Score > MaxShapeScore {
			return &ShapeError{i, "score", "must be in [0, 10]", p.Score}
		}
	}
	return nil
}

// brokenLinear evaluates the shape at utilisation p: the first point's score
// below it, the last point's above, linear (truncating) in between.
func brokenLinear(shape []ShapePoint, p int64) int64 {
	for i, pt := range shape {
		if p <= pt.Utilization {
			if i == 0 {
				return pt.Score
			}
			prev := shape[i-1]
			return prev.Score + (pt.Score-prev.Score)*(p-prev.Utilization)/(pt.Utilization-prev.Utilization)
		}
	}
	return shape[len(shape)-1].Score
}

// ScoreNode scores one node; the result is in [0, 100]. It panics if a
// vector's length is not the schema's.
func (r *RequestedToCapacityRatio) ScoreNode(req, alloc, used []int64) float64 {
	resource.MustLen("strategy.RequestedToCapacityRatio.ScoreNode", r.k, req, alloc, used)
	var buf [resource.MaxResources]taskSlot
	return float64(r.node(kubeTaskSlots(r.specs, req, &buf), alloc, used))
}

// ScoreNodes scores every node of rows into out.
func (r *RequestedToCapacityRatio) ScoreNodes(req []int64, rows resource.Rows, out []float64) error {
	if err := checkRows(r.k, req, rows, out); err != nil {
		return err
	}
	alloc, used := rows.Allocatable, rows.Used
	var buf [resource.MaxResources]taskSlot
	slots := kubeTaskSlots(r.specs, req, &buf)
	if rows.Columns.Has() && rtcrKernel(slots, r.shape, rows.Columns, out) {
		return nil
	}
	k := len(req)
	for i := range out {
		out[i] = float64(r.node(slots, alloc[i*k:i*k+k], used[i*k:i*k+k]))
	}
	return nil
}

func (r *RequestedToCapacityRatio) node(slots []taskSlot, alloc, used []int64) int64 {
	return rtcrNode(slots, r.shape, alloc, used)
}

func rtcrNode(slots []taskSlot, shape []ShapePoint, alloc, used []int64) int64 {
	var score, weightSum int64
	for _, s := range slots {
		capacity := alloc[s.slot]
		if capacity == 0 {
			continue
		}
		requested := used[s.slot] + s.req
		utilization := int64(100)
		if requested <= capacity {
			utilization = requested * 100 / capacity
		}
		if rs := brokenLinear(shape, utilization); rs > 0 {
			score += rs * s.weight
			weightSum += s.weight
		}
	}
	if weightSum == 0 {
		return 0
	}
	return int64(math.Round(float64(score) / float64(weightSum)))
}

// BalancedAllocation is kube-scheduler v1.37's
// NodeResourcesBalancedAllocation score. It rewards a placement that makes
// the node's utilisation fractions more even. Per node, over the configured
// resources (skipping as KubeFit does):
//
//	f_i = min(requested_i / alloc_i, 1)            (float64)
//	std = |f_0 − f_1| / 2 for two resources, the population standard
//	      deviation for more, 0 for fewer
//	B(requested) = int64((1 − std) × 100)
//	score = 50 + (50 + B(used + req) − B(used)) / 2   (integers, truncated)
//
// A task that requests none of the resources (best effort) scores 0 on every
// node: kube-scheduler skips the plugin for it. BalancedAllocation uses the
// plain requests, not the non-zero ones. Weights are ignored (kube-scheduler
// requires them to be 1).
type BalancedAllocation struct {
	k     int
	specs []slotSpec
}

// NewBalancedAllocation builds the scorer over the named resources, in
// order (the order of the standard deviation's sum); at least one is
// required.
func NewBalancedAllocation(schema *resource.Schema, names []string) (*BalancedAllocation, error) {
	rs := make([]Resource, len(names))
	for i, n := range names {
		rs[i] = Resource{Name: n, Weight: 1}
	}
	if err := checkResources(rs, false); err != nil {
		return nil, fmt.Errorf("NodeResourcesBalancedAllocation: %w", err)
	}
	return &BalancedAllocation{k: schema.Len(), specs: kubeResources(schema, rs, MostAllocated)}, nil
}

// ScoreNode scores one node; the result is in [50, 100], or 0 for a
// best-effort task. It panics if a vector's length is not the schema's.
func (b *BalancedAllocation) ScoreNode(req, alloc, used []int64) float64 {
	resource.MustLen("strategy.BalancedAllocation.ScoreNode", b.k, req, alloc, used)
	var buf [resource.MaxResources]taskSlot
	slots := kubeTaskSlots(b.specs, req, &buf)
	if bestEffort(slots) {
		return 0
	}
	return float64(balancedNode(slots, alloc, used))
}

// ScoreNodes scores every node of rows into out.
func (b *BalancedAllocation) ScoreNodes(req []int64, rows resource.Rows, out []float64) error {
	if err := checkRows(b.k, req, rows, out); err != nil {
		return err
	}
	alloc, used := rows.Allocatable, rows.Used
	var buf [resource.MaxResources]taskSlot
	slots := kubeTaskSlots(b.specs, req, &buf)
	if bestEffort(slots) {
		clear(out)
		return nil
	}
	if rows.Columns.Has() && balancedKernel(slots, rows.Columns, out) {
		return nil
	}
	k := len(req)
	for i := range out {
		out[i] = float64(balancedNode(slots, alloc[i*k:i*k+k], used[i*k:i*k+k]))
	}
	return nil
}

func bestEffort(slots []taskSlot) bool {
	for _, s := range slots {
		if s.req != 0 {
			return false
		}
	}
	return true
}

func balancedNode(slots []taskSlot, alloc, used []int64) int64 {
	withPod := balance(slots, alloc, used, true)
	withoutPod := balance(slots, alloc, used, false)
	return MaxNodeScore/2 + (MaxNodeScore/2+withPod-withoutPod)/2
}

func balance(slots []taskSlot, alloc, used []int64, withPod bool) int64 {
	// Two passes over the fractions rather than a buffer of them: the same
	// numbers, without clearing MaxResources floats for every node.
	n := 0
	var total, first, second float64
	for _, s := range slots {
		f, ok := fraction(s, alloc, used, withPod)
		if !ok {
			continue
		}
		switch n {
		case 0:
			first = f
		case 1:
			second = f
		}
		total += f
		n++
	}
	std := 0.0
	switch {
	case n == 2:
		std = math.Abs((first - second) / 2)
	case n > 2:
		mean := total / float64(n)
		var sum float64
		for _, s := range slots {
			if f, ok := fraction(s, alloc, used, withPod); ok {
				sum += (f - mean) * (f - mean)
			}
		}
		std = math.Sqrt(sum / float64(n))
	}
	return int64((1 - std) * MaxNodeScore)
}

// fraction is a slot's requested share of the node's capacity, at most 1,
// with or without the task; false when the node has none of it.
func fraction(s taskSlot, alloc, used []int64, withPod bool) (float64, bool) {
	capacity := alloc[s.slot]
	if capacity == 0 {
		return 0, false
	}
	requested := used[s.slot]
	if withPod {
		requested += s.req
	}
	return min(float64(requested)/float64(capacity), 1), true
}
