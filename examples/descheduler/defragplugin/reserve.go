package defragplugin

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/descheduler/pkg/descheduler/evictions"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/planning"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring/lifetime"
	"github.com/resfit/resfit/scoring/starvation"
)

// Reservation is what a run of reserve mode did for one target: the
// target, the node held and when it is expected to free (zero: a pod in
// its way declares no end; no node: none it fits could be held), the pods
// in its way, and those evicted.
type Reservation struct {
	Target   string
	Node     string
	FreeAt   time.Time
	InTheWay []string
	Evicted  []string
}

// String says what the run did for the target.
func (r Reservation) String() string {
	if r.Node == "" {
		return "no node held for " + r.Target
	}
	free := "when the pods in its way leave (one declares no end)"
	if !r.FreeAt.IsZero() {
		free = "at " + r.FreeAt.UTC().Format(time.RFC3339)
	}
	s := fmt.Sprintf("holds %s for %s, free %s; %d pods in the way", r.Node, r.Target, free, len(r.InTheWay))
	if len(r.Evicted) > 0 {
		s += "; evicted " + strings.Join(r.Evicted, ", ")
	}
	return s
}

// Reservations are what a run of reserve mode did, a Reservation for each
// target, in the order it took them.
type Reservations []Reservation

// String says what the run did, for its log line.
func (rs Reservations) String() string {
	if len(rs) == 0 {
		return "no pending GPU pod has waited past args.starveAfter"
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, "; and ")
}

// Reserve makes one run of reserve mode on the cluster as the listers
// hold it, on the nodes the descheduler gives, at now: it elects up to
// args.holds targets (those held before first, while they still wait
// past args.starveAfter, then starvation.Rank's order), holds a node for
// each and drains as the mode says (the pods in the way, in
// starvation.Hold.DrainOrder, until the target fits: Hold.Freed; the
// run's moves shared among the holds), and returns what it did.
func (p *Plugin) Reserve(ctx context.Context, nodes []*v1.Node, now time.Time) (Reservations, error) {
	w, err := p.read(ctx, nodes, now)
	if err != nil {
		return nil, err
	}
	settled, err := w.pl.SettlePending(w.pending)
	if err != nil {
		return nil, err
	}
	gpu, _ := w.sc.Cache().Schema().Slot(resource.GPU)
	var waiting []starvation.Waiting
	var pods []*v1.Pod
	for _, pod := range settled.Waiting {
		sw, err := w.sc.StarvationWaiting(pod)
		if err != nil || sw.Devices.Count == 0 {
			continue
		}
		waiting, pods = append(waiting, sw), append(pods, pod)
	}
	// The holds runs before made: their pods are targets while they wait.
	held, err := p.holds(ctx)
	if err != nil {
		return nil, err
	}
	targets := p.targets(waiting, pods, held, now, gpu)
	if len(targets) == 0 {
		return nil, p.letGo(ctx, held)
	}
	jobs := planning.ListedJobs(p.jobs)
	var bad error
	sn := w.pl.StarvationNodes(func(k int) time.Time {
		return runningEnd(w.sc, w.pl.Pod(k), jobs, now, &bad)
	})
	if bad != nil {
		klog.FromContext(ctx).Info("a pod's declared end does not read; it counts as declaring none", "plugin", PluginName, "error", bad.Error())
	}
	byUID := map[string]*v1.Pod{}
	for _, pod := range w.pods {
		byUID[string(pod.UID)] = pod
	}
	budget := *p.args.MaxMoves
	if p.allowance != nil {
		budget = min(budget, p.allowance.Accrue(running(w.pods), 0))
	}
	taken := map[string]bool{} // nodes held for a target this run
	var out Reservations
	evicted := 0
	for _, i := range targets {
		target := pods[i]
		h, ok := keptHold(waiting[i], target, held, sn, taken, now, gpu)
		if !ok {
			h, ok = starvation.Choose(waiting[i], sn, now, gpu, func(k int) bool {
				return !taken[sn[k].Name] && fitsEmpty(waiting[i].Pod, sn[k])
			})
		}
		if !ok {
			out = append(out, Reservation{Target: kubebridge.PodName(target)})
			continue
		}
		taken[h.Node] = true
		node := sn[h.Index]
		res := Reservation{Target: kubebridge.PodName(target), Node: h.Node, FreeAt: h.FreeAt}
		room := planning.Room{Namespace: target.Namespace, Name: "hold-" + target.Name, Node: h.Node, PodUID: target.UID,
			Requests: kubebridge.PodRequests(target), ExpiresAt: now.Add(p.args.HoldFor.Duration), NodeWide: true, FreeAt: h.FreeAt}
		for _, k := range h.InTheWay {
			if pod := byUID[node.Pods[k].Name]; pod != nil {
				room.InTheWay = append(room.InTheWay, pod.UID)
				res.InTheWay = append(res.InTheWay, kubebridge.PodName(pod))
			}
		}
		if err := p.holdRoom(ctx, room); err != nil {
			return out, err
		}
		if h.Overdue(now, p.args.Patience.Duration) && !p.args.DryRun {
			res.Evicted = p.drain(ctx, h, node, target, byUID, budget-evicted, now, gpu)
			evicted += len(res.Evicted)
		}
		out = append(out, res)
	}
	if p.allowance != nil {
		p.allowance.Spend(evicted)
	}
	// The rooms runs before made go once this run's stand: a node held
	// again was held all along.
	return out, p.letGo(ctx, held)
}

