package resfitctl

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/examples/internal/words"
	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/planning"
	"github.com/resfit/resfit/scoring/config"
	"github.com/resfit/resfit/scoring/defrag"
)

// DefragOptions control a defrag plan.
type DefragOptions struct {
	// For are the pods to make room for: one pending pod, or a pod group's
	// pending pods, a gang that must all fit, placed in queue order.
	// Empty asks for the moves that free the most GPU.
	For []*v1.Pod
	// Group names the pod group For comes from ("" for one pod).
	Group string
	// MaxMoves caps the moves; 0 means DefaultRoomMoves for For,
	// DefaultFreeMoves otherwise.
	MaxMoves int
	// Timeout stops the search for room; 0 means DefaultTimeout.
	Timeout time.Duration
}

// The defaults of DefragOptions, and the most moves a plan may have.
const (
	DefaultRoomMoves = 3
	DefaultFreeMoves = 10
	DefaultTimeout   = 10 * time.Second
	MaxDefragMoves   = 1000
)

// DefragBudget is a PodDisruptionBudget a plan keeps: the disruptions it
// allows and those the plan's moves use.
type DefragBudget struct {
	Name    string `json:"name"`
	Allowed int    `json:"allowed"`
	Used    int    `json:"used"`
}

// DefragReport is a plan: the moves, in order, and what they lead to. It
// only plans; nothing is evicted.
type DefragReport struct {
	Config string `json:"config"`
	// For are the pods room is made for, Group their pod group; none for
	// the moves that free GPU.
	For   []string `json:"for,omitempty"`
	Group string   `json:"group,omitempty"`
	// MaxMoves is the cap the plan kept.
	MaxMoves int `json:"maxMoves"`
	// Found says a plan was found; Minimal that no plan has fewer moves
	// (each pod moving once, to where the scheduler would put it); Bound
	// the fewest moves a plan may have as far as the search proved.
	Found   bool `json:"found"`
	Minimal bool `json:"minimal"`
	Bound   int  `json:"bound"`
	// Moves are the plan's moves, in order (each with the fragmented GPU
	// it lowers and the pending pods it lets in, for the moves that free
	// GPU).
	Moves []planning.Move `json:"moves"`
	// Then are where the For pods go after the moves.
	Then []planning.Placement `json:"then,omitempty"`
	// Reason says why there is no plan.
	Reason string `json:"reason,omitempty"`
	// FitsNow are pending pods that fit with no move: the moves that free
	// GPU are planned after they are placed.
	FitsNow []planning.Placement `json:"fitsNow,omitempty"`
	// Pending is how many pending pods the moves that free GPU worked for.
	Pending int `json:"pending"`
	// GPUFragmented is the share of the cluster's GPUs idle but fragmented
	// for the workload's pod classes (as whatif counts it), before and
	// after the moves; nil without GPUs.
	GPUFragmentedBefore *float64 `json:"gpuFragmentedBefore,omitempty"`
	GPUFragmentedAfter  *float64 `json:"gpuFragmentedAfter,omitempty"`
	// Unmovable counts the placed pods that may not move, by reason: a
	// stable identifier and the text (planning.UnmovableCounts).
	Unmovable []planning.UnmovableCount `json:"unmovable"`
	Budgets   []DefragBudget            `json:"budgets,omitempty"`
	Warnings  []string                  `json:"warnings,omitempty"`
	// Faults are the faults in pending pods' objects that left them out
	// (a claim that cannot be evaluated): bad input, which kubectl resfit
	// reports after the plan.
	Faults []string `json:"faults,omitempty"`
}

