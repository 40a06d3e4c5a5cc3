//go:build volcano

package volcano

import (
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"volcano.sh/volcano/pkg/scheduler/api"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/planning"
	"github.com/resfit/resfit/scoring/lifetime"
)

// clock is the time a session opens at, which its lifetime view reads
// ends at (a variable for the tests).
var clock = time.Now

// sessionEnds is a session's view of when its nodes empty, for a
// configuration that reads it (config.Config.ReadsLifetimes: ResfitFrag's
// lifetime term, ResfitLifetime): a lifetime.Tracker of the session's
// rows at the time the session opened, each row's pods those of its
// node's tasks (planning.RunningLifetime: a task the session allocates
// starts then), read again with the row; and the model it predicts by,
// the plugin's, kept across sessions. Volcano's pods declare their ends
// by their activeDeadlineSeconds and resfit.io/runs-for; a Job's deadline
// is not read (a Volcano Job has none, and the scheduler lists no
// batch/v1 Jobs). It is used under the session view's mutex.
type sessionEnds struct {
	name    string
	at      time.Time
	model   *lifetime.Model
	tracker *lifetime.Tracker[api.TaskID]
	// ids and pods are read's scratch.
	ids  []api.TaskID
	pods []lifetime.Pod
}

// followEnds opens a session's lifetime view of rows rows at now, with the
// plugin's model after it has learned from the session's pods (all of
// them, finished ones included: sessionLearners). The model learns with
// opts (the configuration's, config.Config.LifetimeModel); where the
// plugin's configuration asked for other options at the last session (it
// was reloaded), the plugin's model starts afresh.
func followEnds(plugin string, pods []*v1.Pod, rows int, now time.Time, opts lifetime.ModelOptions) (*sessionEnds, error) {
	v, _ := sessionLearners.LoadOrStore(plugin, &planning.KeptModel{})
	model, err := v.(*planning.KeptModel).Learn(pods, now, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", plugin, err)
	}
	e := &sessionEnds{name: plugin, at: now, model: model, tracker: lifetime.NewTracker[api.TaskID](model, rows)}
	e.tracker.Advance(planning.Seconds(now))
	return e, nil
}

// sessionLearners are the plugins' models by name, each kept across
// sessions (planning.KeptModel): Volcano builds its plugins again for
// every session, and a session holds the cluster's pods as it opened, so
// the pods that ended are learned from one session to the next
// (planning.Learner: those listed finished, and those listed running
// before and not now).
var sessionLearners sync.Map // plugin name → *planning.KeptModel

// read makes row's pods those of the node's tasks that run there or are
// placed there (finished ones are not). A pod whose declared end does
// not read is logged and followed as declaring none. The caller holds
// the session view's mutex.
func (e *sessionEnds) read(row int, n *api.NodeInfo) {
	e.ids, e.pods = e.ids[:0], e.pods[:0]
	for _, t := range n.Tasks {
		pod := t.Pod
		if pod == nil || kubebridge.Finished(pod) {
			continue
		}
		p, ok, err := planning.RunningLifetime(pod, nil, e.at)
		if err != nil {
			klog.Errorf("%s: %v; followed as declaring no end", e.name, err)
			p, ok, _ = planning.RunningLifetime(planning.WithoutRunsFor(pod), nil, e.at)
		}
		if ok {
			e.ids, e.pods = append(e.ids, t.UID), append(e.pods, p)
		}
	}
	e.tracker.Replace(row, e.ids, e.pods, planning.Seconds(e.at))
}

// expect is when the pod is expected to end (planning.ExpectedEnd), 0
// when nothing says, and from what; a declared end that does not read is logged and
// counts as none.
func (e *sessionEnds) expect(pod *v1.Pod) (float64, lifetime.Source) {
	at, src, err := planning.ExpectedEnd(pod, nil, e.model, e.at)
	if err != nil {
		klog.Errorf("%s: %v; placed as declaring no end", e.name, err)
		at, src, _ = planning.ExpectedEnd(planning.WithoutRunsFor(pod), nil, e.model, e.at)
	}
	return at, src
}
