package planning

import (
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
}

// sceneEnds is a Scene's lifetime view: a model that learned from the
// listed pods that finished (Lived), and a tracker of the running pods
// on the cache's rows, as at Ends.Now. Pods the scene places afterwards
// (cache.Cache.Assume) are not followed.
type sceneEnds struct {
	Ends
	model   *lifetime.Model
	tracker *lifetime.Tracker[string] // by kubebridge.PodKey: a snapshot's pods may have no UID
}

// followEnds reads the pods into a lifetime view of the cache's rows: the
// finished ones teach the model how long they ran, the others on a node
// are followed there (RunningLifetime). A pod whose declared end does not
// read is an error naming it.
func followEnds(c *cache.Cache, pods []*v1.Pod, e Ends) (*sceneEnds, error) {
	model, err := lifetime.NewModel(lifetime.ModelOptions{})
	if err != nil {
		return nil, err
	}
	se := &sceneEnds{Ends: e, model: model, tracker: lifetime.NewTracker[string](model, c.Table().Len())}
	now := Seconds(e.Now)
	se.tracker.Advance(now)
	for _, p := range pods {
		if kubebridge.Finished(p) {
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
			return nil, err
		}
		if ok {
			lp.Row = row
			se.tracker.Start(kubebridge.PodKey(p), lp, now)
		}
	}
	return se, nil
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

// EndsAt is the time the scene reads ends at (Ends.Now); zero where the
// configuration reads no lifetimes.
func (sc *Scene) EndsAt() time.Time {
	if sc.ends == nil {
		return time.Time{}
	}
	return sc.ends.Now
}
