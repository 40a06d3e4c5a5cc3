package kubetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// withPods is a fake clientset holding n pods, p-0 up, in default.
func withPods(t *testing.T, n int) (*fake.Clientset, []string) {
	client := fake.NewClientset()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprint("p-", i)
		if _, err := client.CoreV1().Pods("default").Create(t.Context(), Pod(names[i], "n", "cpu", "1"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return client, names
}

// informerCount starts an informer of the client's pods, waits for its
// cache, and counts the pods it lists.
func informerCount(ctx context.Context, client *fake.Clientset) func() (int, error) {
	factory := informers.NewSharedInformerFactory(client, 0)
	lister := factory.Core().V1().Pods().Lister()
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return func() (int, error) {
		pods, err := lister.List(labels.Everything())
		return len(pods), err
	}
}

// TestDeletePodsPastTheFakeWatch: 250 deletions, more than a fake
// clientset's watch holds, reach the informer without a panic, and a
// count that does not fall is an error naming it.
func TestDeletePodsPastTheFakeWatch(t *testing.T) {
	ctx := t.Context()
	client, names := withPods(t, 250)
	listed := informerCount(ctx, client)
	if err := DeletePods(ctx, client, "default", names[:240], listed); err != nil {
		t.Fatal(err)
	}
	if n, _ := listed(); n != 10 {
		t.Errorf("%d pods listed after 240 of 250 deleted, want 10", n)
	}
	stuck := func() (int, error) { return 10, nil }
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := DeletePods(short, client, "default", names[240:241], stuck); err == nil {
		t.Error("a count that does not fall: no error")
	}
}

// lateWatch is a watch that starts on the tracker only once release is
// closed: an informer whose watch starts after its cache is synced.
type lateWatch struct {
	events chan watch.Event
	stop   chan struct{}
	once   sync.Once
}

func (w *lateWatch) Stop()                          { w.once.Do(func() { close(w.stop) }) }
func (w *lateWatch) ResultChan() <-chan watch.Event { return w.events }

// watchLate makes the client's pod watches start when release is closed.
func watchLate(client *fake.Clientset, release <-chan struct{}) {
	client.PrependWatchReactor("pods", func(action clienttesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if a, ok := action.(clienttesting.WatchActionImpl); ok {
			opts = a.ListOptions
		}
		gvr, ns := action.GetResource(), action.GetNamespace()
		w := &lateWatch{events: make(chan watch.Event), stop: make(chan struct{})}
		go func() {
			defer close(w.events)
			select {
			case <-release:
			case <-w.stop:
				return
			}
			from, err := client.Tracker().Watch(gvr, ns, opts)
			if err != nil {
				return
			}
			defer from.Stop()
			for {
				select {
				case e, ok := <-from.ResultChan():
					if !ok {
						return
					}
					select {
					case w.events <- e:
					case <-w.stop:
						return
					}
				case <-w.stop:
					return
				}
			}
		}()
		return true, w, nil
	})
}

// TestDeletePodsWaitsForTheWatch: where the informer's watch starts only
// after its cache is synced (here: once a pod is created after it), the
// deletions still reach it; without the probe they would be made before
// the watch and never listed.
func TestDeletePodsWaitsForTheWatch(t *testing.T) {
	ctx := t.Context()
	client, names := withPods(t, 3)
	release := make(chan struct{})
	var once sync.Once
	client.PrependReactor("create", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		once.Do(func() { close(release) })
		return false, nil, nil
	})
	watchLate(client, release)
	listed := informerCount(ctx, client)
	if err := DeletePods(ctx, client, "default", names[:2], listed); err != nil {
		t.Fatal(err)
	}
	if n, _ := listed(); n != 1 {
		t.Errorf("%d pods listed after 2 of 3 deleted, want 1", n)
	}
}
