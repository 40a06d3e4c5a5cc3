package integration

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/resfit/resfit/examples/kubebridge/testing/examplecluster"
)

// kubectl-resfit live on a cluster whose GPUs are published through DRA
// (the example with NVIDIA-shaped ResourceSlices, the chart's classes and
// the jobs' claims, examplecluster.DRACluster), read by a ServiceAccount
// that may only list: the same answers as from the shipped snapshot
// (testdata/dra-cluster.json), whose numbers resfitctl's tests work out by
// hand.
func TestKubectlResfitLiveDRA(t *testing.T) {
	testCtx := startAPIServer(t, "kubectl-resfit-dra", "--authorization-mode=RBAC") // the viewer may only list
	admin, ctx := testCtx.ClientSet, testCtx.Ctx
	createDRAExampleCluster(t, ctx, admin)
	kubeconfig := viewerKubeconfig(t, ctx, admin, testCtx.KubeConfig)
	shipped := filepath.Join("..", "..", "kubectl-resfit", "testdata", "dra-cluster.json")
	rsf := filepath.Join("..", "..", "kubectl-resfit", "testdata", "rsf.yaml")
	for _, args := range [][]string{
		{"explain", "--config", rsf, "train/job-1"},
		{"explain", "--config", rsf, "train/job-2", "-o", "json"},
		{"explain", "--config", rsf, "train/job-0"},
		{"whatif", "-q", "--config", rsf},
	} {
		live := kubectlResfit(t, append([]string{"--kubeconfig", kubeconfig}, args...)...)
		if got := kubectlResfit(t, append([]string{"--snapshot", shipped}, args...)...); got != live {
			t.Errorf("%v: live and the shipped snapshot differ:\nlive:\n%s\nsnapshot:\n%s", args, live, got)
		}
		t.Logf("%v:\n%s", args, live)
	}
	out := kubectlResfit(t, "--kubeconfig", kubeconfig, "explain", "--config", rsf, "train/job-1")
	if !strings.Contains(out, "1     gpu-a  875     875                    2/8 NVIDIA-H100-80GB-HBM3") {
		t.Errorf("live explain:\n%s", out)
	}
	// The claims are as they were: kubectl-resfit only lists.
	claims, err := admin.ResourceV1().ResourceClaims("train").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range claims.Items {
		if (c.Name == "job-0-gpus") != (c.Status.Allocation != nil) {
			t.Errorf("claim %s: allocation %v", c.Name, c.Status.Allocation)
		}
	}
}

// createDRAExampleCluster makes examplecluster.DRACluster through the API:
// its nodes and pods as createExampleCluster does, then the DeviceClasses,
// ResourceSlices and claims, an allocated claim's status written as the
// scheduler writes it (allocation, reserved for its pod).
func createDRAExampleCluster(t *testing.T, ctx context.Context, cs kubernetes.Interface) {
	t.Helper()
	_, _, objects := examplecluster.DRACluster()
	createExampleCluster(t, ctx, cs, func() ([]*v1.Node, []*v1.Pod) {
		nodes, pods, _ := examplecluster.DRACluster()
		return nodes, pods
	})
	for _, o := range objects {
		if err := createDRAObject(ctx, cs, o); err != nil {
			t.Fatal(err)
		}
	}
}

func createDRAObject(ctx context.Context, cs kubernetes.Interface, o runtime.Object) error {
	r := cs.ResourceV1()
	switch o := o.(type) {
	case *resourcev1.DeviceClass:
		_, err := r.DeviceClasses().Create(ctx, o, metav1.CreateOptions{})
		return err
	case *resourcev1.ResourceSlice:
		_, err := r.ResourceSlices().Create(ctx, o, metav1.CreateOptions{})
		return err
	case *resourcev1.ResourceClaim:
		status := o.Status
		o.CreationTimestamp, o.Status = metav1.Time{}, resourcev1.ResourceClaimStatus{}
		created, err := r.ResourceClaims(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		if err != nil || status.Allocation == nil {
			return err
		}
		for i, ref := range status.ReservedFor {
			p, err := cs.CoreV1().Pods(o.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			status.ReservedFor[i].UID = p.UID
		}
		created.Status = status
		_, err = r.ResourceClaims(o.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{})
		return err
	}
	return nil
}
