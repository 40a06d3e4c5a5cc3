package plugins

import (
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/resfit/resfit/examples/kubebridge/planning"
	"github.com/resfit/resfit/scoring/lifetime"
)

// lifetimes is what a profile follows of when pods end, for the plugins
// whose configuration reads it (ResfitLifetime, ResfitFrag with its
// lifetime term: config.Config.ReadsLifetimes): the model, which learns
// from the pods that end (the scheduler's pod informer: a pod leaves it
// when it finishes or is deleted), and a tracker over the node table's
// rows, each row's pods read from its NodeInfo whenever the row is read
// (planning.RunningLifetime; a pod the scheduler assumed on a node, or
// one its kubelet has not started, counts as not started: nothing is
// guessed from its age until it has a start time). The tracker is made again with the table (nodes.rebuild); the
// model is kept. It is used under the profile's mutex; the model is safe
// for concurrent use.
type lifetimes struct {
	model   *lifetime.Model
	tracker *lifetime.Tracker[types.UID]
	jobs    planning.JobLookup
	now     func() time.Time
	// at is the cycle's time (advance), which the rows read in the cycle
	// are read at; ids and pods are read's scratch.
	at   time.Time
	ids  []types.UID
	pods []lifetime.Pod
}

// newLifetimes learns, with a model of those options, from the pods the
// handle's informer sees end, and reads Jobs (their deadlines) through
// its lister; without a handle (a test), from nothing and without Jobs.
func newLifetimes(h fwk.Handle, now func() time.Time, opts lifetime.ModelOptions) (*lifetimes, error) {
	model, err := lifetime.NewModel(opts)
	if err != nil {
		return nil, err
	}
	l := &lifetimes{model: model, now: now, at: now()}
	if h == nil || h.SharedInformerFactory() == nil {
		return l, nil
	}
	f := h.SharedInformerFactory()
	l.jobs = planning.ListedJobs(f.Batch().V1().Jobs().Lister())
	_, err = f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: l.ended})
	return l, err
}

// relearn makes the model afresh, of those options: before the informers
// start (followLifetimes), and under the profile's mutex.
func (l *lifetimes) relearn(opts lifetime.ModelOptions) error {
	model, err := lifetime.NewModel(opts)
	if err != nil {
		return err
	}
	l.model = model
	return nil
}

// ended learns how long a pod that left the scheduler's informer ran
// (planning.Lived): it finished, or was deleted. A pod that never
// started teaches nothing.
func (l *lifetimes) ended(obj any) {
	if gone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = gone.Obj
	}
	pod, ok := obj.(*v1.Pod)
	if !ok || pod.Spec.NodeName == "" {
		return
	}
	if lived, ok := planning.Lived(pod, l.now()); ok {
		l.model.Observe(planning.LifetimeKeys(pod), lived)
	}
}

// rows starts a tracker of n rows afresh, at the cycle's time.
func (l *lifetimes) rows(n int) {
	l.tracker = lifetime.NewTracker[types.UID](l.model, n)
	l.tracker.Advance(planning.Seconds(l.at))
}

// advance brings the tracker to now, the cycle's time: pods that outlived
// their expected ends are predicted again.
func (l *lifetimes) advance() {
	l.at = l.now()
	if l.tracker != nil {
		l.tracker.Advance(planning.Seconds(l.at))
	}
}

// read makes row's pods those of its NodeInfo. A pod whose declared end
// does not read (resfit.io/runs-for) is logged, and followed as one that
// declares none.
func (l *lifetimes) read(row int32, info fwk.NodeInfo) {
	l.tracker.Grow(int(row) + 1)
	l.ids, l.pods = l.ids[:0], l.pods[:0]
	for _, pi := range info.GetPods() {
		pod := pi.GetPod()
		p, ok, err := planning.RunningLifetime(pod, l.jobs, l.at)
		if err != nil {
			klog.ErrorS(err, "declared end unreadable; followed as undeclared", "pod", klog.KObj(pod))
			p, ok, _ = planning.RunningLifetime(planning.WithoutRunsFor(pod), l.jobs, l.at)
		}
		if ok {
			l.ids, l.pods = append(l.ids, pod.UID), append(l.pods, p)
		}
	}
	l.tracker.Replace(int(row), l.ids, l.pods, planning.Seconds(l.at))
}

// expect is when the pod is expected to end (planning.ExpectedEnd), 0
// when nothing says, and from what; a declared end that does not read is logged and
// counts as none.
func (l *lifetimes) expect(pod *v1.Pod) (float64, lifetime.Source) {
	at, src, err := planning.ExpectedEnd(pod, l.jobs, l.model, l.at)
	if err != nil {
		klog.ErrorS(err, "declared end unreadable; placed as undeclared", "pod", klog.KObj(pod))
		at, src, _ = planning.ExpectedEnd(planning.WithoutRunsFor(pod), l.jobs, l.model, l.at)
	}
	return at, src
}

// cycleTime is the time of the cycle the lifetimes were last brought to
// (zero without lifetimes).
func (l *lifetimes) cycleTime() time.Time {
	if l == nil {
		return time.Time{}
	}
	return l.at
}

// one is a view of these lifetimes for a table of its own (evaluateOne)
// at the cycle's time at: the same model and Jobs, a tracker of its own.
// Only what is set once (model, Jobs, clock) is read of l, so it may run
// beside the next cycle's prepare.
func (l *lifetimes) one(at time.Time) *lifetimes {
	if l == nil {
		return nil
	}
	return &lifetimes{model: l.model, jobs: l.jobs, now: l.now, at: at}
}

// lifetimeSignature is what a pod's expected end depends on in the pod
// (SignPod): what the lifetime model knows it by (its controller, its
// shape) and what it declares (its activeDeadlineSeconds, its
// resfit.io/runs-for). Pods of one Job sign alike.
func lifetimeSignature(pod *v1.Pod) [3]string {
	deadline := ""
	if d := pod.Spec.ActiveDeadlineSeconds; d != nil {
		deadline = strconv.FormatInt(*d, 10)
	}
	return [3]string{strings.Join(planning.LifetimeKeys(pod), "\n"), deadline, pod.Annotations[planning.RunsForAnnotation]}
}