// Defrag plans moves of the cluster's placed pods under a configuration:
// with opts.For, the fewest moves after which those pods fit
// (scoring/defrag.MakeRoomGang); without, up to opts.MaxMoves moves that
// free the most GPU (scoring/defrag.GiveBack): with pending pods, the moves
// that let the most pending GPU in, else those that most lower the GPU the
// workload's pod classes cannot use (FGD's measure). Each move takes a pod
// to where the configuration's pipeline puts it, on the GPUs the host
// layer gives it. A pod moves only when planning.Movable says it may and
// its PodDisruptionBudget (planning.ReadDisruptions) allows it. It plans;
// it never changes the cluster.
func Defrag(c *Snapshot, cfg *config.Config, name string, opts DefragOptions) (*DefragReport, error) {
	for _, p := range opts.For {
		if p.Spec.NodeName != "" {
			return nil, fmt.Errorf("pod %s/%s runs on %s already; defrag makes room for a pending pod", p.Namespace, p.Name, p.Spec.NodeName)
		}
	}
	sc, err := newScene(c, cfg, opts.For)
	if err != nil {
		return nil, err
	}
	pl, err := planning.New(sc.Scene, c.Pods, planning.Options{Budgets: c.Budgets})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", c.Source, err)
	}
	r := &DefragReport{Config: name, Group: opts.Group, Unmovable: planning.UnmovableCounts(pl.Unmovable()), Warnings: sc.warnings(cfg)}
	d := &defragRun{sc: sc, r: r, pl: pl}
	if len(opts.For) > 0 {
		r.MaxMoves = cmp.Or(opts.MaxMoves, DefaultRoomMoves)
		err = d.room(opts.For, cmp.Or(opts.Timeout, DefaultTimeout))
	} else {
		r.MaxMoves = cmp.Or(opts.MaxMoves, DefaultFreeMoves)
		err = d.free(c)
	}
	if err != nil {
		return nil, err
	}
	d.budgetsUsed()
	return r, nil
}

// defragRun is a Defrag run: the scene, the host layer's planning over its
// snapshot, and the report it fills.
type defragRun struct {
	sc *scene
	r  *DefragReport
	pl *planning.Planning
}

// room plans the fewest moves after which the pods fit.
func (d *defragRun) room(pods []*v1.Pod, timeout time.Duration) error {
	plan, ordered, err := d.pl.MakeRoom(pods, defrag.Options{MaxMoves: d.r.MaxMoves, Timeout: timeout})
	if err != nil {
		return err
	}
	for _, p := range ordered {
		d.r.For = append(d.r.For, p.Namespace+"/"+p.Name)
	}
	d.r.Found, d.r.Minimal, d.r.Bound = plan.Found, plan.Minimal, plan.Bound
	table := d.pl.Cluster().Table
	if !plan.Found {
		switch {
		case plan.Stopped:
			d.r.Reason = fmt.Sprintf("the search stopped at its time limit (%s, %s examined); no plan of at most %s was found, and it needs at least %s", timeout, words.Plural(plan.States, "move sequence"), words.Plural(d.r.MaxMoves, "move"), words.Plural(plan.Bound, "move"))
		case plan.Bound > d.r.MaxMoves:
			d.r.Reason = fmt.Sprintf("no plan of at most %s exists: it needs at least %s", words.Plural(d.r.MaxMoves, "move"), words.Plural(plan.Bound, "move"))
		default:
			d.r.Reason = fmt.Sprintf("no plan of at most %s was found (it needs at least %s); with this many movable pods the search tries only moves off one node, chained where a moved pod needs room, and cannot prove that none exists", words.Plural(d.r.MaxMoves, "move"), words.Plural(plan.Bound, "move"))
		}
		return nil
	}
	for _, m := range plan.Moves {
		d.r.Moves = append(d.r.Moves, d.pl.Move(m))
	}
	for n, row := range plan.Rows {
		d.r.Then = append(d.r.Then, planning.Placement{Pod: ordered[n], Node: table.Name(row)})
	}
	return nil
}

