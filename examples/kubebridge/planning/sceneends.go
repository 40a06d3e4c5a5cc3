package planning

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/cache"
	"github.com/resfit/resfit/scoring/lifetime"
)

// Ends is what a Scene reads of when pods end, for a configuration that
// reads it (config.Config.ReadsLifetimes): the time it scores at, and the
// Jobs whose deadlines its pods declare (nil: none read).
type Ends struct {
	Now  time.Time
	Jobs JobLookup
	// Model is the model the scene predicts by, for a host that keeps one
	// across its readings and teaches it itself (a Learner over its
	// successive listings, say), made with the options the configuration
	// asks for (config.Config.LifetimeModel); nil: the scene's own, which
	// learns from the listed pods that finished.
	Model *lifetime.Model
}

// sceneEnds is a Scene's lifetime view: a model that learned from the
// listed pods that finished (Lived), and a tracker of the running pods
// on the cache's rows, as at Ends.Now. Pods the scene places afterwards
// (cache.Cache.Assume) are not followed.
type sceneEnds struct {
	Ends
	// warnings are the pods whose declared end does not read, followed as
	// declaring none.
	warnings []string
	model    *lifetime.Model
	tracker  *lifetime.Tracker[string] // by kubebridge.PodKey: a snapshot's pods may have no UID
}

// followEnds reads the pods into a lifetime view of the cache's rows: the
// finished ones teach the model how long they ran (the scene's own, of
// the configuration's options; a model the host gives, Ends.Model, is the
// host's to teach, and must learn with those options), the others
// on a node are followed there (RunningLifetime). A pod whose declared end does not
// read is followed as declaring none, with a warning naming it.
func followEnds(c *cache.Cache, pods []*v1.Pod, e Ends, opts lifetime.ModelOptions) (*sceneEnds, error) {
	model, own := e.Model, e.Model == nil
	if own {
		var err error
		if model, err = lifetime.NewModel(opts); err != nil {
			return nil, err
		}
	} else if got, want := model.Options(), opts.Resolved(); got != want {
		return nil, fmt.Errorf("the host's lifetime model learns with %+v, the configuration asks for %+v", got, want)
	}
	se := &sceneEnds{Ends: e, model: model, tracker: lifetime.NewTracker[string](model, c.Table().Len())}
	now := Seconds(e.Now)
	se.tracker.Advance(now)
	for _, p := range pods {
		if own && kubebridge.Finished(p) {
			if lived, ok := Lived(p, e.Now); ok {
				model.Observe(LifetimeKeys(p), lived)
			}
		}
	}
	for _, p := range pods {
		row, ok := c.Row(p.Spec.NodeName)
		if !ok || kubebridge.Finished(p) {
			continue
		}
		lp, ok, err := RunningLifetime(p, e.Jobs, e.Now)
		if err != nil {
			se.warnings = append(se.warnings, err.Error()+": followed as declaring no end")
			lp, ok, _ = RunningLifetime(WithoutRunsFor(p), e.Jobs, e.Now)
		}
		if ok {
			lp.Row = row
			se.tracker.Start(kubebridge.PodKey(p), lp, now)
		}
	}
	return se, nil
}

// WithoutRunsFor is the pod without its resfit.io/runs-for annotation, for
// a pod whose annotation does not read: a host follows it as declaring
// nothing of its own (a deadline it has still counts).
func WithoutRunsFor(pod *v1.Pod) *v1.Pod {
	pod = pod.DeepCopy()
	delete(pod.Annotations, RunsForAnnotation)
	return pod
}

// EndsOf is what the scene knows of when a node empties (lifetime.Empty:
// its latest expected end, and from what its pods' ends come), and ok
// false where the configuration reads no lifetimes or the node is not
// the scene's.
func (sc *Scene) EndsOf(node string) (lifetime.Empty, bool) {
	row, found := sc.cache.Row(node)
	if sc.ends == nil || !found {
		return lifetime.Empty{}, false
	}
	return sc.ends.tracker.Nodes().Row(row), true
}

// PodEnd is when the scene expects the pod to end (ExpectedEnd at the
// scene's time: seconds on a lifetime model's clock, 0 when nothing says)
// and from what; ok is false where the configuration reads no lifetimes.
func (sc *Scene) PodEnd(pod *v1.Pod) (at float64, src lifetime.Source, ok bool, err error) {
	if sc.ends == nil {
		return 0, lifetime.Unknown, false, nil
	}
	at, src, err = ExpectedEnd(pod, sc.ends.Jobs, sc.ends.model, sc.ends.Now)
	return at, src, true, err
}

// LearnedOf is how many lifetimes of pods like the pod (its lifetime keys,
// LifetimeKeys: the most of any) the scene's model holds, and how many it
// needs of a key to predict (its MinSamples); ok is false where the
// configuration reads no lifetimes.
func (sc *Scene) LearnedOf(pod *v1.Pod) (held, needed int, ok bool) {
	if sc.ends == nil {
		return 0, 0, false
	}
	for _, k := range LifetimeKeys(pod) {
		held = max(held, sc.ends.model.Seen(k))
	}
	return held, sc.ends.model.Options().MinSamples, true
}

// Lifetimes is the scene's view of when its nodes empty, by the cache's
// rows (what its configuration's lifetime term reads, config.Host's
// Lifetimes), for a pipeline of the host's own over the same rows; nil
// where the configuration reads no lifetimes.
func (sc *Scene) Lifetimes() *lifetime.Nodes {
	if sc.ends == nil {
		return nil
	}
	return sc.ends.tracker.Nodes()
}

// WholeNodes is how many of the cache's nodes with the most devices are
// wholly free (lifetime.CountWhole), which decides whether the lifetime
// term waits (lifetime.Whole.Abound); ok is false where the configuration
// reads no lifetimes or the cache has no device view.
func (sc *Scene) WholeNodes() (lifetime.Whole, bool) {
	devices := sc.cache.Devices()
	if sc.ends == nil || devices == nil {
		return lifetime.Whole{}, false
	}
	return lifetime.CountWhole(devices), true
}

// EndsAt is the time the scene reads ends at (Ends.Now); zero where the
// configuration reads no lifetimes.
func (sc *Scene) EndsAt() time.Time {
	if sc.ends == nil {
		return time.Time{}
	}
	return sc.ends.Now
}

// RunningEnd is when the scene expects a pod running on a node to end, and
// from what: its declared end while ahead, else what the model learned of
// pods like it at its age (lifetime.Tracker.Expect), else, for a pod that
// has run a while, as long again (lifetime.Lindy); zero and
// lifetime.Unknown where nothing says, for a pod on no node, or where the
// configuration reads no lifetimes. The error is DeclaredEnd's.
func (sc *Scene) RunningEnd(pod *v1.Pod) (time.Time, lifetime.Source, error) {
	if sc.ends == nil {
		return time.Time{}, lifetime.Unknown, nil
	}
	lp, ok, err := RunningLifetime(pod, sc.ends.Jobs, sc.ends.Now)
	if err != nil || !ok {
		return time.Time{}, lifetime.Unknown, err
	}
	at, src := sc.ends.tracker.Expect(lp.Keys, lp.Started, lp.Declared, Seconds(sc.ends.Now))
	if src == lifetime.Unknown {
		return time.Time{}, src, nil
	}
	return time.Unix(0, int64(at*1e9)), src, nil
}
