// Package sra is scarce-resource avoidance: keeping work that does not need a
// scarce resource (a GPU) off the nodes that have it, and keeping enough cpu
// and memory free on those nodes for their free GPUs.
//
// It offers four pieces, each built once for a resource.Schema, immutable
// and safe for concurrent use, with a batch form that walks a
// resource.Table's matrices without allocating (and reports inputs that do
// not fit the schema as an error) and a per-node form (which panics if its
// vectors' lengths are not the schema's, a programming error):
//
//   - Retention, Volcano's sra retention score;
//   - Proportional, Volcano's sra proportional filter;
//   - Avoidance, Koordinator's ScarceResourceAvoidance score;
//   - Size, resfit's own score that keeps pods off the largest nodes
//     when a smaller one holds them, so those stay for the pods only
//     they can hold.
package sra

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/resfit/resfit/resource"
)

// MaxNodeScore is the scale of the scores.
const MaxNodeScore = 100

// Weighted is one scarce resource with its weight.
type Weighted struct {
	Name   string
	Weight int64
}

// Retention is Volcano's sra retention score. It prefers, for a task, nodes
// without the scarce resources the task does not need:
//
//	0, when the node lacks (allocatable 0) any resource the task requests;
//	else (1 − Σ_{scarce r the node has} w_r / Σ_r w_r) × 100 × weight,
//
// which is 100 × weight × (Σ weights of the scarce resources the node does
// not have) / (Σ all their weights), computed in float64 in Volcano's order.
// It checks presence, not fit. The result is in [0, 100 × weight]; with
// every resource weight 0 it is 0, as in Volcano.
type Retention struct {
	k         int
	weight    int64
	scarce    []slotWeight // scarce resources in the schema
	weightSum int64        // over every configured scarce resource, in the schema or not
}

type slotWeight struct {
	slot   int
	weight int64
}

// NewRetention builds the score. weight is the policy's weight (sra's
// retention weight, in [0, resource.MaxWeight]); resources are the scarce
// resources with weights in [0, resource.MaxWeight] and distinct names. A
// scarce resource outside the schema is on no node: it counts in the weight
// sum, as in Volcano.
func NewRetention(schema *resource.Schema, weight int64, resources []Weighted) (*Retention, error) {
	if weight < 0 || weight > resource.MaxWeight {
		return nil, fmt.Errorf("sra retention: weight must be in [0, %d], got %d", resource.MaxWeight, weight)
	}
	r := &Retention{k: schema.Len(), weight: weight}
	seen := map[string]bool{}
	for i, w := range resources {
		if w.Weight < 0 || w.Weight > resource.MaxWeight {
			return nil, fmt.Errorf("sra retention: resources[%d] (%s): weight must be in [0, %d], got %d", i, w.Name, resource.MaxWeight, w.Weight)
		}
		if seen[w.Name] {
			return nil, fmt.Errorf("sra retention: resources[%d]: %q appears twice", i, w.Name)
		}
		seen[w.Name] = true
		r.weightSum += w.Weight
		if slot, ok := schema.Slot(w.Name); ok {
			r.scarce = append(r.scarce, slotWeight{slot, w.Weight})
		}
	}
	return r, nil
}

// MaxScore is 100 × weight.
func (r *Retention) MaxScore() float64 { return float64(MaxNodeScore * r.weight) }

// ScoreNode scores one node from the task's request and the node's
// allocatable amounts. It panics if a vector's length is not the schema's.
func (r *Retention) ScoreNode(req, alloc []int64) float64 {
	resource.MustLen("sra.Retention.ScoreNode", r.k, req, alloc)
	var buf [resource.MaxResources]int
	return r.node(requested(req, &buf), alloc)
}

// ScoreRows scores every node of rows into out: as ScoreNodes does, over
// the rows' columns where they have them and the build has kernels
// (kernel_amd64.go), to the same bits.
func (r *Retention) ScoreRows(req []int64, rows resource.Rows, out []float64) error {
	if err := checkMatrix(r.k, req, rows.Allocatable, out); err != nil {
		return err
	}
	if rows.Columns.Holds(len(out), r.k) {
		var buf [resource.MaxResources]int
		if retentionKernel(r, requested(req, &buf), rows.Columns, out) {
			return nil
		}
	}
	return r.ScoreNodes(req, rows.Allocatable, out)
}

// ScoreNodes scores every node of a row-major allocatable matrix into out.
func (r *Retention) ScoreNodes(req, alloc []int64, out []float64) error {
	if err := checkMatrix(r.k, req, alloc, out); err != nil {
		return err
	}
	var buf [resource.MaxResources]int
	slots := requested(req, &buf)
	k := len(req)
	for i := range out {
		out[i] = r.node(slots, alloc[i*k:i*k+k])
	}
	return nil
}

