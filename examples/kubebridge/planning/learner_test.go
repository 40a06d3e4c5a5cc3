package planning

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
	"github.com/resfit/resfit/scoring/lifetime"
)

// observed records what a Learner teaches, one line per lesson.
type observed []string

func (o *observed) Observe(keys []string, lived float64) {
	*o = append(*o, fmt.Sprintf("%s: %g", strings.Join(keys, ","), lived))
}

// TestLearnerByHand: a finished pod teaches once, however often listed; a
// running pod that is listed no more teaches that it ran until the
// listing that missed it; one that finished first teaches its finish; a
// pod that never started teaches nothing.
func TestLearnerByHand(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	done := kubetest.Succeeded(kubetest.Pod("done", "gpu-a", "cpu", "1"), at(-30), 20*time.Minute)
	gone := kubetest.Running(kubetest.Pod("gone", "gpu-a", "cpu", "2"), at(-10))
	ends := kubetest.Running(kubetest.Pod("ends", "gpu-a", "cpu", "3"), at(-5))
	waits := kubetest.Pod("waits", "", "cpu", "4")
	for i, p := range []*v1.Pod{done, gone, ends, waits} {
		p.UID = types.UID(fmt.Sprint("uid-", i))
	}
	var o observed
	l := NewLearner(&o)
	l.List([]*v1.Pod{done, gone, ends, waits}, at(0))
	l.List([]*v1.Pod{done, ends}, at(1))
	finished := kubetest.Succeeded(ends.DeepCopy(), at(-5), 6*time.Minute)
	l.List([]*v1.Pod{done, finished}, at(2))
	l.List(nil, at(3))
	want := observed{"shape cpu=1: 1200", "shape cpu=2: 660", "shape cpu=3: 360"}
	if !slices.Equal(o, want) {
		t.Errorf("learned %q, want %q", o, want)
	}
}

// TestLearnerIsItsReference: on random pods that appear, start, finish and
// are deleted between listings, a Learner teaches exactly what each pod
// says: its run to its last container's finish when it was listed
// finished, else, when it was listed running and then not at all, its run
// to the listing that missed it; nothing else, once.
func TestLearnerIsItsReference(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	rapid.Check(t, func(rt *rapid.T) {
		listings := rapid.IntRange(1, 6).Draw(rt, "listings")
		at := func(k int) time.Time { return t0.Add(time.Duration(k) * 10 * time.Minute) }
		type life struct {
			appear, start, finish, remove int // listings; start, finish, remove may be past the last
			startOffset, finishOffset     int // minutes before the listing (0..9)
			uid                           bool
		}
		n := rapid.IntRange(1, 6).Draw(rt, "pods")
		lives := make([]life, n)
		for i := range lives {
			l := &lives[i]
			l.appear = rapid.IntRange(0, listings-1).Draw(rt, "appear")
			l.start = rapid.IntRange(l.appear, listings+1).Draw(rt, "start")
			l.finish = rapid.IntRange(l.start+1, listings+2).Draw(rt, "finish")
			l.remove = rapid.IntRange(l.appear+1, listings+2).Draw(rt, "remove")
			l.startOffset = rapid.IntRange(0, 9).Draw(rt, "startOffset")
			l.finishOffset = rapid.IntRange(0, 9).Draw(rt, "finishOffset")
			l.uid = rapid.Bool().Draw(rt, "uid")
		}
		started := func(i int) time.Time {
			return at(lives[i].start).Add(-time.Duration(lives[i].startOffset) * time.Minute)
		}
		ranFor := func(i int) time.Duration {
			// finishes after its start, before the listing that sees it finished
			d := at(lives[i].finish).Add(-time.Duration(lives[i].finishOffset) * time.Minute).Sub(started(i))
			return max(d, time.Minute)
		}
		var got observed
		learner := NewLearner(&got)
		for k := range listings {
			var pods []*v1.Pod
			for i, l := range lives {
				if k < l.appear || k >= l.remove {
					continue
				}
				p := kubetest.Pod(fmt.Sprint("p", i), "", "cpu", fmt.Sprint(i+1))
				if l.uid {
					p.UID = types.UID(fmt.Sprint("uid-", i))
				}
				switch {
				case k >= l.finish:
					p = kubetest.Succeeded(p, started(i), ranFor(i))
					p.Spec.NodeName = "node"
				case k >= l.start:
					p = kubetest.Running(p, started(i))
					p.Spec.NodeName = "node"
				case rapid.Bool().Draw(rt, "bound"):
					p.Spec.NodeName = "node" // bound, not started
				}
				pods = append(pods, p)
			}
			learner.List(pods, at(k))
		}
		var want observed
		for i, l := range lives {
			keys := []string{fmt.Sprintf("shape cpu=%d", i+1)}
			switch {
			case l.finish < min(l.remove, listings):
				want.Observe(keys, ranFor(i).Seconds())
			case l.start < l.remove && l.remove < listings:
				want.Observe(keys, at(l.remove).Sub(started(i)).Seconds())
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			rt.Fatalf("learned %q, want %q", got, want)
		}
	})
}

// A KeptModel keeps its model, and what it learned, while the options
// asked stay the same, and starts afresh when they change.
func TestKeptModelStartsAfreshOnOtherOptions(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	done := kubetest.Pod("done", "gpu-a", "cpu", "1")
	done = kubetest.Running(done, now.Add(-time.Hour))
	done.Status.Phase = v1.PodSucceeded
	var k KeptModel
	if k.Model() != nil {
		t.Fatal("a model before the first listing")
	}
	four := lifetime.ModelOptions{MinSamples: 4}
	first, err := k.Learn([]*v1.Pod{done}, now, four)
	if err != nil {
		t.Fatal(err)
	}
	again, err := k.Learn(nil, now.Add(time.Minute), four)
	if err != nil || again != first || again.Options() != four.Resolved() {
		t.Fatalf("the same options: model %p (%+v), want the first, %p", again, again.Options(), first)
	}
	key := LifetimeKeys(done)[len(LifetimeKeys(done))-1]
	if first.Seen(key) != 1 {
		t.Errorf("learned %d lifetimes of %q, want the finished pod's", first.Seen(key), key)
	}
	other, err := k.Learn(nil, now.Add(2*time.Minute), lifetime.ModelOptions{MinSamples: 8})
	if err != nil || other == first || other.Seen(key) != 0 || k.Model() != other {
		t.Fatalf("other options: model %p, seen %d; want a fresh one", other, other.Seen(key))
	}
	if _, err := k.Learn(nil, now, lifetime.ModelOptions{Window: -1}); err == nil {
		t.Error("options lifetime cannot use: no error")
	}
}
