package defragplugin

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/resfit/resfit/examples/internal/words"
	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/cache"
	"github.com/resfit/resfit/examples/kubebridge/planning"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring/config"
	"github.com/resfit/resfit/scoring/defrag"
)

// Move is one move of a plan (planning.Move, as kubectl resfit defrag
// has it): the pod, the node it leaves and the one its replacement is to
// land on, with the GPUs (indices on the nodes) it frees and takes, the
// fragmented GPU it lowers in give-back mode and the pending pods it lets
// in.
type Move = planning.Move

// Placement is a pending pod the plan lets in, and the node it goes to.
type Placement = planning.Placement

// Plan is a run's plan: the moves in order, each with the pending pods it
// lets in; the pending pods that fit with no move; and why nothing more is
// planned.
type Plan struct {
	Mode    string
	Moves   []Move
	FitsNow []Placement
	// Waiting are the pending GPU pods planned for, in order.
	Waiting []*v1.Pod
	// Unmovable counts the running pods that may not move, by reason.
	Unmovable map[string]int
	Warnings  []string
	// nodes are the pods on each node the plan reads, by UID, when it was
	// made: a change to them is a change of the cluster (carryOut).
	nodes map[string]map[string]bool
}

// String writes the plan as kubectl resfit defrag does: what it is for,
// the moves' table (planning.WriteMoveTable), where the pending pods
// go, what may not move, and the warnings.
func (pl *Plan) String() string {
	var b strings.Builder
	var waiting []string
	for _, p := range pl.Waiting {
		waiting = append(waiting, p.Namespace+"/"+p.Name)
	}
	switch {
	case len(waiting) == 0:
		fmt.Fprintf(&b, "Plan (%s): no pending GPU pod to plan for.\n", pl.Mode)
	case len(pl.Moves) == 0:
		fmt.Fprintf(&b, "No plan (%s) for %s within the limits.\n", pl.Mode, strings.Join(waiting, ", "))
	default:
		fmt.Fprintf(&b, "Plan (%s) for %s: %s.\n", pl.Mode, strings.Join(waiting, ", "), words.Plural(len(pl.Moves), "move"))
	}
	var then []Placement // make-room: where the pods it makes room for go
	for _, m := range pl.Moves {
		if pl.Mode == ModeMakeRoom {
			then = append(then, m.LetsIn...)
		}
	}
	_ = planning.WritePlanMoves(&b, pl.FitsNow, pl.Moves, then) // a strings.Builder does not fail
	if text := planning.UnmovableText(pl.Unmovable); text != "" {
		b.WriteString("\n" + text + "\n")
	}
	for _, w := range pl.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	return b.String()
}

// Plan makes a run's plan on the cluster as the listers hold it, on the
// nodes the descheduler gives (its ready nodes): the host layer's planning
// (planning.Planning) with the pods the evictor may evict movable,
// within the PodDisruptionBudgets and the limits, and a round of moves
// (defrag.PlanRound) in the mode for the pending GPU pods of the
// scheduler. It changes nothing.
func (p *Plugin) Plan(ctx context.Context, nodes []*v1.Node) (*Plan, error) {
	w, err := p.read(ctx, nodes, time.Now())
	if err != nil {
		return nil, err
	}
	a, cfg, pods, sc, pl := p.args, w.cfg, w.pods, w.sc, w.pl
	plan := &Plan{Mode: a.Mode, Unmovable: pl.Unmovable(), Warnings: append(slices.Clone(cfg.Warnings), sc.Warnings()...), nodes: podsByNode(pods)}
	settled, err := pl.SettlePending(w.pending)
	if err != nil {
		return nil, err
	}
	plan.FitsNow, plan.Warnings = settled.Fit, append(plan.Warnings, settled.Left...)
	plan.Waiting = settled.WaitingForDevices
	order(plan.Waiting, a.Order, sc)
	var kept []*v1.Pod // the first maxPods, a gang whole or not at all
	for _, gang := range planning.Gangs(plan.Waiting) {
		if len(kept)+len(gang) > *a.MaxPods {
			if len(kept) == 0 {
				plan.Warnings = append(plan.Warnings, fmt.Sprintf("pod group %s has %d pending pods, more than args.maxPods (%d): not planned for", kubebridge.PodGroup(gang[0]), len(gang), *a.MaxPods))
			}
			break
		}
		kept = append(kept, gang...)
	}
	plan.Waiting = kept
	if a.Mode == ModeMakeRoom && len(plan.Waiting) == 0 {
		return plan, nil
	}
	moves := *a.MaxMoves
	if moves == 0 {
		plan.Warnings = append(plan.Warnings, "args.maxMoves is 0: no moves are planned")
		return plan, nil
	}
	if p.allowance != nil {
		moves = min(moves, p.allowance.Accrue(running(pods), 0))
		if moves < 1 {
			plan.Warnings = append(plan.Warnings, "the hourly allowance of moves (args.maxMovesPerHour) holds none yet")
			return plan, nil
		}
	}
	mode := defrag.RoundMakeRoom
	if a.Mode == ModeGiveBack {
		mode = defrag.RoundGiveBack
	}
	// The round the churn replay makes (bench/replay -churn -moves), with
	// the same search.
	round := defrag.NewRound(mode, moves, *a.MovesPerPod, 0)
	round.Timeout = a.SearchTimeout.Duration
	if mode == defrag.RoundGiveBack {
		if round.Cost, err = sc.GiveBackCost(pods); err != nil {
			return nil, err
		}
	}
	if _, plan.Moves, err = pl.Round(plan.Waiting, round); err != nil {
		return nil, err
	}
	return plan, nil
}

