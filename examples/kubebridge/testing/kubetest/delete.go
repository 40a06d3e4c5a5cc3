package kubetest

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// deleteBatch is how many deletions DeletePods makes before it waits: a
// fake clientset's watch holds 100 events and panics past them.
const deleteBatch = 50

// DeletePods deletes the named pods of namespace through client, in
// batches a fake clientset's watch holds: after each batch it waits, up
// to 10 s, until listed (how many pods an informer of the client lists)
// has fallen by as many as were deleted. The error names the pod or the
// count that failed.
func DeletePods(ctx context.Context, client kubernetes.Interface, namespace string, names []string, listed func() (int, error)) error {
	before, err := listed()
	if err != nil {
		return err
	}
	for i, name := range names {
		if err := client.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("deleting %s/%s: %w", namespace, name, err)
		}
		if (i+1)%deleteBatch != 0 && i+1 != len(names) {
			continue
		}
		want, now := before-(i+1), 0
		if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			n, err := listed()
			now = n
			return n == want, err
		}); err != nil {
			return fmt.Errorf("%d pods deleted: the informer lists %d, want %d: %w", i+1, now, want, err)
		}
	}
	return nil
}