// targets are the waiting pods to hold for, by index
// (starvation.Targets): those the runs before held, while they still wait
// past args.starveAfter, then the next in starvation.Rank's order, up to
// args.holds.
func (p *Plugin) targets(waiting []starvation.Waiting, pods []*v1.Pod, held []heldRoom, now time.Time, gpu int) []int {
	over := starvation.Rank(waiting, now, starvation.Election{MinWait: p.args.StarveAfter.Duration, Size: gpu})
	index := make(map[types.UID]int, len(pods))
	for i, pod := range pods {
		index[pod.UID] = i
	}
	var heldFor []int
	for _, h := range held {
		if i, ok := index[h.room.PodUID]; ok {
			heldFor = append(heldFor, i)
		}
	}
	return starvation.Targets(over, heldFor, *p.args.Holds)
}

// keptHold plans the target's hold afresh on the node a run before held
// for it, while the node is not taken and the target fits it once its
// pods in the way go: choosing again every run would give up what waiting
// has won.
func keptHold(w starvation.Waiting, target *v1.Pod, held []heldRoom, sn []starvation.Node, taken map[string]bool, now time.Time, gpu int) (starvation.Hold, bool) {
	for _, hr := range held {
		if hr.room.PodUID != target.UID || taken[hr.room.Node] {
			continue
		}
		for k, n := range sn {
			if n.Name != hr.room.Node {
				continue
			}
			if h, err := starvation.Plan(w, n, k, now, gpu); err == nil {
				return h, true
			}
			if fitsEmpty(w.Pod, n) {
				// What the node counts as used is more than its pods ask
				// (a pod the cluster still counts while it ends): the
				// node stays held, every pod on it in the way, rather
				// than the hold moving for a moment's books.
				h := starvation.Hold{Target: w.Name, Node: n.Name, Index: k, Request: w.Request, Devices: w.Devices}
				for j := range n.Pods {
					h.InTheWay = append(h.InTheWay, j)
				}
				return h, true
			}
		}
	}
	return starvation.Hold{}, false
}

