package planning

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/defrag"
)

// Movability says whether a running pod may move, and why not. Movable is
// the host layer's; a descheduler gives its evictor's filter.
type Movability func(pod *v1.Pod) (ok bool, why string)

// Options are what a Planning reads besides the scene.
type Options struct {
	// Budgets are the cluster's PodDisruptionBudgets, which every plan
	// keeps (ReadDisruptions).
	Budgets []*policyv1.PodDisruptionBudget
	// Movable decides which pods may move; nil means Movable.
	Movable Movability
	// Limits bound the moves of any plan per node, namespace and workload.
	Limits Limits
}

// Limits bound the moves of a plan (a descheduler's run) per node a pod
// leaves, per namespace and per workload (a pod's controller); 0 means no
// limit. Each is a group of defrag.Pod.Limits with its budget
// ("node/gpu-a", "namespace/train", "workload/train/ReplicaSet/job").
type Limits struct {
	PerNode, PerNamespace, PerWorkload int
}

// Planning is a cluster as resfit's planners (scoring/defrag) see it, the
// one every host that plans moves builds (kubectl-resfit's defrag, the
// descheduler): the scene's table and device view, and its running pods,
// each movable or not and why, in the group of the PodDisruptionBudget
// that covers it. Whatever the Movability, a pod does not move when the
// planner cannot follow its devices (they are not held as it asks for
// them), when its DRA claims take different devices on different nodes,
// or when more than one budget covers it (the eviction API refuses it).
//
// Planning changes the scene's cache (the pods it places) and is not
// safe for concurrent use.
type Planning struct {
	scene       *Scene
	cluster     *defrag.Cluster
	pods        []*v1.Pod // cluster.Pods' pods
	held        [][]int   // the devices each of cluster.Pods held before any move
	unmovable   map[string]int
	disruptions Disruptions
	budgets     map[string]int
}

// New builds the planners' cluster from the scene and the
// cluster's pods (those that count on a node the cache has).
func New(sc *Scene, pods []*v1.Pod, opts Options) (*Planning, error) {
	disruptions, err := ReadDisruptions(opts.Budgets, pods)
	if err != nil {
		return nil, err
	}
	movable := opts.Movable
	if movable == nil {
		movable = Movable
	}
	if l := opts.Limits; l.PerNode < 0 || l.PerNamespace < 0 || l.PerWorkload < 0 {
		return nil, fmt.Errorf("planning limits %+v: each must be ≥ 0", l)
	}
	c := sc.cache
	p := &Planning{scene: sc, disruptions: disruptions, unmovable: map[string]int{}, budgets: maps.Clone(disruptions.Allowed),
		cluster: &defrag.Cluster{Pipeline: sc.pipe, Table: c.Table(), Devices: c.Devices()}}
	for _, pod := range pods {
		if pod.Spec.NodeName == "" || !kubebridge.Counts(pod) {
			continue
		}
		row, holds, held := c.Holding(pod)
		if row < 0 {
			continue // on a node the cluster does not have
		}
		pt, err := sc.Task(pod)
		if err != nil {
			return nil, err
		}
		if own, units, found, ok, err := sc.ownClaims(pod); err != nil {
			return nil, err
		} else if found {
			pt, holds, held = own, units, ok
		}
		key := pod.Namespace + "/" + pod.Name
		ok, why := movable(pod)
		switch {
		case !ok:
		case !held:
			ok, why = false, "its GPUs are not held as it asks for them"
		case !pt.Uniform():
			ok, why = false, "its DRA claims take different devices on different nodes"
		case len(disruptions.Several[key]) > 0:
			ok, why = false, "covered by more than one PodDisruptionBudget"
		}
		if !ok {
			p.unmovable[why]++
		}
		dp := defrag.Pod{Task: pt.Task, Row: row, Holds: holds, Movable: ok, Group: disruptions.Budget[key], Limits: p.limits(pod, opts.Limits)}
		if !held {
			// A pod whose devices the planner cannot follow stands still
			// with its requests in the table, holding no device of the
			// view as far as the planner knows.
			t := *pt.Task
			t.Devices = resource.DeviceRequest{}
			dp.Task, dp.Holds = &t, nil
		}
		p.cluster.Pods = append(p.cluster.Pods, dp)
		p.pods, p.held = append(p.pods, pod), append(p.held, dp.Holds)
	}
	return p, nil
}

