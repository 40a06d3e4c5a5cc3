package plugins

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/tools/cache"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/dra"
)

// draWatch gathers changes to DRA objects, from the informers' handlers
// and from Reserve and Unreserve, for the next cycle to read. It is safe
// for concurrent use.
type draWatch struct {
	changes atomic.Uint64 // counts them
	mu      sync.Mutex
	all     bool                   // list and read every object again
	claims  map[string]claimChange // else these claims, by key
}

// claimChange is what the watch last heard of a claim: the object of its
// informer's event (nil when only a pod's reservation named the claim),
// and whether the event was its deletion.
type claimChange struct {
	obj  *resourcev1.ResourceClaim
	gone bool
}

// readAll has every object read again.
func (w *draWatch) readAll() {
	w.mu.Lock()
	w.all, w.claims = true, nil
	w.mu.Unlock()
	w.changes.Add(1)
}

// claim has one claim read again; obj is nil for a claim a pod's
// reservation named.
func (w *draWatch) claim(key string, obj *resourcev1.ResourceClaim, gone bool) {
	w.mu.Lock()
	if !w.all {
		if w.claims == nil {
			w.claims = map[string]claimChange{}
		}
		if prev, ok := w.claims[key]; obj != nil || !ok {
			w.claims[key] = claimChange{obj, gone}
		} else {
			w.claims[key] = prev // the event's object stays
		}
	}
	w.mu.Unlock()
	w.changes.Add(1)
}

// take is what changed since the last take, and forgets it.
func (w *draWatch) take() (all bool, claims map[string]claimChange) {
	w.mu.Lock()
	defer w.mu.Unlock()
	all, claims = w.all, w.claims
	w.all, w.claims = false, nil
	return all, claims
}

func (w *draWatch) count() uint64 { return w.changes.Load() }

// deviceEvents are a slice or class informer's events: each has every
// object read again. Objects of the initial list are what the lister
// already holds, which the first reading reads (the informer delivers
// them to a new handler, one event each, for some time after it is added).
type deviceEvents struct{ w *draWatch }

func (e deviceEvents) OnAdd(_ any, initial bool) {
	if !initial {
		e.w.readAll()
	}
}
func (e deviceEvents) OnUpdate(any, any) { e.w.readAll() }
func (e deviceEvents) OnDelete(any)      { e.w.readAll() }

// claimEvents are the claim informer's events: each has its claim read
// again (an object that is not a claim, every object).
type claimEvents struct{ w *draWatch }

func (e claimEvents) OnAdd(obj any, initial bool) {
	if !initial {
		e.event(obj, false)
	}
}
func (e claimEvents) OnUpdate(_, obj any) { e.event(obj, false) }
func (e claimEvents) OnDelete(obj any)    { e.event(obj, true) }

func (e claimEvents) event(obj any, gone bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	c, ok := obj.(*resourcev1.ResourceClaim)
	if !ok || c == nil {
		e.w.readAll()
		return
	}
	e.w.claim(c.Namespace+"/"+c.Name, c, gone)
}

// watchDRA registers the profile's handlers on the handle's informers of
// DRA objects (which kube-scheduler then starts, as it does for the
// DynamicResources plugin's); name is the plugin's, for errors.
func (pr *profile) watchDRA(name string, h fwk.Handle) error {
	if h == nil || h.SharedInformerFactory() == nil || h.SharedDRAManager() == nil {
		return nil
	}
	// What a claim takes is what kube-scheduler's allocator gives it, run
	// with the features kube-scheduler's gates give its DynamicResources
	// plugin.
	features := dynamicresources.AllocatorFeatures(feature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate))
	pr.draReader.Features = &features
	pr.draWatch = &draWatch{}
	pr.draWatch.readAll() // read at the first cycle
	r := h.SharedInformerFactory().Resource().V1()
	for _, w := range []struct {
		inf     cache.SharedIndexInformer
		handler cache.ResourceEventHandler
	}{
		{r.ResourceSlices().Informer(), deviceEvents{pr.draWatch}},
		{r.DeviceClasses().Informer(), deviceEvents{pr.draWatch}},
		{r.ResourceClaims().Informer(), claimEvents{pr.draWatch}},
	} {
		if _, err := w.inf.AddEventHandler(w.handler); err != nil {
			return fmt.Errorf("%s: watching DRA objects: %w", name, err)
		}
	}
	return nil
}

