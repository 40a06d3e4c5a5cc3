package kubetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

// TestDeletePodsPastTheFakeWatch: 250 deletions, more than a fake
// clientset's watch holds, reach the informer without a panic, and a
// count that does not fall is an error naming it.
func TestDeletePodsPastTheFakeWatch(t *testing.T) {
	ctx := t.Context()
	client := fake.NewClientset()
	names := make([]string, 250)
	for i := range names {
		names[i] = fmt.Sprint("p-", i)
		if _, err := client.CoreV1().Pods("default").Create(ctx, Pod(names[i], "n", "cpu", "1"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	lister := factory.Core().V1().Pods().Lister()
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	listed := func() (int, error) {
		pods, err := lister.List(labels.Everything())
		return len(pods), err
	}
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