// reading is what a run reads of the cluster: the scheduler's
// configuration, the pods (by namespace and name), the scheduler's pending
// pods, and the scene and planning made of them.
type reading struct {
	cfg     *config.Config
	pods    []*v1.Pod
	pending []*v1.Pod
	sc      *planning.Scene
	pl      *planning.Planning
}

// read reads the cluster as the listers hold it, on the nodes the
// descheduler gives (its ready nodes): the host layer's planning
// (planning.Planning) with the pods the evictor may evict movable,
// within the PodDisruptionBudgets and the limits.
func (p *Plugin) read(ctx context.Context, nodes []*v1.Node, now time.Time) (*reading, error) {
	cfg, err := p.loadConfig(ctx)
	if err != nil {
		return nil, err
	}
	pods, err := p.pods.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	slices.SortFunc(pods, kubebridge.ByNamespaceAndName)
	budgets, err := p.pdbs.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	// The pending pods are the scheduler's whose configuration it is.
	scheduler := cmp.Or(cfg.SchedulerName, p.args.Profile, v1.DefaultSchedulerName)
	var pending []*v1.Pod
	for _, pod := range pods {
		if pod.Spec.NodeName == "" && !kubebridge.Finished(pod) && pod.DeletionTimestamp == nil && cmp.Or(pod.Spec.SchedulerName, v1.DefaultSchedulerName) == scheduler {
			pending = append(pending, pod)
		}
	}
	d, err := p.readDRA(nodes)
	if err != nil {
		return nil, err
	}
	snap, err := cache.New(nodes, pods, cache.Options{Devices: resource.GPU, DRA: d})
	if err != nil {
		return nil, err
	}
	opts, err := cfg.LifetimeModel()
	if err != nil {
		return nil, err
	}
	model, err := p.lifetimes.Learn(pods, now, opts)
	if err != nil {
		return nil, err
	}
	sc, err := planning.NewSceneAt(snap, cfg, pods, planning.Ends{Now: now, Jobs: planning.ListedJobs(p.jobs), Model: model})
	if err != nil {
		return nil, err
	}
	a := p.args
	pl, err := planning.New(sc, pods, planning.Options{Budgets: budgets, Movable: p.movable,
		Limits: planning.Limits{PerNode: a.MaxMovesPerNode, PerNamespace: a.MaxMovesPerNamespace, PerWorkload: a.MaxMovesPerWorkload}})
	if err != nil {
		return nil, err
	}
	return &reading{cfg: cfg, pods: pods, pending: pending, sc: sc, pl: pl}, nil
}

// movable is the host layer's rule (planning.Movable: a pod whose
// controller recreates it, and so on) and the descheduler's evictor's
// filter.
func (p *Plugin) movable(pod *v1.Pod) (bool, string) {
	if ok, why := planning.Movable(pod); !ok {
		return false, why
	}
	if !p.handle.Evictor().Filter(pod) {
		return false, "the descheduler's evictor refuses it"
	}
	return true, ""
}

// order sorts the pending pods for planning: the scheduler's queue order,
// creation, or the most GPU first; a pod group's pods together, where the
// first of them comes (planning.Gangs).
func order(pods []*v1.Pod, by string, sc *planning.Scene) {
	sortPods(pods, by, sc)
	n := 0
	for _, gang := range planning.Gangs(pods) {
		n += copy(pods[n:], gang)
	}
}

func sortPods(pods []*v1.Pod, by string, sc *planning.Scene) {
	planning.QueueOrder(pods)
	switch by {
	case OrderOldest:
		slices.SortStableFunc(pods, func(a, b *v1.Pod) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	case OrderLargest:
		gpu := map[*v1.Pod]int64{}
		for _, pod := range pods {
			if pt, err := sc.Task(pod); err == nil {
				gpu[pod] = pt.Task.Devices.Total()
			}
		}
		slices.SortStableFunc(pods, func(a, b *v1.Pod) int { return cmp.Compare(gpu[b], gpu[a]) })
	}
}

// podsByNode are the UIDs of the pods bound to each node.
func podsByNode(pods []*v1.Pod) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, pod := range pods {
		if node := pod.Spec.NodeName; node != "" && kubebridge.Counts(pod) {
			if out[node] == nil {
				out[node] = map[string]bool{}
			}
			out[node][string(pod.UID)] = true
		}
	}
	return out
}
