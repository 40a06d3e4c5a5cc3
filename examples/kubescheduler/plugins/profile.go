package plugins

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/dra"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/lifetime"
)

// profile is what the resfit plugins of one kube-scheduler profile share,
// those that read devices apart from those that do not (a pod's task
// differs between them): the node table and what fills it (nodes), DRA's
// watch and reader, the nodes Reserve and Unreserve named, and the cycle
// the table and the pod's task were last made for. The first plugin to
// evaluate a cycle reads the nodes and the pod; the others score the same
// table and task with their own pipelines (scorer). kube-scheduler runs
// one cycle at a time per profile.
type profile struct {
	mu    sync.Mutex // serialises evaluations and learning
	nodes nodes
	// the cycle last prepared: its CycleState and pod, the pod's task,
	// how it was read, and its number.
	state   fwk.CycleState
	pod     *v1.Pod
	podTask *kubebridge.PodTask
	opts    scoring.TaskOptions
	cycle   uint64
	// hinted are the nodes Reserve and Unreserve were told of since the
	// last cycle was prepared; Unreserve may run in a binding cycle,
	// alongside the next scheduling cycle, so they have a mutex of their
	// own. spareHints is the last cycle's list, reused for the next.
	hintMu     sync.Mutex
	hinted     []string
	spareHints []string
	// draWatch counts changes to DRA objects (dra.go); nil without a
	// SharedDRAManager. draReader reads them, under mu.
	draWatch  *draWatch
	draReader dra.Reader
	// modelAsked is what the profile's plugins asked of its lifetime
	// model, merged, and modelFrom the first plugin that asked for any
	// option (followLifetimes).
	modelAsked lifetime.ModelOptions
	modelFrom  string
}

// cycleReads counts the cycles prepare read the nodes and the pod for,
// for tests.
var cycleReads atomic.Int64

// profileKey finds a profile's shared state: its framework handle, and
// whether the plugin reads devices.
type profileKey struct {
	handle  fwk.Handle
	devices bool
}

// profiles holds every profile's shared state, for the life of the
// process (a scheduler builds its profiles once).
var profiles struct {
	sync.Mutex
	m map[profileKey]*profile
}

// profileOf returns the shared state of a handle's plugins that do (or do
// not) read devices, made and watching DRA at the first call. A plugin
// built without a handle (in a test) has a state of its own.
func profileOf(name string, h fwk.Handle, devices bool) (*profile, error) {
	if h == nil {
		return sharedProfile(name, nil, devices)
	}
	profiles.Lock()
	defer profiles.Unlock()
	key := profileKey{h, devices}
	if pr, ok := profiles.m[key]; ok {
		return pr, nil
	}
	pr, err := sharedProfile(name, h, devices)
	if err != nil {
		return nil, err
	}
	if profiles.m == nil {
		profiles.m = map[profileKey]*profile{}
	}
	profiles.m[key] = pr
	return pr, nil
}

func sharedProfile(name string, h fwk.Handle, devices bool) (*profile, error) {
	pr := &profile{}
	pr.nodes.withDevices = devices
	return pr, pr.watchDRA(name, h)
}

// clock is the time a profile that follows when pods end reads them at
// (a variable for the tests).
var clock = time.Now

// followLifetimes has the profile follow when its nodes empty
// (lifetimes), for a plugin whose configuration reads it, with a model of
// the options the plugin asks for (config.Config.LifetimeModel), merged
// with those the profile's other plugins asked for; the table is made
// again in the next cycle, its rows' pods read. Options that do not go
// together with the other plugins' are an error naming the plugin that
// asked for them first. kube-scheduler builds every plugin before it
// starts its informers, so a model made again for a later plugin's
// options has learned nothing yet.
func (pr *profile) followLifetimes(h fwk.Handle, plugin string, opts lifetime.ModelOptions) error {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.nodes.ends == nil {
		ends, err := newLifetimes(h, clock, opts)
		if err != nil {
			return err
		}
		pr.nodes.ends, pr.nodes.schema = ends, nil
		pr.modelAsked, pr.modelFrom = opts, plugin
		return nil
	}
	merged, err := pr.modelAsked.Merge(opts)
	if err == nil {
		err = merged.Check()
	}
	if err != nil {
		return fmt.Errorf("the profile's lifetime model: the options asked do not go together with %s's: %w", pr.modelFrom, err)
	}
	if merged != pr.modelAsked {
		if err := pr.nodes.ends.relearn(merged); err != nil {
			return err
		}
		if pr.modelAsked == (lifetime.ModelOptions{}) {
			pr.modelFrom = plugin
		}
		pr.modelAsked = merged
	}
	return nil
}

// hint queues a node, by name, to be read again in the next cycle.
func (pr *profile) hint(name string) {
	pr.hintMu.Lock()
	pr.hinted = append(pr.hinted, name)
	pr.hintMu.Unlock()
}

// prepare makes the table hold the cycle's nodes and reads the pod's task,
// once per cycle: a later call with the same CycleState and pod finds
// them made. The caller holds pr.mu.
func (pr *profile) prepare(h fwk.Handle, state fwk.CycleState, pod *v1.Pod, given []fwk.NodeInfo, subset bool) error {
	if pr.state != nil && sameState(pr.state, state) && pr.pod == pod && pr.podTask != nil {
		return nil
	}
	pr.state, pr.pod, pr.podTask = nil, nil, nil
	infos := given
	all := false
	if h != nil && h.SnapshotSharedLister() != nil {
		if list, err := h.SnapshotSharedLister().NodeInfos().List(); err == nil {
			infos, all = list, true
		}
	}
	pr.hintMu.Lock()
	hinted := pr.hinted
	pr.hinted, pr.spareHints = pr.spareHints[:0], hinted
	pr.hintMu.Unlock()
	n := &pr.nodes
	if n.ends != nil {
		n.ends.advance() // before any row is read, at the cycle's time
	}
	if pr.draWatch != nil {
		if seen := pr.draWatch.count(); seen != n.draRead {
			d, err := readDRAChanges(&pr.draReader, pr.draWatch, h.SharedDRAManager())
			if err != nil {
				return err
			}
			n.draRead = seen
			n.staleMu.Lock()
			n.setDRA(d)
			n.staleMu.Unlock()
		}
	}
	if err := n.prepare(pod, infos, all, hinted); err != nil {
		return err
	}
	opts := n.taskOptions()
	pt, err := kubebridge.NewPodTask(n.dra, n.schema, pod, opts)
	if err != nil {
		return err
	}
	if n.ends != nil {
		pt.SetEnds(n.ends.expect(pod))
	}
	pr.cycle++
	cycleReads.Add(1)
	if subset && 4*len(given) < n.table.Len() {
		n.refreshSome(given)
	}
	pr.state, pr.pod, pr.podTask, pr.opts = state, pod, pt, opts
	return nil
}
