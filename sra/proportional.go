package sra

import (
	"fmt"
	"math"
	"strconv"

	"github.com/resfit/resfit/resource"
)

// Ratio is how much cpu and memory to keep free per whole unit of a primary
// resource, in Volcano's units: CPU in cores per unit, Memory in decimal
// gigabytes (10^9 bytes) per unit.
type Ratio struct {
	Resource    string
	CPU, Memory float64
}

// Proportional is Volcano's sra proportional filter. A task that requests
// any primary resource passes. Any other task fails on a node when, for a
// primary resource g the node has (allocatable > 0), with idle = allocatable
// − used:
//
//	idle.cpu − task.cpu       < idle.g × ratio.cpu
//	idle.memory − task.memory < idle.g × ratio.memory
//
// Equality passes. The comparison is made in float64 as Volcano makes it:
// idle.g in milli-units times the cpu ratio against millicores, and times
// the memory ratio × 1000 × 1000 against bytes.
type Proportional struct {
	k           int
	cpu, memory int // slots, -1 when the schema lacks them
	ratios      []slotRatio
	primaries   uint64
}

type slotRatio struct {
	slot        int
	cpu, memory float64
}

// NewProportional builds the filter. Ratios must be finite and ≥ 0, one per
// primary resource.
func NewProportional(schema *resource.Schema, ratios []Ratio) (*Proportional, error) {
	p := &Proportional{k: schema.Len(), cpu: -1, memory: -1}
	if s, ok := schema.Slot(resource.CPU); ok {
		p.cpu = s
	}
	if s, ok := schema.Slot(resource.Memory); ok {
		p.memory = s
	}
	seen := map[string]bool{}
	for i, r := range ratios {
		for _, v := range []float64{r.CPU, r.Memory} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return nil, fmt.Errorf("sra proportional: ratios[%d] (%s): ratios must be finite and ≥ 0, got cpu %v, memory %v", i, r.Resource, r.CPU, r.Memory)
			}
		}
		if seen[r.Resource] {
			return nil, fmt.Errorf("sra proportional: ratios[%d]: %q appears twice", i, r.Resource)
		}
		seen[r.Resource] = true
		if slot, ok := schema.Slot(r.Resource); ok {
			p.ratios = append(p.ratios, slotRatio{slot, r.CPU, r.Memory})
			p.primaries |= 1 << slot
		}
	}
	return p, nil
}

// Failure describes why a node failed: the primary resource, whether cpu
// or memory ran short, the idle and requested amounts of it, the primary's
// idle amount and the ratio.
type Failure struct {
	Primary   int // slot
	Secondary int // slot of cpu or memory
	Idle      int64
	Request   int64
	IdleUnits int64 // idle amount of the primary resource, in milli-units
	Ratio     float64
}

// CheckNode reports whether the task may go to the node; when it may not,
// it says why. It panics if a vector's length is not the schema's.
func (p *Proportional) CheckNode(req, alloc, used []int64) (bool, Failure) {
	resource.MustLen("sra.Proportional.CheckNode", p.k, req, alloc, used)
	if mask(req)&p.primaries != 0 {
		return true, Failure{}
	}
	return p.node(req, alloc, used)
}

func (p *Proportional) node(req, alloc, used []int64) (bool, Failure) {
	var idleCPU, idleMem, reqCPU, reqMem int64
	if p.cpu >= 0 {
		idleCPU, reqCPU = alloc[p.cpu]-used[p.cpu], req[p.cpu]
	}
	if p.memory >= 0 {
		idleMem, reqMem = alloc[p.memory]-used[p.memory], req[p.memory]
	}
	for _, r := range p.ratios {
		if alloc[r.slot] == 0 {
			continue
		}
		idle := alloc[r.slot] - used[r.slot]
		value := float64(idle)
		if float64(idleCPU-reqCPU) < value*r.cpu {
			return false, Failure{Primary: r.slot, Secondary: p.cpu, Idle: idleCPU, Request: reqCPU, IdleUnits: idle, Ratio: r.cpu}
		}
		if float64(idleMem-reqMem) < value*r.memory*1000*1000 {
			return false, Failure{Primary: r.slot, Secondary: p.memory, Idle: idleMem, Request: reqMem, IdleUnits: idle, Ratio: r.memory}
		}
	}
	return true, Failure{}
}

// FilterRows is FilterNodes over rows: over their columns where they have
// them and the build has kernels (kernel_amd64.go), which find the nodes
// that fail several at a time; each is then checked alone for its
// Failure, so reject sees the same calls in the same order.
func (p *Proportional) FilterRows(req []int64, rows resource.Rows, reject func(node int, f Failure)) error {
	k := p.k
	if len(req) != k || k == 0 || len(rows.Allocatable)%k != 0 || len(rows.Used) != len(rows.Allocatable) {
		return p.FilterNodes(req, rows.Allocatable, rows.Used, reject)
	}
	n := len(rows.Allocatable) / k
	if mask(req)&p.primaries != 0 || !rows.Columns.Holds(n, k) {
		return p.FilterNodes(req, rows.Allocatable, rows.Used, reject)
	}
	if !proportionalKernel(p, req, rows, n, reject) {
		return p.FilterNodes(req, rows.Allocatable, rows.Used, reject)
	}
	return nil
}

// FilterNodes checks every node of the row-major matrices and calls reject
// for each that fails. It does not allocate unless reject does.
func (p *Proportional) FilterNodes(req, alloc, used []int64, reject func(node int, f Failure)) error {
	k := p.k
	if len(req) != k || len(used) != len(alloc) || (k > 0 && len(alloc)%k != 0) || (k == 0 && len(alloc) != 0) {
		return fmt.Errorf("a request of %d amounts and matrices of %d and %d amounts do not fit a schema of %d resources", len(req), len(alloc), len(used), k)
	}
	if k == 0 || mask(req)&p.primaries != 0 {
		return nil
	}
	for i := 0; i < len(alloc)/k; i++ {
		if ok, f := p.node(req, alloc[i*k:i*k+k], used[i*k:i*k+k]); !ok {
			reject(i, f)
		}
	}
	return nil
}

// Explain writes a failure as a sentence:
//
//	proportional of resource nvidia.com/gpu check failed: idle cpu 66 - request 8 < 8 GPUs x 8
//
// with cpu in cores and memory in decimal gigabytes, as the ratios are.
func (f Failure) Explain(schema *resource.Schema) string {
	primary := schema.Name(f.Primary)
	secondary, unit, scale := resource.CPU, "", 1000.0
	if f.Secondary >= 0 && schema.Name(f.Secondary) == resource.Memory {
		secondary, unit, scale = resource.Memory, "G", 1e9
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	return fmt.Sprintf("proportional of resource %s check failed: idle %s %s%s - request %s%s < %s GPUs x %s%s",
		primary, secondary, num(float64(f.Idle)/scale), unit, num(float64(f.Request)/scale), unit,
		resource.FormatAmount(primary, f.IdleUnits), num(f.Ratio), unit)
}
