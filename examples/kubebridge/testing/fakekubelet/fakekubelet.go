// Package fakekubelet plays the kubelet for integration tests on a real
// kube-apiserver, where no kubelet runs: the pods bound to nodes start,
// and those that declare how long they run (resfit.io/runs-for) end, so
// that their controllers (a Job's) replace them.
package fakekubelet

import (
	"context"
	"hash/fnv"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/resfit/resfit/examples/kubebridge/planning"
)

// Start is a pod the kubelet started: its name, node and when.
type Start struct {
	UID        types.UID
	Name, Node string
	At         time.Time
}

// Run plays the kubelet for the namespace's pods until ctx ends, ten times
// a second: a pod bound to a node runs (Running, ready, started now), and
// one that declares how long it runs ends (Succeeded) after 70 to 100% of
// that, the share drawn from its UID; a pod that declares nothing runs on.
// started, when not nil, is told of each pod it started, on Run's
// goroutine.
func Run(ctx context.Context, cs kubernetes.Interface, namespace string, started func(Start)) {
	ends := map[types.UID]time.Time{}
	for ctx.Err() == nil {
		list, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return
		}
		now := time.Now()
		for i := range list.Items {
			p := &list.Items[i]
			if p.Spec.NodeName == "" || p.DeletionTimestamp != nil {
				continue
			}
			switch p.Status.Phase {
			case v1.PodPending, "":
				d, _ := time.ParseDuration(p.Annotations[planning.RunsForAnnotation])
				h := fnv.New32a()
				h.Write([]byte(p.UID))
				ends[p.UID] = now.Add(time.Duration(float64(d) * (0.7 + 0.3*float64(h.Sum32()%1000)/1000)))
				p.Status = v1.PodStatus{Phase: v1.PodRunning, StartTime: ptr.To(metav1.NewTime(now)),
					Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}}
				if _, err := cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err == nil && started != nil {
					started(Start{UID: p.UID, Name: p.Name, Node: p.Spec.NodeName, At: now})
				}
			case v1.PodRunning:
				if end, ok := ends[p.UID]; ok && p.Annotations[planning.RunsForAnnotation] != "" && now.After(end) {
					p.Status.Phase = v1.PodSucceeded
					p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse}}
					p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "main", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
						ExitCode: 0, Reason: "Completed", StartedAt: *p.Status.StartTime, FinishedAt: metav1.NewTime(now)}}}}
					if _, err := cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err == nil {
						delete(ends, p.UID)
					}
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}