// free plans the moves that free the most GPU: the pending pods that fit
// now placed first (planning.Planning.SettlePending), then a give-back
// round over the GPU the workload's classes cannot use, for the pending
// GPU pods that do not fit.
func (d *defragRun) free(c *Snapshot) error {
	sc := d.sc
	var pending []*v1.Pod
	for _, p := range c.Pods {
		if p.Spec.NodeName == "" && !kubebridge.Finished(p) {
			pending = append(pending, p)
		}
	}
	settled, err := d.pl.SettlePending(pending)
	if err != nil {
		return err
	}
	d.r.Warnings = append(d.r.Warnings, settled.Left...)
	d.r.Faults = append(d.r.Faults, settled.Faults...)
	d.r.FitsNow = settled.Fit
	waiting := settled.WaitingForDevices
	d.r.Pending = len(waiting)
	cost, err := sc.GiveBackCost(c.Pods)
	if err != nil {
		return err
	}
	_, d.r.GPUFragmentedBefore = sc.DeviceShares(c.Pods)
	_, moves, err := d.pl.Round(waiting, defrag.Round{Mode: defrag.RoundGiveBack, Moves: d.r.MaxMoves, Cost: cost, Candidates: d.pl.Cluster().Table.Len()})
	if err != nil {
		return err
	}
	d.r.Found = len(moves) > 0
	d.r.Moves = moves
	_, d.r.GPUFragmentedAfter = sc.DeviceShares(c.Pods)
	if !d.r.Found {
		if len(waiting) > 0 {
			d.r.Reason = fmt.Sprintf("no moves of at most %d let a pending pod in", d.r.MaxMoves)
		} else {
			d.r.Reason = fmt.Sprintf("no move lowers the GPU the workload cannot use (%s of the GPUs)", percent(d.r.GPUFragmentedBefore))
		}
	}
	return nil
}

// budgetsUsed lists the budgets that cover a movable pod, with the
// disruptions the plan uses.
func (d *defragRun) budgetsUsed() {
	disruptions := d.pl.Disruptions()
	used := map[string]int{}
	for _, m := range d.r.Moves {
		if b := disruptions.Budget[kubebridge.PodName(m.Pod)]; b != "" {
			used[b]++
		}
	}
	names := map[string]bool{}
	for _, p := range d.pl.Cluster().Pods {
		if p.Group != "" && p.Movable {
			names[p.Group] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		d.r.Budgets = append(d.r.Budgets, DefragBudget{Name: name, Allowed: disruptions.Allowed[name], Used: used[name]})
	}
}

// WriteJSON writes the report as one JSON object.
func (r *DefragReport) WriteJSON(w io.Writer) error { return writeJSON(w, r) }

// InputFaults are Faults (a report's faults in its input).
func (r *DefragReport) InputFaults() []string { return r.Faults }

// WriteTable writes the plan for people.
func (r *DefragReport) WriteTable(w io.Writer) error {
	var b strings.Builder
	what := "the moves that free the most GPU"
	if len(r.For) > 0 {
		what = "room for " + strings.Join(r.For, ", ")
		if r.Group != "" {
			what = "room for pod group " + r.Group + " (" + strings.Join(r.For, ", ") + ")"
		}
	}
	switch {
	case !r.Found:
		fmt.Fprintf(&b, "No plan: %s under %s: %s.\n", what, r.Config, r.Reason)
	case len(r.Moves) == 0:
		fmt.Fprintf(&b, "Plan: %s under %s: no move is needed.\n", what, r.Config)
	default:
		fmt.Fprintf(&b, "Plan: %s under %s: %s", what, r.Config, words.Plural(len(r.Moves), "move"))
		switch {
		case r.Minimal:
			b.WriteString(", the fewest (none would do with fewer).\n")
		case len(r.For) > 0:
			fmt.Fprintf(&b, " (at least %d are needed; fewer were not ruled out).\n", r.Bound)
		default:
			fmt.Fprintf(&b, " (at most %d).\n", r.MaxMoves)
		}
	}
	if err := planning.WritePlanMoves(&b, r.FitsNow, r.Moves, r.Then); err != nil {
		return err
	}
	if r.GPUFragmentedBefore != nil && len(r.For) == 0 {
		fmt.Fprintf(&b, "\nGPU idle but fragmented for the workload's pods: %s before, %s after the moves and the pods they let in.\n", percent(r.GPUFragmentedBefore), percent(r.GPUFragmentedAfter))
	}
	b.WriteString("\n")
	unmovable := map[string]int{}
	for _, u := range r.Unmovable {
		unmovable[u.Text] = u.Pods
	}
	if text := planning.UnmovableText(unmovable); text != "" {
		b.WriteString(text + "\n")
	}
	for _, bu := range r.Budgets {
		fmt.Fprintf(&b, "PodDisruptionBudget %s allows %s; the plan uses %d.\n", bu.Name, words.Plural(bu.Allowed, "disruption"), bu.Used)
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	b.WriteString("kubectl resfit defrag plans; it evicts nothing.\n")
	_, err := io.WriteString(w, b.String())
	return err
}