func (r *Retention) node(requestedSlots []int, alloc []int64) float64 {
	for _, s := range requestedSlots {
		if alloc[s] == 0 {
			return 0
		}
	}
	score := 0.0
	for _, s := range r.scarce {
		if alloc[s.slot] > 0 {
			score += float64(s.weight)
		}
	}
	if r.weightSum > 0 {
		score /= float64(r.weightSum)
		score = 1.0 - score
	}
	return score * float64(MaxNodeScore*r.weight)
}

// requested lists the slots the task requests.
func requested(req []int64, dst *[resource.MaxResources]int) []int {
	n := 0
	for slot, v := range req {
		if v > 0 {
			dst[n] = slot
			n++
		}
	}
	return dst[:n]
}

// checkMatrix reports whether a request and a row-major matrix fit a
// schema of k resources.
func checkMatrix(k int, req, alloc []int64, out []float64) error {
	if len(req) != k {
		return fmt.Errorf("a request of %d amounts for a schema of %d resources", len(req), k)
	}
	if len(alloc) != k*len(out) {
		return fmt.Errorf("a matrix of %d amounts does not hold %d nodes of %d resources", len(alloc), len(out), k)
	}
	return nil
}

// Avoidance is Koordinator's ScarceResourceAvoidance score. With diff the
// resource types the node has (allocatable > 0) that the task does not
// request, and inter those of diff in the scarce list:
//
//	100                                   if diff or inter is empty
//	(|diff| − |inter|) × 100 / |diff|     otherwise (integer division)
//
// A "pods" slot is not a resource type here: Koordinator counts cpu,
// memory, ephemeral-storage and scalar resources.
type Avoidance struct {
	k       int
	counted uint64 // slots that are resource types
	scarce  uint64 // slots in the scarce list
}

// NewAvoidance builds the score for the scarce resource names.
func NewAvoidance(schema *resource.Schema, scarce []string) (*Avoidance, error) {
	a := &Avoidance{k: schema.Len()}
	for i := 0; i < schema.Len(); i++ {
		if schema.Name(i) != resource.Pods {
			a.counted |= 1 << i
		}
	}
	for i, n := range scarce {
		if err := resource.ValidateName(n); err != nil {
			return nil, fmt.Errorf("ScarceResourceAvoidance: resources[%d]: %w", i, err)
		}
		if slot, ok := schema.Slot(n); ok {
			a.scarce |= 1 << slot
		}
	}
	return a, nil
}

// MaxScore is 100.
func (a *Avoidance) MaxScore() float64 { return MaxNodeScore }

// ScoreNode scores one node. It panics if a vector's length is not the
// schema's.
func (a *Avoidance) ScoreNode(req, alloc []int64) int64 {
	resource.MustLen("sra.Avoidance.ScoreNode", a.k, req, alloc)
	return a.node(mask(req), alloc)
}

// ScoreNodes scores every node of a row-major allocatable matrix into out.
func (a *Avoidance) ScoreNodes(req, alloc []int64, out []float64) error {
	if err := checkMatrix(a.k, req, alloc, out); err != nil {
		return err
	}
	want := mask(req)
	k := len(req)
	for i := range out {
		out[i] = float64(a.node(want, alloc[i*k:i*k+k]))
	}
	return nil
}

func (a *Avoidance) node(want uint64, alloc []int64) int64 {
	has := mask(alloc) & a.counted
	diff := has &^ want
	inter := diff & a.scarce
	if diff == 0 || inter == 0 {
		return MaxNodeScore
	}
	d, n := int64(bits.OnesCount64(diff)), int64(bits.OnesCount64(inter))
	return (d - n) * MaxNodeScore / d
}

// mask sets bit i where v[i] > 0.
func mask(v []int64) uint64 {
	var m uint64
	for i, x := range v {
		if x > 0 {
			m |= 1 << i
		}
	}
	return m
}

// SplitProportionKey splits a proportion key such as "nvidia.com/gpu.cpu"
// on its last dot into the primary resource and "cpu" or "memory". Resource
// names themselves contain dots, so only the last one separates.
func SplitProportionKey(k string) (primary, secondary string, ok bool) {
	i := strings.LastIndexByte(k, '.')
	if i <= 0 || i == len(k)-1 {
		return "", "", false
	}
	primary, secondary = k[:i], k[i+1:]
	return primary, secondary, secondary == resource.CPU || secondary == resource.Memory
}
