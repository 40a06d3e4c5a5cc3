package resfitctl

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/examples/internal/words"
	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/planning"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
)

// NamedConfig is a configuration with the name a report gives it (its
// file).
type NamedConfig struct {
	Name   string
	Config *config.Config
}

// WhatIfOptions control a what-if run.
type WhatIfOptions struct {
	// Progress receives a line every Every pods placed (default 1000) and
	// at the end of each configuration; nil for none.
	Progress io.Writer
	Every    int
}

// Placement is where one pod went under one configuration: a node, or
// none with the reason.
type Placement struct {
	Pod    string  `json:"pod"`
	Node   string  `json:"node,omitempty"`
	Score  float64 `json:"score,omitempty"`
	Reason string  `json:"reason,omitempty"`
}

// Outcome is one configuration's run.
type Outcome struct {
	Config     string      `json:"config"`
	Placed     int         `json:"placed"`
	Pending    int         `json:"pending"`
	Placements []Placement `json:"placements"`
	// GPUAllocated is the share of the cluster's GPUs that pods use after
	// the run, GPUFragmented the share that is idle but fragmented for the
	// workload's pod classes (FGD's measure); both nil without GPUs.
	GPUAllocated  *float64 `json:"gpuAllocated"`
	GPUFragmented *float64 `json:"gpuFragmented"`
	Warnings      []string `json:"warnings,omitempty"`
	// Faults are the faults in pods' objects that kept them from being
	// scored (left pending): bad input, which kubectl resfit reports
	// after the report.
	Faults []string `json:"faults,omitempty"`
}

// WhatIfReport compares configurations placing the same pods.
type WhatIfReport struct {
	// Pods are the pods placed, in queue order.
	Pods     []string  `json:"pods"`
	Outcomes []Outcome `json:"outcomes"`
	// Differs lists the pods whose node is not the same under every
	// configuration.
	Differs []string `json:"differs"`
}

// WhatIf places the pods one by one, in queue order, with each
// configuration on its own copy of the cluster: a pod goes to its best
// node (ties to the first by name) and then uses it, or stays pending with
// the reasons nodes rejected it. pods nil means the cluster's pending pods.
func WhatIf(c *Snapshot, cfgs []NamedConfig, pods []*v1.Pod, opts WhatIfOptions) (*WhatIfReport, error) {
	if pods == nil {
		for _, p := range c.Pods {
			if p.Spec.NodeName == "" && !kubebridge.Finished(p) {
				pods = append(pods, p)
			}
		}
	}
	pods = slices.Clone(pods)
	planning.QueueOrder(pods)
	r := &WhatIfReport{}
	for _, p := range pods {
		r.Pods = append(r.Pods, p.Namespace+"/"+p.Name)
	}
	for _, nc := range cfgs {
		o, err := place(c, nc, pods, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", nc.Name, err)
		}
		r.Outcomes = append(r.Outcomes, *o)
	}
	for i, name := range r.Pods {
		for _, o := range r.Outcomes[1:] {
			if o.Placements[i].Node != r.Outcomes[0].Placements[i].Node {
				r.Differs = append(r.Differs, name)
				break
			}
		}
	}
	return r, nil
}

// place runs one configuration: each pod in turn to the node the
// pipeline scores best (ties to the first row, nodes in name order), as
// scoring every node for every pod would, through a scoring.Placer, and
// then assumed there in the cache (cache.Cache.Assume), which
// counts its requests and devices on the node as a binding would.
func place(c *Snapshot, nc NamedConfig, pods []*v1.Pod, opts WhatIfOptions) (*Outcome, error) {
	sc, err := newScene(c, nc.Config, pods)
	if err != nil {
		return nil, err
	}
	table := sc.Cache().Table()
	o := &Outcome{Config: nc.Name, Warnings: sc.warnings(nc.Config)}
	// The placer scores a node again for pods alike only when it changed;
	// a pending pod's reasons need every node scored.
	placer, err := scoring.NewPlacer(sc.Pipeline(), table, scoring.PlacerOptions{MaxClasses: 256})
	if err != nil {
		return nil, err
	}
	batch := sc.Pipeline().NewBatch(table.Len())
	var scores kubebridge.PodScores
	every := cmp.Or(opts.Every, 1000)
	start := time.Now()
	for i, p := range pods {
		pl := Placement{Pod: p.Namespace + "/" + p.Name}
		// A pod that cannot be scored (its own objects are malformed, a
		// selector of its claims fails) stays pending with the reason, and
		// the others are placed: one pod does not fail the run.
		notScored := func(err error) {
			pl.Reason = "not scored: " + podError(pl.Pod, err)
			o.Pending++
			o.Warnings = append(o.Warnings, fmt.Sprintf("pod %s not scored: %s", pl.Pod, podError(pl.Pod, err)))
			o.Faults = append(o.Faults, fmt.Sprintf("pod %s: %s", pl.Pod, podError(pl.Pod, err)))
		}
		task, err := sc.Task(p)
		row, total := -1, 0.0
		if err == nil {
			if w := sc.Pipeline().OverrideError(task.Task); w != nil {
				o.Warnings = append(o.Warnings, fmt.Sprintf("pod %s: %v", pl.Pod, w))
			}
			row, total, err = sc.best(placer, task, &scores)
		}
		switch {
		case err != nil:
			notScored(err)
		case row < 0:
			if pl.Reason, err = sc.pendingReason(task, batch); err != nil {
				pl.Reason = ""
				notScored(err)
				break
			}
			o.Pending++
		default:
			pl.Node, pl.Score = table.Name(row), total
			if err := sc.Cache().Assume(p, pl.Node); err != nil {
				return nil, fmt.Errorf("placing pod %s on %s: %v", pl.Pod, pl.Node, err)
			}
			if sc.Cache().Table() != table { // the schema was built with every pod's resources
				return nil, fmt.Errorf("placing pod %s changed the cluster's resources", pl.Pod)
			}
			sc.Pipeline().Observe(task.Placed(pl.Node))
			o.Placed++
		}
		o.Placements = append(o.Placements, pl)
		if opts.Progress != nil && (i+1)%every == 0 {
			fmt.Fprintf(opts.Progress, "%s: %d of %s, %d placed (%s)\n", nc.Name, i+1, words.Plural(len(pods), "pod"), o.Placed, time.Since(start).Round(time.Millisecond))
		}
	}
	if opts.Progress != nil {
		fmt.Fprintf(opts.Progress, "%s: %s, %d placed, %d pending (%s)\n", nc.Name, words.Plural(len(pods), "pod"), o.Placed, o.Pending, time.Since(start).Round(time.Millisecond))
	}
	o.GPUAllocated, o.GPUFragmented = sc.DeviceShares(append(slices.Clone(pods), c.Pods...))
	return o, nil
}

