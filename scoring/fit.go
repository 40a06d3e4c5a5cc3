package scoring

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/resfit/resfit/resource"
)

// NodeResourcesFit is the fit filter's name, kube-scheduler's.
const NodeResourcesFit = "NodeResourcesFit"

// FitFilter rejects a node without enough free amount of a resource the
// task requests, as kube-scheduler's NodeResourcesFit filter and Volcano's
// allocate action do: a node fails when req > allocatable − used. A
// "pods" slot, when the schema has one, counts every task as one pod.
type FitFilter struct {
	ignored map[string]bool
	groups  []string
	// plan is what the filter checks for the schema it last saw, so that a
	// call on a few rows (a Placer's) does not look names up again.
	plan atomic.Pointer[fitPlan]
}

// fitPlan is the slots a FitFilter checks for one schema.
type fitPlan struct {
	schema *resource.Schema
	slots  []int
	pods   int // the "pods" slot, or -1
}

// NewFitFilter returns the filter. Resources named in ignored, or whose
// domain prefix is in ignoredGroups, are not checked (kube-scheduler's
// ignoredResources and ignoredResourceGroups).
func NewFitFilter(ignored, ignoredGroups []string) *FitFilter {
	f := &FitFilter{ignored: map[string]bool{}, groups: append([]string(nil), ignoredGroups...)}
	for _, n := range ignored {
		f.ignored[n] = true
	}
	return f
}

func (f *FitFilter) Name() string { return NodeResourcesFit }

// Freed is 0: the filter is Monotone and reads nothing but the table.
func (f *FitFilter) Freed() uint64 { return 0 }

// planFor returns the checked slots for a schema, worked out once per
// schema (it allocates only then).
func (f *FitFilter) planFor(schema *resource.Schema) *fitPlan {
	if p := f.plan.Load(); p != nil && p.schema == schema {
		return p
	}
	p := &fitPlan{schema: schema, pods: -1}
	for i := 0; i < schema.Len(); i++ {
		name := schema.Name(i)
		if f.ignored[name] {
			continue
		}
		if prefix, _, ok := strings.Cut(name, "/"); ok && slices.Contains(f.groups, prefix) {
			continue
		}
		p.slots = append(p.slots, i)
	}
	if s, ok := schema.Slot(resource.Pods); ok {
		p.pods = s
	}
	f.plan.Store(p)
	return p
}

func (f *FitFilter) FilterNodes(task *Task, nodes Span, v *Verdicts) error {
	plan := f.planFor(nodes.Table().Schema())
	podsSlot := plan.pods
	var buf [resource.MaxResources]int
	var reqs [resource.MaxResources]int64
	slots := buf[:0]
	n := 0
	for _, slot := range plan.slots {
		if r := fitRequest(task, slot, podsSlot); r > 0 {
			slots, reqs[n] = append(slots, slot), r
			n++
		}
	}
	rows := nodes.Rows()
	alloc, used, k := rows.Allocatable, rows.Used, rows.Stride
	for i := 0; i < nodes.Len(); i++ {
		a, u := alloc[i*k:i*k+k], used[i*k:i*k+k]
		for j, slot := range slots {
			if free := a[slot] - u[slot]; reqs[j] > free {
				v.Reject(i, slot)
				break
			}
		}
	}
	return nil
}

// fitRequest is what the filter checks of a slot: the request, and at
// least one of a "pods" slot.
func fitRequest(task *Task, slot, podsSlot int) int64 {
	r := task.Requests[slot]
	if slot == podsSlot && r == 0 {
		r = 1
	}
	return r
}

func (f *FitFilter) Explain(task *Task, nodes *resource.Table, row, slot int) string {
	schema := nodes.Schema()
	name := schema.Name(slot)
	podsSlot, ok := schema.Slot(resource.Pods)
	if !ok {
		podsSlot = -1
	}
	free := nodes.Allocatable(row)[slot] - nodes.Used(row)[slot]
	return fmt.Sprintf("insufficient %s: requested %s, free %s", name,
		resource.FormatAmount(name, fitRequest(task, slot, podsSlot)), resource.FormatAmount(name, free))
}