// readDRAChanges reads what changed since the last reading: every object,
// or, when only claims changed, those claims as the SharedDRAManager holds
// them now (its assume cache: the informer's object, or the one the
// scheduler wrote since), with what the informer's event said when that is
// newer (the event can reach this handler before the assume cache's).
func readDRAChanges(r *dra.Reader, w *draWatch, m fwk.SharedDRAManager) (*dra.Reading, error) {
	all, changes := w.take()
	if all {
		return readDRA(r, m)
	}
	claims := make(map[string]*resourcev1.ResourceClaim, len(changes))
	for key, ch := range changes {
		namespace, name, _ := strings.Cut(key, "/")
		got, err := m.ResourceClaims().Get(namespace, name)
		switch {
		case errors.Is(err, assumecache.ErrNotFound):
			got = nil
		case err != nil:
			return readDRA(r, m)
		}
		switch {
		case ch.gone && (got == nil || !newer(got, ch.obj)):
			got = nil
		case ch.obj != nil && !ch.gone && (got == nil || newer(ch.obj, got)):
			got = ch.obj
		}
		claims[key] = got
	}
	d, err := r.ReadClaims(claims, m.ResourceClaims().GetPendingAllocation)
	if err != nil {
		return readDRA(r, m) // no reading yet, or a claim it cannot read: the full reading says
	}
	return d, nil
}

// newer reports whether a's resourceVersion is above b's, both read as
// integers as kube-scheduler's assume cache reads them; false when either
// is not one.
func newer(a, b *resourcev1.ResourceClaim) bool {
	va, errA := strconv.ParseInt(a.ResourceVersion, 10, 64)
	vb, errB := strconv.ParseInt(b.ResourceVersion, 10, 64)
	return errA == nil && errB == nil && va > vb
}

// readDRA reads the DRA objects the framework holds, by the host layer's
// rule (dra.Reader.ReadFrom).
func readDRA(r *dra.Reader, m fwk.SharedDRAManager) (*dra.Reading, error) {
	return r.ReadFrom(dra.Listers{
		Slices: m.ResourceSlices().ListWithDeviceTaintRules, Classes: m.DeviceClasses().List,
		Claims: m.ResourceClaims().List, Pending: m.ResourceClaims().GetPendingAllocation,
	})
}

// setDRA takes a new reading of DRA: with the same devices, the rows of
// the nodes whose allocations changed are queued to be read again (as
// hinted nodes are); otherwise the table is rebuilt.
func (n *nodes) setDRA(d *dra.Reading) {
	if d == nil || n.dra == nil {
		if d != n.dra {
			n.dra, n.schema = d, nil // rows and schema again
		}
		return
	}
	changed, same := d.ChangedNodes(n.dra)
	n.dra = d
	if !same || n.schema == nil {
		n.schema = nil // rows and schema again
		return
	}
	n.writer.WithDRA(d)
	for _, name := range changed {
		if row, ok := n.rows[name]; ok {
			n.gens[row] = -1 // read again, whatever its NodeInfo's generation
			n.stale = append(n.stale, row)
		}
	}
}

// usesDRA reports whether a pod's placement changes what DRA holds: it
// has claims, or asks for a resource a device class backs (KEP-5004: the
// scheduler allocates a claim for it).
func usesDRA(pod *v1.Pod, d *dra.Reading) bool {
	if len(pod.Spec.ResourceClaims) > 0 {
		return true
	}
	if d == nil {
		return false
	}
	backed := d.ResourceNames()
	for _, name := range kubebridge.ResourceNames(pod) {
		if _, found := slices.BinarySearch(backed, name); found {
			return true
		}
	}
	return false
}
