package defragplugin

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"sigs.k8s.io/descheduler/pkg/descheduler/evictions"

	"github.com/resfit/resfit/examples/kubebridge/planning"
)

var getOptions = metav1.GetOptions{}

// eventSink records events on pods.
type eventSink interface {
	Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// newEventSink records events through the API (events.k8s.io/v1), as
// resfit-descheduler, until ctx ends.
func newEventSink(ctx context.Context, cs kubernetes.Interface) eventSink {
	b := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	b.StartRecordingToSink(ctx.Done())
	go func() {
		<-ctx.Done()
		b.Shutdown()
	}()
	return b.NewRecorder(scheme.Scheme, "resfit-descheduler")
}

// roomClient creates, deletes and lists rooms (planning.Room).
type roomClient interface {
	Create(ctx context.Context, room planning.Room) (name string, err error)
	Delete(ctx context.Context, namespace, name string) error
	// List lists every room that reads (planning.ReadRoom), by the
	// names of their objects.
	List(ctx context.Context) (map[string]planning.Room, error)
}

// restRooms is roomClient through the API, on a clientset's REST client.
type restRooms struct{ client rest.Interface }

func roomsPath(namespace string) string {
	r := planning.RoomResource
	return "/apis/" + r.Group + "/" + r.Version + "/namespaces/" + namespace + "/" + r.Resource
}

func (c restRooms) Create(ctx context.Context, room planning.Room) (string, error) {
	obj := room.Object()
	obj.SetName("")
	obj.SetGenerateName(room.Name + "-")
	body, err := obj.MarshalJSON()
	if err != nil {
		return "", err
	}
	res := c.client.Post().AbsPath(roomsPath(room.Namespace)).SetHeader("Content-Type", "application/json").Body(body).Do(ctx)
	if err := res.Error(); err != nil { // the API's Status, as Raw does not read it
		return "", err
	}
	raw, err := res.Raw()
	if err != nil {
		return "", err
	}
	created := &unstructured.Unstructured{}
	if err := created.UnmarshalJSON(raw); err != nil {
		return "", err
	}
	return created.GetName(), nil
}

func (c restRooms) List(ctx context.Context) (map[string]planning.Room, error) {
	r := planning.RoomResource
	res := c.client.Get().AbsPath("/apis/" + r.Group + "/" + r.Version + "/" + r.Resource).Do(ctx)
	if err := res.Error(); err != nil {
		return nil, err
	}
	raw, err := res.Raw()
	if err != nil {
		return nil, err
	}
	list := &unstructured.UnstructuredList{}
	if err := list.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	out := map[string]planning.Room{}
	for i := range list.Items {
		if room, err := planning.ReadRoom(&list.Items[i]); err == nil {
			out[list.Items[i].GetName()] = room
		}
	}
	return out, nil
}

func (c restRooms) Delete(ctx context.Context, namespace, name string) error {
	err := c.client.Delete().AbsPath(roomsPath(namespace) + "/" + name).Do(ctx).Error()
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// held are the rooms a run holds, to let go of when it ends.
type held struct {
	client roomClient
	rooms  map[types.NamespacedName]bool
}

// hold creates a room, and keeps its name.
func (h *held) hold(ctx context.Context, room planning.Room) (string, error) {
	name, err := h.client.Create(ctx, room)
	if err != nil {
		return "", fmt.Errorf("holding room on %s for %s/%s: %w", room.Node, room.Namespace, room.Name, err)
	}
	h.rooms[types.NamespacedName{Namespace: room.Namespace, Name: name}] = true
	return name, nil
}

// release deletes a room the run holds.
func (h *held) release(ctx context.Context, namespace, name string) error {
	delete(h.rooms, types.NamespacedName{Namespace: namespace, Name: name})
	return h.client.Delete(ctx, namespace, name)
}

// releaseAll deletes every room the run still holds.
func (h *held) releaseAll(ctx context.Context) {
	for room := range h.rooms {
		if err := h.release(ctx, room.Namespace, room.Name); err != nil {
			klog.FromContext(ctx).Error(err, "letting go of a room; it expires on its own", "room", room)
		}
	}
}

// roomGrace is how long a room outlasts the wait for its pod, so that it
// still holds while the wait ends.
const roomGrace = 30 * time.Second

// errChanged says the cluster changed since the plan was made.
var errChanged = errors.New("the cluster changed since the plan was made")

// carryOut makes the plan's moves in order, one at a time, and plans again
// once when the cluster changed since the plan was made (the moves made
// count against the run's); it returns the moves made.
func (p *Plugin) carryOut(ctx context.Context, nodes []*v1.Node, plan *Plan) (int, error) {
	made, err := p.carry(ctx, plan)
	if !errors.Is(err, errChanged) {
		return made, err
	}
	klog.FromContext(ctx).Info("the cluster changed since the plan was made; planning again", "plugin", PluginName, "moves made", made)
	left := *p.args.MaxMoves - made
	if left < 1 {
		return made, nil
	}
	again := *p
	args := *p.args
	args.MaxMoves = &left
	again.args = &args
	if p.allowance != nil {
		a := *p.allowance
		a.Spend(made)
		again.allowance = &a
	}
	plan, err = again.Plan(ctx, nodes)
	if err != nil {
		return made, err
	}
	klog.FromContext(ctx).Info("plan", "plugin", PluginName, "plan", plan.String())
	more, err := again.carry(ctx, plan)
	if errors.Is(err, errChanged) {
		err = fmt.Errorf("%w again; the next run plans afresh", err)
	}
	return made + more, err
}

// carry makes the plan's moves, each after checking the pods on the nodes
// the rest of the plan reads are as the plan expects: evict the pod, wait
// for its replacement to be bound, check its node; then wait for the
// pending pods the move lets in. It returns the moves made.
func (p *Plugin) carry(ctx context.Context, plan *Plan) (int, error) {
	expect := map[string]map[string]bool{}
	for node, uids := range plan.nodes {
		expect[node] = maps.Clone(uids)
	}
	gone := map[string]bool{} // evicted pods, terminating or gone
	timeout := p.args.ReplacementTimeout.Duration
	rooms := &held{client: p.rooms, rooms: map[types.NamespacedName]bool{}}
	defer rooms.releaseAll(context.WithoutCancel(ctx))
	for n, m := range plan.Moves {
		if why := p.changedSince(expect, gone, plan.Moves[n:]); why != "" {
			moves.WithLabelValues(resultChanged).Inc()
			return n, fmt.Errorf("%w: %s", errChanged, why)
		}
		// The rooms: the moved pod's replacement's where the plan puts
		// it, and the pending pods' where the move makes room for them,
		// held before the eviction frees anything.
		expires := time.Now().Add(timeout + roomGrace)
		room, err := planning.RoomFor(m.Pod, m.To, false, expires)
		if err != nil {
			return n, err
		}
		moveRoom, err := rooms.hold(ctx, room)
		if err != nil {
			return n, err
		}
		pendingRooms := make([]string, len(m.LetsIn))
		for i, in := range m.LetsIn {
			room, err := planning.RoomFor(in.Pod, in.Node, true, expires)
			if err != nil {
				return n, err
			}
			if pendingRooms[i], err = rooms.hold(ctx, room); err != nil {
				return n, err
			}
		}
		owner := controllerUID(m.Pod)
		siblings := p.ownedBy(m.Pod.Namespace, owner)
		if !p.handle.Evictor().PreEvictionFilter(m.Pod) {
			moves.WithLabelValues(resultRefused).Inc()
			return n, fmt.Errorf("move %d: the evictor refuses to evict %s/%s now", n+1, m.Pod.Namespace, m.Pod.Name)
		}
		reason := fmt.Sprintf("resfit: moved to %s", m.To)
		if err := p.handle.Evictor().Evict(ctx, m.Pod, evictions.EvictOptions{StrategyName: PluginName, Reason: reason}); err != nil {
			moves.WithLabelValues(resultRefused).Inc()
			return n, fmt.Errorf("move %d: evicting %s/%s: %w", n+1, m.Pod.Namespace, m.Pod.Name, err)
		}
		delete(expect[m.From], string(m.Pod.UID))
		gone[string(m.Pod.UID)] = true
		repl, err := p.awaitBound(ctx, timeout, func(q *v1.Pod) bool {
			return q.Namespace == m.Pod.Namespace && controllerUID(q) == owner && !siblings[q.UID]
		})
		switch {
		case err != nil:
			moves.WithLabelValues(resultTimeout).Inc()
			p.events.Eventf(m.Pod, nil, v1.EventTypeWarning, "ReplacementNotBound", "Move", "resfit moved the pod to %s; no replacement was bound within %s", m.To, timeout)
			return n, fmt.Errorf("move %d: %s/%s's replacement was not bound within %s: %w", n+1, m.Pod.Namespace, m.Pod.Name, timeout, err)
		case repl.Spec.NodeName != m.To:
			moves.WithLabelValues(resultElsewhere).Inc()
			p.events.Eventf(repl, m.Pod, v1.EventTypeWarning, "LandedElsewhere", "Move", "resfit's plan put %s/%s's replacement on %s; it is bound to %s, and the plan stops", m.Pod.Namespace, m.Pod.Name, m.To, repl.Spec.NodeName)
			return n + 1, fmt.Errorf("move %d: %s/%s's replacement %s is bound to %s, not %s as planned; the plan stops", n+1, m.Pod.Namespace, m.Pod.Name, repl.Name, repl.Spec.NodeName, m.To)
		}
		moves.WithLabelValues(resultLanded).Inc()
		p.events.Eventf(repl, m.Pod, v1.EventTypeNormal, "Moved", "Move", "resfit moved %s/%s from %s to %s", m.Pod.Namespace, m.Pod.Name, m.From, m.To)
		addTo(expect, repl.Spec.NodeName, string(repl.UID))
		if err := rooms.release(ctx, m.Pod.Namespace, moveRoom); err != nil {
			return n + 1, err
		}
		for i, in := range m.LetsIn {
			got, err := p.awaitBound(ctx, timeout, func(q *v1.Pod) bool { return q.UID == in.Pod.UID })
			switch {
			case err != nil:
				p.events.Eventf(in.Pod, nil, v1.EventTypeWarning, "NotBound", "Move", "resfit made room for the pod on %s; it was not bound within %s", in.Node, timeout)
				return n + 1, fmt.Errorf("move %d made room for %s/%s on %s; it was not bound within %s", n+1, in.Pod.Namespace, in.Pod.Name, in.Node, timeout)
			case got.Spec.NodeName != in.Node:
				p.events.Eventf(got, nil, v1.EventTypeWarning, "LandedElsewhere", "Move", "resfit made room for the pod on %s; it is bound to %s", in.Node, got.Spec.NodeName)
				return n + 1, fmt.Errorf("move %d made room for %s/%s on %s; it is bound to %s", n+1, in.Pod.Namespace, in.Pod.Name, in.Node, got.Spec.NodeName)
			}
			addTo(expect, in.Node, string(got.UID))
			if err := rooms.release(ctx, in.Pod.Namespace, pendingRooms[i]); err != nil {
				return n + 1, err
			}
		}
	}
	return len(plan.Moves), nil
}

// changedSince reports how the pods on the nodes the moves read differ
// from what the plan expects ("" when they do not): the nodes each move
// leaves and lands on, and those it lets pods in on.
func (p *Plugin) changedSince(expect map[string]map[string]bool, gone map[string]bool, rest []Move) string {
	pods, err := p.pods.List(labels.Everything())
	if err != nil {
		return err.Error()
	}
	now := podsByNode(pods)
	for _, m := range rest {
		check := []string{m.From, m.To}
		for _, in := range m.LetsIn {
			check = append(check, in.Node)
			if q, err := p.pods.Pods(in.Pod.Namespace).Get(in.Pod.Name); err != nil || q.UID != in.Pod.UID || q.Spec.NodeName != "" {
				return fmt.Sprintf("pending pod %s/%s is gone or bound", in.Pod.Namespace, in.Pod.Name)
			}
		}
		for _, node := range check {
			has := maps.Clone(now[node])
			for uid := range has {
				if gone[uid] {
					delete(has, uid)
				}
			}
			if !maps.Equal(has, expect[node]) {
				return fmt.Sprintf("the pods on %s are not those the plan read", node)
			}
		}
	}
	return ""
}

// awaitBound waits for a pod that matches to be bound (not terminating),
// and returns it.
func (p *Plugin) awaitBound(ctx context.Context, timeout time.Duration, match func(*v1.Pod) bool) (*v1.Pod, error) {
	var found *v1.Pod
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		pods, err := p.pods.List(labels.Everything())
		if err != nil {
			return false, err
		}
		i := slices.IndexFunc(pods, func(q *v1.Pod) bool { return match(q) && q.Spec.NodeName != "" && q.DeletionTimestamp == nil })
		if i >= 0 {
			found = pods[i]
		}
		return i >= 0, nil
	})
	return found, err
}

// ownedBy are the UIDs of the pods of a namespace that a controller owns.
func (p *Plugin) ownedBy(namespace string, owner types.UID) map[types.UID]bool {
	out := map[types.UID]bool{}
	pods, _ := p.pods.Pods(namespace).List(labels.Everything())
	for _, q := range pods {
		if controllerUID(q) == owner {
			out[q.UID] = true
		}
	}
	return out
}

// controllerUID is the UID of a pod's controller ("" without one).
func controllerUID(pod *v1.Pod) types.UID {
	for _, r := range pod.OwnerReferences {
		if r.Controller != nil && *r.Controller {
			return r.UID
		}
	}
	return ""
}

func addTo(m map[string]map[string]bool, node, uid string) {
	if m[node] == nil {
		m[node] = map[string]bool{}
	}
	m[node][uid] = true
}
