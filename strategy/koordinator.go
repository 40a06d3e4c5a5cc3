package strategy

import (
	"fmt"

	"github.com/resfit/resfit/resource"
)

// KoordinatorFit is Koordinator's NodeResourcesFitPlus score: a type and a
// weight per resource, in integers. It reads two request vectors, as
// Koordinator does: which resources take part is decided by the plain
// request (kube's resource.PodRequests without non-zero defaults); the
// amounts scored are the non-zero ones (resource.KoordinatorPodRequests).
// Per node, over the configured resources i with plain req_i > 0 (a
// resource the task does not request, or requests as 0, is not scored and
// its weight does not count; the "pods" slot never takes part):
//
//	s_i = MostRequestedScore(used_i + nonZero_i, alloc_i) or LeastRequestedScore(...)
//	      (0 when the node lacks the resource; its weight still counts)
//	score = Σ(w_i·s_i) / Σw_i   (truncated; 100 when no resource takes part)
//
// So a pod asking only for 2 GPUs, under GPU Most/2, cpu Least/1 and
// memory Least/1, scores 2×100/8 = 25 on an empty 8-GPU node: cpu and
// memory, which it requests only through the non-zero defaults, do not
// count.
type KoordinatorFit struct {
	k     int
	pods  int // the "pods" slot, or -1
	specs []slotSpec
}

// NewKoordinatorFit builds the scorer. At least one resource is required;
// every resource needs a type and a weight in [1, resource.MaxWeight].
func NewKoordinatorFit(schema *resource.Schema, rs []Resource) (*KoordinatorFit, error) {
	if err := checkResources(rs, true); err != nil {
		return nil, fmt.Errorf("NodeResourcesFitPlus: %w", err)
	}
	f := &KoordinatorFit{k: schema.Len(), pods: -1, specs: kubeResources(schema, rs, 0)}
	if slot, ok := schema.Slot(resource.Pods); ok {
		f.pods = slot
	}
	return f, nil
}

// taskSlots keeps the configured resources the task requests (plain
// request > 0), with their non-zero amounts.
func (f *KoordinatorFit) taskSlots(req, nonZero []int64, dst *[resource.MaxResources]taskSlot) []taskSlot {
	n := 0
	for _, s := range f.specs {
		if req[s.slot] > 0 && s.slot != f.pods {
			dst[n] = taskSlot{slot: s.slot, typ: s.typ, weight: s.weight, req: nonZero[s.slot]}
			n++
		}
	}
	return dst[:n]
}

// ScoreNode scores one node from the plain and the non-zero request; the
// result is in [0, 100]. It panics if a vector's length is not the
// schema's.
func (f *KoordinatorFit) ScoreNode(req, nonZero, alloc, used []int64) float64 {
	resource.MustLen("strategy.KoordinatorFit.ScoreNode", f.k, req, nonZero, alloc, used)
	var buf [resource.MaxResources]taskSlot
	return float64(koordinatorNode(f.taskSlots(req, nonZero, &buf), alloc, used))
}

// ScoreNodes scores every node of rows (with non-zero used amounts for cpu
// and memory) into out.
func (f *KoordinatorFit) ScoreNodes(req, nonZero []int64, rows resource.Rows, out []float64) error {
	if err := checkRows(f.k, req, rows, out); err != nil {
		return err
	}
	if len(nonZero) != f.k {
		return fmt.Errorf("a non-zero request of %d amounts for a schema of %d resources", len(nonZero), f.k)
	}
	alloc, used := rows.Allocatable, rows.Used
	var buf [resource.MaxResources]taskSlot
	slots := f.taskSlots(req, nonZero, &buf)
	if len(slots) > 0 && rows.Columns.Has() && fitKernel(slots, rows.Columns, out, true) {
		return nil
	}
	k := f.k
	for i := range out {
		out[i] = float64(koordinatorNode(slots, alloc[i*k:i*k+k], used[i*k:i*k+k]))
	}
	return nil
}

func koordinatorNode(slots []taskSlot, alloc, used []int64) int64 {
	var score, weightSum int64
	for _, s := range slots {
		score += requestedScore(s.typ, used[s.slot]+s.req, alloc[s.slot]) * s.weight
		weightSum += s.weight
	}
	if weightSum == 0 {
		return MaxNodeScore
	}
	return score / weightSum
}
