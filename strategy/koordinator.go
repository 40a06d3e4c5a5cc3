package strategy

import (
	"fmt"

	"github.com/resfit/resfit/resource"
)

// KoordinatorFit is Koordinator's NodeResourcesFitPlus score: a type and a
// weight per resource, in integers. Per node, over the configured resources
// the task requests (req_i > 0):
//
//	s_i = MostRequestedScore(used_i + req_i, alloc_i) or LeastRequestedScore(...)
//	      (0 when the node lacks the resource; its weight still counts)
//	score = Σ(w_i·s_i) / Σw_i   (truncated; 100 when the task requests none)
//
// Koordinator scores with non-zero requests, like kube-scheduler, but picks
// the resources by the plain requests.
type KoordinatorFit struct {
	specs []slotSpec
}

// NewKoordinatorFit builds the scorer. Every resource needs a type and a
// weight > 0.
func NewKoordinatorFit(schema *resource.Schema, rs []Resource) (*KoordinatorFit, error) {
	if err := checkResources(rs, true); err != nil {
		return nil, fmt.Errorf("NodeResourcesFitPlus: %w", err)
	}
	return &KoordinatorFit{specs: kubeResources(schema, rs, 0)}, nil
}

// requestedSlots keeps the configured resources the task requests.
func requestedSlots(specs []slotSpec, req []int64, dst *[resource.MaxResources]taskSlot) []taskSlot {
	n := 0
	for _, s := range specs {
		if req[s.slot] > 0 {
			dst[n] = taskSlot{slot: s.slot, typ: s.typ, weight: s.weight, req: req[s.slot]}
			n++
		}
	}
	return dst[:n]
}

// ScoreNode scores one node; the result is in [0, 100].
func (f *KoordinatorFit) ScoreNode(req, alloc, used []int64) float64 {
	var buf [resource.MaxResources]taskSlot
	return float64(koordinatorNode(requestedSlots(f.specs, req, &buf), alloc, used))
}

// ScoreNodes scores every node of rows into out.
func (f *KoordinatorFit) ScoreNodes(req []int64, rows resource.Rows, out []float64) error {
	if err := checkRows(req, rows, out); err != nil {
		return err
	}
	alloc, used := rows.Allocatable, rows.Used
	var buf [resource.MaxResources]taskSlot
	slots := requestedSlots(f.specs, req, &buf)
	k := len(req)
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
