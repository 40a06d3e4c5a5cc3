package kubetest

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// deleteBatch is how many deletions DeletePods makes before it waits: a
// fake clientset's watch holds 100 events and panics past them.
const deleteBatch = 50

// watchProbe names the pod DeletePods creates and deletes before the pods
// it is given.
const watchProbe = "kubetest-watch-probe"

// DeletePods deletes the named pods of namespace through client, in
// batches a fake clientset's watch holds: after each batch it waits, up
// to 10 s, until listed (how many pods an informer of the client lists)
// has fallen by as many as were deleted. The error names the pod or the
// count that failed.
//
// First it creates a pod of its own in namespace (watchProbe: no node, no
// containers started) and waits until the informer lists it, then deletes
// it. An informer's cache is synced once its list is in, and its watch
// can start after that; a fake clientset's watch replays the objects
// created since the list, but not those deleted, so a deletion made
// before the watch starts would never reach the informer. The probe,
// created after the list, is listed only through the watch.
func DeletePods(ctx context.Context, client kubernetes.Interface, namespace string, names []string, listed func() (int, error)) error {
	before, err := listed()
	if err != nil {
		return err
	}
	probe := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: watchProbe, Namespace: namespace}}
	if _, err := client.CoreV1().Pods(namespace).Create(ctx, probe, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating %s/%s: %w", namespace, watchProbe, err)
	}
	if err := waitListed(ctx, listed, before+1, fmt.Sprintf("%s/%s created", namespace, watchProbe)); err != nil {
		return err
	}
	if err := client.CoreV1().Pods(namespace).Delete(ctx, watchProbe, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("deleting %s/%s: %w", namespace, watchProbe, err)
	}
	if err := waitListed(ctx, listed, before, fmt.Sprintf("%s/%s deleted", namespace, watchProbe)); err != nil {
		return err
	}
	for i, name := range names {
		if err := client.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("deleting %s/%s: %w", namespace, name, err)
		}
		if (i+1)%deleteBatch != 0 && i+1 != len(names) {
			continue
		}
		if err := waitListed(ctx, listed, before-(i+1), fmt.Sprintf("%d pods deleted", i+1)); err != nil {
			return err
		}
	}
	return nil
}

// waitListed waits, up to 10 s, until listed says want; the error says
// after what.
func waitListed(ctx context.Context, listed func() (int, error), want int, after string) error {
	now := 0
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		n, err := listed()
		now = n
		return n == want, err
	}); err != nil {
		return fmt.Errorf("%s: the informer lists %d, want %d: %w", after, now, want, err)
	}
	return nil
}
