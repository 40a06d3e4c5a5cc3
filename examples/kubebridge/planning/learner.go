package planning

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/scoring/lifetime"
)

// A Learner teaches a lifetime model from successive listings of a
// cluster's pods, for a host that sees its pods only as it lists them (a
// Volcano session, which holds the cluster's tasks as the session opened)
// and has no informer to tell it which pods went. Each listing:
//   - a pod listed as finished (Succeeded or Failed) teaches how long it
//     ran (Lived), once, however many listings it stays in;
//   - a pod that was running at the last listing and is not listed now,
//     running or finished, was deleted in between: it teaches that it
//     ran until now, this listing's time (so up to the time between two
//     listings too long);
//   - the pods running now, on a node with a start time, are remembered
//     for the next listing.
//
// Pods are known by UID (namespace/name for one without). A pod that never
// started teaches nothing. A Learner is stateful; it is safe for
// concurrent use (a listing at a time).
type Learner struct {
	mu    sync.Mutex
	model Observer
	// running are the pods running at the last listing; learned the
	// finished pods of the last listing, learned already.
	running map[types.UID]ran
	learned map[types.UID]bool
}

// ran is what a Learner keeps of a running pod: what the model knows it by
// and when it started.
type ran struct {
	keys    []string
	started time.Time
}

// Observer is what a Learner teaches: a lifetime.Model.
type Observer interface {
	Observe(keys []string, lived float64)
}

var _ Observer = (*lifetime.Model)(nil)

// NewLearner teaches model.
func NewLearner(model Observer) *Learner {
	return &Learner{model: model, running: map[types.UID]ran{}, learned: map[types.UID]bool{}}
}

// List learns from a listing of the cluster's pods made at now (see
// Learner).
func (l *Learner) List(pods []*v1.Pod, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	running := make(map[types.UID]ran, len(l.running))
	learned := make(map[types.UID]bool, len(l.learned))
	for _, p := range pods {
		id := uidOf(p)
		switch {
		case kubebridge.Finished(p):
			if !l.learned[id] {
				if lived, ok := Lived(p, now); ok {
					l.model.Observe(LifetimeKeys(p), lived)
				}
			}
			learned[id] = true
		case p.Spec.NodeName != "" && p.Status.StartTime != nil:
			if was, ok := l.running[id]; ok {
				running[id] = was
			} else {
				running[id] = ran{keys: LifetimeKeys(p), started: p.Status.StartTime.Time}
			}
		}
	}
	for id, r := range l.running {
		if _, still := running[id]; still || learned[id] {
			continue
		}
		if lived := now.Sub(r.started); lived >= 0 {
			l.model.Observe(r.keys, lived.Seconds())
		}
	}
	l.running, l.learned = running, learned
}

// uidOf is the pod's UID, or namespace/name for a pod without one.
func uidOf(p *v1.Pod) types.UID {
	if p.UID != "" {
		return p.UID
	}
	return types.UID(kubebridge.PodKey(p))
}

// KeptModel is a host's lifetime model kept across its listings of the
// cluster's pods and taught by a Learner from each: made at the first
// listing with the options the host's configuration asks for, and made
// afresh, having learned nothing, at a listing whose configuration asks
// for others (it was read again). The zero value is ready. It is
// stateful; it is safe for concurrent use.
type KeptModel struct {
	mu      sync.Mutex
	model   *lifetime.Model
	learner *Learner
}

// Learn learns from a listing of the cluster's pods made at now, and is
// the model, of the options opts (an error where lifetime cannot use
// them).
func (k *KeptModel) Learn(pods []*v1.Pod, now time.Time, opts lifetime.ModelOptions) (*lifetime.Model, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.model == nil || k.model.Options() != opts.Resolved() {
		model, err := lifetime.NewModel(opts)
		if err != nil {
			return nil, err
		}
		k.model, k.learner = model, NewLearner(model)
	}
	k.learner.List(pods, now)
	return k.model, nil
}

// Model is the model, nil before the first listing.
func (k *KeptModel) Model() *lifetime.Model {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.model
}
