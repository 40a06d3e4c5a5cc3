package integration

import (
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/job"
	"k8s.io/utils/ptr"

	"github.com/resfit/resfit/examples/kubebridge/planning"
	"github.com/resfit/resfit/examples/kubebridge/testing/fakekubelet"
)

// Whole-node pods where short ones come and go, end to end: two nodes of
// 8 GPUs, kept busy by two Jobs of 1-GPU pods run by the real Job
// controller (12 short and 8 long at a time, four more than the GPUs, so
// that some always wait; a pod says it runs 1 s, or 8 s, by
// resfit.io/runs-for, and the test, playing the kubelet, ends it within
// that), and a pod of 8 GPUs, big, that never finds a node free: each pod
// that ends is followed by another at once.
//
//   - With the descheduler running ResfitDefrag in reserve mode once a
//     second, big is elected after a second of waiting and the node that
//     frees first is held for it in a node-wide room; the scheduler's
//     ResfitRooms lets a pod there only where it cannot delay big, and big
//     is bound within 20 runs. Meanwhile 1-second pods that end before the
//     node frees still start there (the backfill rule): without it (a
//     mutation) none does, and the test fails.
//   - With the descheduler off, over as long as big took to be bound with
//     it (from its creation), big is never bound.
func TestReservationStartsTheWholeNodePod(t *testing.T) {
	var took time.Duration // from big's creation to its binding, with the descheduler
	for _, withDescheduler := range []bool{true, false} {
		name := map[bool]string{true: "with the descheduler", false: "without"}[withDescheduler]
		t.Run(name, func(t *testing.T) {
			c := startCluster(t)
			s := c.startStream()
			big := c.createBig()
			if !withDescheduler {
				if took == 0 {
					t.Skip("the run with the descheduler did not bind big")
				}
				time.Sleep(time.Until(big.CreationTimestamp.Add(took + time.Second)))
				if p, err := c.cs.CoreV1().Pods("train").Get(c.ctx, big.Name, metav1.GetOptions{}); err != nil || p.Spec.NodeName != "" {
					t.Fatalf("without the descheduler big is bound to %q within %v (%v); the stream should keep it out", p.Spec.NodeName, took, err)
				}
				return
			}
			rooms := dynamic.NewForConfigOrDie(c.config).Resource(planning.RoomResource)
			reserve := func(policy string) string {
				return strings.Replace(policy, "mode: make-room", "mode: reserve\n      starveAfter: 1s\n      patience: 1h\n      holdFor: 1m", 1)
			}
			var held string
			var heldSince, boundAt time.Time
			for run := 1; run <= 20 && boundAt.IsZero(); run++ {
				c.deschedule(reserve)
				list, err := rooms.List(c.ctx, metav1.ListOptions{})
				c.must(err)
				for _, u := range list.Items {
					if room, err := planning.ReadRoom(&u); err == nil && room.NodeWide && room.PodUID == big.UID {
						if held != room.Node {
							held, heldSince = room.Node, time.Now()
						}
					}
				}
				if p, err := c.cs.CoreV1().Pods("train").Get(c.ctx, big.Name, metav1.GetOptions{}); err == nil && p.Spec.NodeName != "" {
					boundAt = time.Now()
					took = boundAt.Sub(big.CreationTimestamp.Time)
					if p.Spec.NodeName != held {
						t.Errorf("big bound to %s, not to the node held for it (%q)", p.Spec.NodeName, held)
					}
					t.Logf("big bound to %s after %d runs", p.Spec.NodeName, run)
					break
				}
				time.Sleep(time.Second)
			}
			if boundAt.IsZero() {
				t.Fatalf("big not bound within 20 runs (held %q)\n%s", held, c.state())
			}
			if backfilled := s.startedOn(held, heldSince, boundAt); len(backfilled) == 0 {
				t.Errorf("no pod started on %s while it was held for big (from %v to %v): the backfill rule let none in", held, heldSince.Format(time.StampMilli), boundAt.Format(time.StampMilli))
			} else {
				t.Logf("backfilled on %s while held: %v", held, backfilled)
			}
			// The next run finds big bound and lets its room go.
			c.deschedule(reserve)
			list, err := rooms.List(c.ctx, metav1.ListOptions{})
			c.must(err)
			for _, u := range list.Items {
				if room, err := planning.ReadRoom(&u); err != nil || room.PodUID == big.UID {
					t.Errorf("room %s left once big is bound (%v)", u.GetName(), err)
				}
			}
		})
	}
}

