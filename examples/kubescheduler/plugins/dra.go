package plugins

import (
	"fmt"
	"slices"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/tools/cache"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"

	"github.com/resfit/resfit/examples/kubebridge"
)

// DRA in the plugins: what the framework's SharedDRAManager holds
// (ResourceSlices with device taint rules applied, DeviceClasses, and the
// ResourceClaims with the allocations the DynamicResources plugin has
// made in memory) is read by the host layer's rules (kubebridge.DRAReader,
// which reuses the classes and devices while their objects stay), kept
// across cycles like the node table, and read again only after something
// changed: an informer event of a slice, class or claim, or a pod with
// claims reserved or unreserved (its claim's allocation is then in the
// tracker before any event). A reading with the same devices has the rows
// of the nodes whose allocations changed read again; any other rebuilds
// the table.

// draWatch counts changes to DRA objects, from the informers' handlers
// and from Reserve and Unreserve.
type draWatch struct {
	changes atomic.Uint64
}

// OnAdd counts an object added after the informer's initial list: those of
// the initial list are what the lister already holds, which the first
// reading reads (the informer delivers them to a new handler, one event
// each, for some time after it is added).
func (w *draWatch) OnAdd(_ any, initial bool) {
	if !initial {
		w.changes.Add(1)
	}
}

func (w *draWatch) OnUpdate(any, any)                   { w.changes.Add(1) }
func (w *draWatch) OnDelete(any)                        { w.changes.Add(1) }
func (w *draWatch) bump()                               { w.changes.Add(1) }
func (w *draWatch) count() uint64                       { return w.changes.Load() }
func (w *draWatch) handler() cache.ResourceEventHandler { return w }

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
	pr.draWatch.bump() // read at the first cycle
	r := h.SharedInformerFactory().Resource().V1()
	for _, inf := range []cache.SharedIndexInformer{r.ResourceSlices().Informer(), r.DeviceClasses().Informer(), r.ResourceClaims().Informer()} {
		if _, err := inf.AddEventHandler(pr.draWatch.handler()); err != nil {
			return fmt.Errorf("%s: watching DRA objects: %w", name, err)
		}
	}
	return nil
}

// readDRA reads the DRA objects the framework holds, by the host layer's
// rule (kubebridge.DRAReader.ReadFrom).
func readDRA(r *kubebridge.DRAReader, m fwk.SharedDRAManager) (*kubebridge.DRA, error) {
	return r.ReadFrom(kubebridge.DRAListers{
		Slices: m.ResourceSlices().ListWithDeviceTaintRules, Classes: m.DeviceClasses().List,
		Claims: m.ResourceClaims().List, Pending: m.ResourceClaims().GetPendingAllocation,
	})
}

// setDRA takes a new reading of DRA: with the same devices, the rows of
// the nodes whose allocations changed are queued to be read again (as
// hinted nodes are); otherwise the table is rebuilt.
func (n *nodes) setDRA(d *kubebridge.DRA) {
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
func usesDRA(pod *v1.Pod, d *kubebridge.DRA) bool {
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
