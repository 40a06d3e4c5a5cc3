package strategy

import (
	"fmt"

	"github.com/resfit/resfit/resource"
)

// PackLeastUsed packs a node by its least-used resource: a node scores by
// how full its emptiest configured resource would be with the task on it,
// so that the fullest node wins and a node that is nearly empty in any
// resource loses. Per node, over the configured resources the node has
// (allocatable > 0):
//
//	s_i   = MostRequestedScore(used_i + req_i, alloc_i)   (kube-scheduler's, 0..100)
//	score = min_i s_i                                     (0 when the node has none)
//
// Unlike kube-scheduler's MostAllocated, which averages the resources, the
// minimum does not reward a node for being full in one resource while
// another lies idle: a GPU pod goes where the node's cpu and GPUs both
// fill, and nodes that are emptying stay empty, so whole nodes come free
// where pods come and go (ResfitFrag's tie-breaker, bench/replay). Every
// configured resource counts whether or not the task requests it: the
// score is about the node's fill, not the task's share of it.
type PackLeastUsed struct {
	k     int
	slots []int
}

// PackLeastUsedName is the scorer's name in a configuration and an
// explanation.
const PackLeastUsedName = "PackLeastUsed"

// NewPackLeastUsed builds the scorer over the named resources; at least one
// is required, each once. A name outside the schema is on no node and is
// dropped.
func NewPackLeastUsed(schema *resource.Schema, names []string) (*PackLeastUsed, error) {
	rs := make([]Resource, len(names))
	for i, n := range names {
		rs[i] = Resource{Name: n, Weight: 1}
	}
	if err := checkResources(rs, false); err != nil {
		return nil, fmt.Errorf("%s: %w", PackLeastUsedName, err)
	}
	p := &PackLeastUsed{k: schema.Len()}
	for _, s := range kubeResources(schema, rs, MostAllocated) {
		p.slots = append(p.slots, s.slot)
	}
	return p, nil
}

// ScoreNode scores one node; the result is in [0, 100]. It panics if a
// vector's length is not the schema's.
func (p *PackLeastUsed) ScoreNode(req, alloc, used []int64) float64 {
	resource.MustLen("strategy.PackLeastUsed.ScoreNode", p.k, req, alloc, used)
	return float64(p.node(req, alloc, used))
}

// ScoreNodes scores every node of rows into out.
func (p *PackLeastUsed) ScoreNodes(req []int64, rows resource.Rows, out []float64) error {
	if err := checkRows(p.k, req, rows, out); err != nil {
		return err
	}
	k := len(req)
	alloc, used := rows.Allocatable, rows.Used
	for i := range out {
		out[i] = float64(p.node(req, alloc[i*k:i*k+k], used[i*k:i*k+k]))
	}
	return nil
}

func (p *PackLeastUsed) node(req, alloc, used []int64) int64 {
	score, any := int64(MaxNodeScore), false
	for _, s := range p.slots {
		if alloc[s] == 0 {
			continue
		}
		score = min(score, MostRequestedScore(used[s]+req[s], alloc[s]))
		any = true
	}
	if !any {
		return 0
	}
	return score
}