// stream is the Jobs' pods as the test's kubelet runs them: where and when
// each started.
type stream struct {
	mu      sync.Mutex
	started map[types.UID]start
}

type start struct {
	name, node string
	at         time.Time
}

// startedOn are the pods that started on node within (from, to).
func (s *stream) startedOn(node string, from, to time.Time) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, st := range s.started {
		if st.node == node && st.at.After(from) && st.at.Before(to) && st.name != "big" {
			out = append(out, st.name)
		}
	}
	return out
}

// gpuNode is a node of 8 GPUs, ready.
func gpuNode(name string) *v1.Node {
	alloc := v1.ResourceList{v1.ResourceCPU: kres.MustParse("96"), v1.ResourceMemory: kres.MustParse("512Gi"), v1.ResourcePods: kres.MustParse("110"),
		"nvidia.com/gpu": kres.MustParse("8")}
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: v1.NodeStatus{Capacity: alloc, Allocatable: alloc, Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}}}
}

// gpuPodSpec is the resfit scheduler's pod of gpus GPUs and as many cores.
func gpuPodSpec(gpus string) v1.PodSpec {
	req := v1.ResourceList{v1.ResourceCPU: kres.MustParse(gpus), v1.ResourceMemory: kres.MustParse("1Gi"), "nvidia.com/gpu": kres.MustParse(gpus)}
	return v1.PodSpec{SchedulerName: scheduler_, TerminationGracePeriodSeconds: ptr.To[int64](0), RestartPolicy: v1.RestartPolicyNever,
		Containers: []v1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{Requests: req, Limits: req}}}}
}

// startStream makes the nodes, starts the Job controller and the test's
// kubelet, and creates the two Jobs; it returns once all 16 GPUs are busy.
func (c *cluster) startStream() *stream {
	ctx, cs := c.ctx, c.cs
	for _, n := range []string{"gpu-a", "gpu-b"} {
		_, err := cs.CoreV1().Nodes().Create(ctx, gpuNode(n), metav1.CreateOptions{})
		c.must(err)
	}
	_, err := cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "train"}}, metav1.CreateOptions{})
	c.must(err)
	f := informers.NewSharedInformerFactory(kubernetes.NewForConfigOrDie(rest.AddUserAgent(c.config, "job-informers")), 0)
	jc, err := job.NewController(klog.NewContext(ctx, klog.Background()), kubernetes.NewForConfigOrDie(rest.AddUserAgent(c.config, "job-controller")),
		f.Core().V1().Pods(), f.Batch().V1().Jobs(), nil, nil)
	c.must(err)
	f.Start(ctx.Done())
	go jc.Run(ctx, 2)
	s := &stream{started: map[types.UID]start{}}
	go fakekubelet.Run(ctx, cs, "train", func(st fakekubelet.Start) {
		s.mu.Lock()
		s.started[st.UID] = start{name: st.Name, node: st.Node, at: st.At}
		s.mu.Unlock()
	})
	// 12 short pods and 8 long ones for 16 GPUs: four are always pending,
	// so a GPU that frees is taken at once and no node empties by chance.
	for _, j := range []struct {
		name, runsFor string
		parallel      int32
	}{{"short", "1s", 12}, {"long", "8s", 8}} {
		spec := gpuPodSpec("1")
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: j.name}, Spec: batchv1.JobSpec{
			Parallelism: ptr.To(j.parallel), Completions: ptr.To[int32](100000), BackoffLimit: ptr.To[int32](1000),
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{planning.RunsForAnnotation: j.runsFor}}, Spec: spec}}}
		_, err := cs.BatchV1().Jobs("train").Create(ctx, job, metav1.CreateOptions{})
		c.must(err)
	}
	c.poll("16 GPUs busy", func() (bool, error) {
		list, err := cs.CoreV1().Pods("train").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		running := 0
		for _, p := range list.Items {
			if p.Status.Phase == v1.PodRunning {
				running++
			}
		}
		return running == 16, nil
	})
	return s
}

// createBig creates the 8-GPU pod and waits until the scheduler has
// found no node for it.
func (c *cluster) createBig() *v1.Pod {
	big := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: "big"}, Spec: gpuPodSpec("8")}
	created, err := c.cs.CoreV1().Pods("train").Create(c.ctx, big, metav1.CreateOptions{})
	c.must(err)
	c.unschedulable("train", "big")
	return created
}