// drain evicts, within budget, the pods in the hold's way in
// starvation.Hold.DrainOrder until the target fits (Hold.Freed), those
// the descheduler's evictor lets go, and returns them.
func (p *Plugin) drain(ctx context.Context, h starvation.Hold, node starvation.Node, target *v1.Pod, byUID map[string]*v1.Pod, budget int, now time.Time, gpu int) []string {
	var evicted []string
	var drained []int
	for _, k := range h.DrainOrder(node, now, gpu) {
		if len(evicted) >= budget || h.Freed(node, drained) {
			break
		}
		pod := byUID[node.Pods[k].Name]
		if pod == nil {
			continue
		}
		if ok, _ := p.movable(pod); !ok || !p.handle.Evictor().PreEvictionFilter(pod) {
			continue
		}
		reason := fmt.Sprintf("resfit: drained off %s, held for %s", h.Node, kubebridge.PodName(target))
		if err := p.handle.Evictor().Evict(ctx, pod, evictions.EvictOptions{StrategyName: PluginName, Reason: reason}); err != nil {
			klog.FromContext(ctx).Info("not evicted", "plugin", PluginName, "pod", klog.KObj(pod), "error", err.Error())
			continue
		}
		moves.WithLabelValues(resultDrained).Inc()
		p.events.Eventf(pod, target, v1.EventTypeNormal, "Drained", "Reserve", "resfit drained %s for %s, which has waited since %s", h.Node, kubebridge.PodName(target), target.CreationTimestamp.UTC().Format(time.RFC3339))
		evicted, drained = append(evicted, kubebridge.PodName(pod)), append(drained, k)
	}
	return evicted
}

// fitsEmpty reports whether the pod would fit the node with nothing on it:
// its amounts within the allocatable, its devices among the node's.
func fitsEmpty(pod starvation.Pod, n starvation.Node) bool {
	for s, r := range pod.Request {
		if r > n.Allocatable[s] {
			return false
		}
	}
	return pod.Devices.Count <= len(n.DeviceFree)
}

// heldRoom is a node-wide room a run made, by its object's name.
type heldRoom struct {
	name string
	room planning.Room
}

// holds are the node-wide rooms runs made (resfit's rooms are read from
// the API, so that a run knows what the runs before held whether or not
// the descheduler kept its plugins), the latest to expire last.
func (p *Plugin) holds(ctx context.Context) ([]heldRoom, error) {
	rooms, err := p.rooms.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the rooms: %w", err)
	}
	var out []heldRoom
	for name, room := range rooms {
		if room.NodeWide {
			out = append(out, heldRoom{name, room})
		}
	}
	slices.SortFunc(out, func(a, b heldRoom) int {
		return cmp.Or(a.room.ExpiresAt.Compare(b.room.ExpiresAt), cmp.Compare(a.name, b.name))
	})
	return out, nil
}

// holdRoom holds the room: it creates it (the rooms runs before made go
// after, letGo, so that a node held again is held all along).
func (p *Plugin) holdRoom(ctx context.Context, room planning.Room) error {
	if p.args.DryRun {
		return nil
	}
	if _, err := p.rooms.Create(ctx, room); err != nil {
		return fmt.Errorf("holding %s for %s/%s: %w", room.Node, room.Namespace, strings.TrimPrefix(room.Name, "hold-"), err)
	}
	return nil
}

// letGo lets the rooms runs before held go.
func (p *Plugin) letGo(ctx context.Context, before []heldRoom) error {
	if p.args.DryRun {
		return nil
	}
	for _, h := range before {
		if err := p.rooms.Delete(ctx, h.room.Namespace, h.name); err != nil {
			return fmt.Errorf("letting room %s/%s go: %w", h.room.Namespace, h.name, err)
		}
	}
	return nil
}

// runningEnd is when a running pod is expected to end, for the hold's
// plan: what it declares (planning.DeclaredEnd), else, under a
// configuration that follows when pods end (ResfitFrag's lifetime term),
// what the scene learned of the cluster's finished pods like it
// (planning.Scene.RunningEnd, lifetime.Learned; not the as-long-again
// guess for a pod nothing is known of); zero where nothing says. The first
// declared end that does not read is kept in bad, and the pod counts as
// declaring none.
func runningEnd(sc *planning.Scene, pod *v1.Pod, jobs planning.JobLookup, now time.Time, bad *error) time.Time {
	end, declared, err := planning.DeclaredEnd(pod, jobs, now)
	if err != nil && *bad == nil {
		*bad = err
	}
	if declared {
		return end
	}
	if at, src, err := sc.RunningEnd(pod); err == nil && src == lifetime.Learned {
		return at
	}
	return time.Time{}
}