// limits are the groups of Limits a pod's moves count against, each with
// its budget set.
func (p *Planning) limits(pod *v1.Pod, l Limits) []string {
	var groups []string
	add := func(group string, limit int) {
		if limit > 0 {
			groups = append(groups, group)
			p.budgets[group] = limit
		}
	}
	add("node/"+pod.Spec.NodeName, l.PerNode)
	add("namespace/"+pod.Namespace, l.PerNamespace)
	if owner := controllerOf(pod); owner != nil {
		add("workload/"+pod.Namespace+"/"+owner.Kind+"/"+owner.Name, l.PerWorkload)
	}
	return groups
}

// controllerOf is a pod's controller, nil without one.
func controllerOf(pod *v1.Pod) *metav1.OwnerReference {
	for i := range pod.OwnerReferences {
		if r := &pod.OwnerReferences[i]; r.Controller != nil && *r.Controller {
			return r
		}
	}
	return nil
}

// Budgets are the moves every plan may make of each group: the
// disruptions each PodDisruptionBudget allows, and the limits.
func (p *Planning) Budgets() map[string]int { return p.budgets }

// Cluster is the planners' cluster. A plan's moves and placements change
// it (defrag.Apply, defrag.PlanRound), with the scene's cache's table
// and device view.
func (p *Planning) Cluster() *defrag.Cluster { return p.cluster }

// Pod is the Kubernetes pod of the cluster's pod i (a pending pod a round
// placed included).
func (p *Planning) Pod(i int) *v1.Pod { return p.pods[i] }

// Held are the devices the cluster's pod i held before any move.
func (p *Planning) Held(i int) []int { return p.held[i] }

// Unmovable counts the running pods that may not move, by reason.
func (p *Planning) Unmovable() map[string]int { return p.unmovable }

// Disruptions are the cluster's PodDisruptionBudgets as the plans keep
// them.
func (p *Planning) Disruptions() Disruptions { return p.disruptions }

// tasks are the pods' tasks; a pod whose DRA claims take different devices
// on different nodes is an error naming it.
func (p *Planning) tasks(pods []*v1.Pod) ([]*scoring.Task, error) {
	tasks := make([]*scoring.Task, len(pods))
	for n, pod := range pods {
		pt, err := p.scene.Task(pod)
		if err != nil {
			return nil, err
		}
		if !pt.Uniform() {
			why, _ := p.unplannable(pt)
			return nil, fmt.Errorf("pod %s/%s: %s", pod.Namespace, pod.Name, why)
		}
		tasks[n] = pt.Task
	}
	return tasks, nil
}

// notUniform is why a planner leaves a pod out.
const notUniform = "its DRA claims take different devices on different nodes; the planner does not plan for such a pod"

// unplannable says why the planner leaves out a pod whose task is not
// uniform: its claims cannot be evaluated on some node (a selector that
// fails as kube's allocator runs it: the cause, which kube-scheduler
// reports as the node's Filter error; fault is true), or else notUniform.
func (p *Planning) unplannable(pt *kubebridge.PodTask) (why string, fault bool) {
	table := p.cluster.Table
	for i := range table.Len() {
		if _, _, err := pt.On(table.Name(i)); err != nil {
			return "its claims cannot be evaluated: " + err.Error(), true
		}
	}
	if nodes, ok := pt.BoundTo(); ok {
		where := "no node"
		if len(nodes) > 0 {
			where = "only " + strings.Join(nodes, ", ")
		}
		return "a claim of the pod is allocated already, and its allocation's nodeSelector selects " + where + "; the planner does not plan for such a pod", false
	}
	return notUniform, false
}