// best is the node the placer ranks first for a pod (-1: none can take
// it) and its total: for a pod whose DRA claims take different devices on
// different nodes, the best of every node's own, by total, then the lower
// row, as Batch.Top orders.
func (sc *scene) best(placer *scoring.Placer, pt *kubebridge.PodTask, scores *kubebridge.PodScores) (int, float64, error) {
	if pt.Uniform() {
		row, err := placer.Best(pt.Task)
		return row, placer.Total(), err
	}
	if err := pt.Score(placer, sc.Cache().Table(), scores); err != nil {
		return -1, 0, err
	}
	best, total := -1, 0.0
	for row := range scores.Len() {
		if !scores.Feasible(row) {
			continue
		}
		if t := scores.Total(row); best < 0 || t > total {
			best, total = row, t
		}
	}
	return best, total, nil
}

// pendingReason sums up why every node rejected a pod, as kube-scheduler's
// event does: "0/6 nodes can take it: 3 NodeResourcesFit (insufficient
// nvidia.com/gpu), 3 NodeResourcesFit (insufficient cpu)".
func (sc *scene) pendingReason(pt *kubebridge.PodTask, b *scoring.Batch) (string, error) {
	counts := map[string]int{}
	err := sc.Score(pt, b, func(task *scoring.Task, rows []int) error {
		for _, i := range rows {
			if task == nil {
				counts[claimsUnsatisfiable]++
				continue
			}
			reason, _, _ := strings.Cut(b.Reason(i), ":")
			counts[b.RejectedBy(i)+" ("+reason+")"]++
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	kinds := slices.Sorted(maps.Keys(counts))
	slices.SortStableFunc(kinds, func(a, c string) int { return cmp.Compare(counts[c], counts[a]) })
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %s", counts[k], k)
	}
	return fmt.Sprintf("0/%d nodes can take it: %s", b.Len(), strings.Join(parts, ", ")), nil
}

// InputFaults are the outcomes' faults in their input: each pod's once,
// as every configuration finds it.
func (r *WhatIfReport) InputFaults() []string {
	var out []string
	for _, o := range r.Outcomes {
		for _, f := range o.Faults {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// WriteJSON writes the report as one JSON object.
func (r *WhatIfReport) WriteJSON(w io.Writer) error {
	return writeJSON(w, r)
}

// WriteTable writes the report for people: a line per configuration
// (placed, pending, GPU allocated and fragmented), why each pending pod
// waits, and where every pod went, the ones that differ marked.
func (r *WhatIfReport) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s placed one by one in queue order (priority, then creation), each configuration on its own copy of the cluster.\n\n", words.Plural(len(r.Pods), "pod"))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CONFIG\tPLACED\tPENDING\tGPU ALLOCATED\tGPU FRAGMENTED")
	for _, o := range r.Outcomes {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", o.Config, o.Placed, o.Pending, percent(o.GPUAllocated), percent(o.GPUFragmented))
	}
	tw.Flush()
	for _, o := range r.Outcomes {
		for _, w := range o.Warnings {
			fmt.Fprintf(&b, "warning (%s): %s\n", o.Config, w)
		}
	}
	for _, o := range r.Outcomes {
		if o.Pending == 0 {
			continue
		}
		fmt.Fprintf(&b, "\nPending under %s:\n", o.Config)
		for _, p := range o.Placements {
			if p.Node == "" {
				fmt.Fprintf(&b, "  %s: %s\n", p.Pod, p.Reason)
			}
		}
	}
	if len(r.Pods) > 0 {
		b.WriteString("\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprint(tw, "POD")
		for _, o := range r.Outcomes {
			fmt.Fprint(tw, "\t"+o.Config)
		}
		if len(r.Outcomes) > 1 {
			fmt.Fprint(tw, "\tDIFFERS")
		}
		fmt.Fprintln(tw)
		differs := map[string]bool{}
		for _, pod := range r.Differs {
			differs[pod] = true
		}
		for i, pod := range r.Pods {
			fmt.Fprint(tw, pod)
			for _, o := range r.Outcomes {
				fmt.Fprint(tw, "\t"+cmp.Or(o.Placements[i].Node, "(pending)"))
			}
			if differs[pod] {
				fmt.Fprint(tw, "\t*")
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	if len(r.Outcomes) > 1 {
		verb := "go"
		if len(r.Differs) == 1 {
			verb = "goes"
		}
		fmt.Fprintf(&b, "\n%d of %s %s to a different node under some configuration.\n", len(r.Differs), words.Plural(len(r.Pods), "pod"), verb)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func percent(v *float64) string {
	if v == nil {
		return "no GPUs"
	}
	return Rounded(100*(*v)) + "%"
}
