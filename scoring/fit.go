package scoring

import (
	"fmt"
	"slices"
	"strings"

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

func (f *FitFilter) checked(schema *resource.Schema, dst *[resource.MaxResources]int) []int {
	n := 0
	for i := 0; i < schema.Len(); i++ {
		name := schema.Name(i)
		if f.ignored[name] {
			continue
		}
		if prefix, _, ok := strings.Cut(name, "/"); ok && slices.Contains(f.groups, prefix) {
			continue
		}
		dst[n] = i
		n++
	}
	return dst[:n]
}

func (f *FitFilter) FilterNodes(task *Task, nodes Span, v *Verdicts) error {
	schema := nodes.Table.Schema()
	var buf [resource.MaxResources]int
	slots := f.checked(schema, &buf)
	podsSlot := -1
	if s, ok := schema.Slot(resource.Pods); ok {
		podsSlot = s
	}
	var reqs [resource.MaxResources]int64
	n := 0
	for _, slot := range slots {
		if r := fitRequest(task, slot, podsSlot); r > 0 {
			slots[n], reqs[n] = slot, r
			n++
		}
	}
	slots = slots[:n]
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