// MakeRoom plans the fewest moves after which the pending pods, a gang
// placed in queue order (QueueOrder), all fit (defrag.MakeRoomGang),
// within the Budgets unless opts.Budgets says otherwise. It returns the
// plan, and the pods in the order it placed them (Plan.Rows). It plans;
// the cluster is left as it was.
func (p *Planning) MakeRoom(pods []*v1.Pod, opts defrag.Options) (defrag.Plan, []*v1.Pod, error) {
	pods = slices.Clone(pods)
	QueueOrder(pods)
	gang, err := p.tasks(pods)
	if err != nil {
		return defrag.Plan{}, nil, err
	}
	if opts.Budgets == nil {
		opts.Budgets = p.budgets
	}
	plan, err := defrag.MakeRoomGang(p.cluster, gang, opts)
	return plan, pods, err
}

// Placement is a pod and the node it goes to.
type Placement struct {
	Pod  *v1.Pod
	Node string
}

// Settled is what SettlePending did: the pending pods that fit with no
// move, placed where the scheduler puts them, and those that wait, in
// queue order; Left are the pods it left out, each with why, and Faults
// those of them left out for a fault in their objects (a claim that
// cannot be evaluated), which a host reports as bad input.
type Settled struct {
	Fit     []Placement
	Waiting []*v1.Pod
	// WaitingForDevices are the waiting pods that ask for devices of the
	// view (GPUs), in order: those a round of moves plans for.
	WaitingForDevices []*v1.Pod
	Left              []string
	Faults            []string
}

// SettlePending places the pending pods that fit now, in queue order, each
// on the node the pipeline ranks first, as the scheduler will (assumed in
// the scene's cache: cache.Cache.Assume), so that plans are made on the
// cluster as it will be, and returns the others, which wait. A pod group's
// pending pods (kubebridge.PodGroup) are a gang, placed at its first pod's turn: all
// of them, in queue order, or none (they all wait), as kube-scheduler's
// GangScheduling and Volcano's gang plugin place them. A pod whose DRA
// claims take different devices on different nodes is left out (with why
// in Settled.Left), and so is the rest of its gang.
func (p *Planning) SettlePending(pending []*v1.Pod) (*Settled, error) {
	pending = slices.Clone(pending)
	QueueOrder(pending)
	table := p.cluster.Table
	placer, err := scoring.NewPlacer(p.scene.pipe, table, scoring.PlacerOptions{})
	if err != nil {
		return nil, err
	}
	out := &Settled{}
	for _, gang := range Gangs(pending) {
		tasks := make([]*scoring.Task, len(gang))
		var odd *v1.Pod
		var why string
		var fault bool
		for n, m := range gang {
			pt, err := p.scene.Task(m)
			if err != nil {
				return nil, err
			}
			if !pt.Uniform() && odd == nil {
				odd = m
				why, fault = p.unplannable(pt)
			}
			tasks[n] = pt.Task
		}
		if odd != nil {
			for _, m := range gang {
				why := why
				if m != odd {
					why = fmt.Sprintf("%s/%s of its pod group %s: %s", odd.Namespace, odd.Name, kubebridge.PodGroup(m), why)
				}
				out.Left = append(out.Left, fmt.Sprintf("pending pod %s/%s: %s; left out", m.Namespace, m.Name, why))
				if fault && m == odd {
					out.Faults = append(out.Faults, fmt.Sprintf("pod %s/%s: %s", m.Namespace, m.Name, why))
				}
			}
			continue
		}
		fit, err := p.assumeAll(placer, gang, tasks)
		if err != nil {
			return nil, err
		}
		if fit == nil {
			out.Waiting = append(out.Waiting, gang...)
			for n, pod := range gang {
				if tasks[n].Devices.Count > 0 {
					out.WaitingForDevices = append(out.WaitingForDevices, pod)
				}
			}
			continue
		}
		out.Fit = append(out.Fit, fit...)
	}
	return out, nil
}

// assumeAll places a gang's pods in order, each where the pipeline ranks
// first, or none of them (nil) when one does not fit.
func (p *Planning) assumeAll(placer *scoring.Placer, gang []*v1.Pod, tasks []*scoring.Task) ([]Placement, error) {
	table := p.cluster.Table
	var fit []Placement
	undo := func() error {
		for _, f := range slices.Backward(fit) {
			if err := p.scene.cache.Forget(f.Pod); err != nil {
				return err
			}
		}
		return nil
	}
	for n, pod := range gang {
		row, err := placer.Best(tasks[n])
		if err != nil {
			return nil, errors.Join(err, undo())
		}
		if row < 0 {
			return nil, undo()
		}
		node := table.Name(row)
		if err := p.scene.cache.Assume(pod, node); err != nil {
			return nil, errors.Join(fmt.Errorf("placing pod %s/%s on %s: %v", pod.Namespace, pod.Name, node, err), undo())
		}
		fit = append(fit, Placement{Pod: pod, Node: node})
		if p.scene.cache.Table() != table {
			return nil, fmt.Errorf("placing pod %s/%s changed the cluster's resources", pod.Namespace, pod.Name)
		}
	}
	return fit, nil
}

// Gangs groups pods into gangs, in the order of each gang's first pod: the
// pods of a pod group (kubebridge.PodGroup) in the order given, or a pod alone when
// it has none.
func Gangs(pods []*v1.Pod) [][]*v1.Pod {
	var gangs [][]*v1.Pod
	at := map[string]int{}
	for _, pod := range pods {
		group := kubebridge.PodGroup(pod)
		if n, ok := at[group]; ok {
			gangs[n] = append(gangs[n], pod)
			continue
		}
		if group != "" {
			at[group] = len(gangs)
		}
		gangs = append(gangs, []*v1.Pod{pod})
	}
	return gangs
}

// Round makes a round of moves for the waiting pods, in the order given
// (defrag.PlanRound), within the Budgets unless the round's say
// otherwise: the rule a descheduler's run and the churn replay's rounds
// follow. It returns the round's plan and its moves as the hosts carry
// them out (Move), each with the fragmented GPU it lowers in give-back
// mode (its gain over the view's amount per device) and the waiting pods
// it lets in. The pods it places become pods of the cluster (Pod gives
// them back). The cluster is left as the round left it.
func (p *Planning) Round(waiting []*v1.Pod, r defrag.Round) (*defrag.RoundPlan, []Move, error) {
	tasks, err := p.tasks(waiting)
	if err != nil {
		return nil, nil, err
	}
	if r.Budgets == nil {
		r.Budgets = p.budgets
	}
	plan, err := defrag.PlanRound(p.cluster, tasks, r)
	if plan == nil {
		return nil, nil, err
	}
	for _, in := range plan.Placed() {
		p.pods, p.held = append(p.pods, waiting[in.Task]), append(p.held, nil)
	}
	var moves []Move
	for _, step := range plan.Steps {
		m := p.Move(step.Move)
		if r.Mode == defrag.RoundGiveBack {
			m.Lowered = new(step.Gain / float64(p.cluster.Devices.PerDevice()))
		}
		for _, in := range step.LetsIn {
			m.LetsIn = append(m.LetsIn, Placement{Pod: waiting[in.Task], Node: p.cluster.Table.Name(in.Row)})
		}
		moves = append(moves, m)
	}
	return plan, moves, err
}

// QueueOrder sorts pods as kube-scheduler's default queue does
// (PrioritySort): higher priority first, then earlier creation; ties by
// namespace and name.
func QueueOrder(pods []*v1.Pod) {
	priority := func(p *v1.Pod) int32 {
		if p.Spec.Priority != nil {
			return *p.Spec.Priority
		}
		return 0
	}
	slices.SortStableFunc(pods, func(a, b *v1.Pod) int {
		if c := cmp.Compare(priority(b), priority(a)); c != 0 {
			return c
		}
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
}
