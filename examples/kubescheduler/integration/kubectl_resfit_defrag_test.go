package integration

import (
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resfit/resfit/examples/kubebridge/testing/examplecluster"
)

// kubectl resfit defrag live, read by the ServiceAccount that may only
// list: on the defrag example (examplecluster.DefragCluster) made through
// the API, with its PodDisruptionBudget and that budget's status written as
// the disruption controller writes it (no disruption allowed), the plans
// are those of the shipped snapshot, worked by hand in resfitctl's tests:
// the budget forbids moving infer/infer-1, so notebook/notebook-0 moves to
// make room for train/job-2. With the budget allowing one disruption, the
// plan moves infer-1 instead. The pods are as they were: it plans only.
func TestKubectlResfitLiveDefrag(t *testing.T) {
	testCtx := startAPIServer(t, "kubectl-resfit-defrag", "--authorization-mode=RBAC") // the viewer may only list
	admin, ctx := testCtx.ClientSet, testCtx.Ctx
	nodes, pods, budgets := examplecluster.DefragCluster()
	createExampleCluster(t, ctx, admin, func() ([]*v1.Node, []*v1.Pod) { return nodes, pods })
	pdb := budgets[0].DeepCopy()
	status := pdb.Status
	pdb.CreationTimestamp, pdb.Generation, pdb.Status = metav1.Time{}, 0, policyv1.PodDisruptionBudgetStatus{}
	created, err := admin.PolicyV1().PodDisruptionBudgets(pdb.Namespace).Create(ctx, pdb, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Status = status
	created.Status.ObservedGeneration = created.Generation
	if created, err = admin.PolicyV1().PodDisruptionBudgets(pdb.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubeconfig := viewerKubeconfig(t, ctx, admin, testCtx.KubeConfig)
	before, err := admin.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	shipped := filepath.Join("..", "..", "kubectl-resfit", "testdata", "defrag-cluster.json")
	rsf := filepath.Join("..", "..", "kubectl-resfit", "testdata", "rsf.yaml")
	for _, args := range [][]string{
		{"defrag", "--config", rsf, "--for", "train/job-2"},
		{"defrag", "--config", rsf, "--for", "job-2", "-n", "train", "-o", "json"},
		{"defrag", "--config", rsf},
	} {
		live := kubectlResfit(t, append([]string{"--kubeconfig", kubeconfig}, args...)...)
		if got := kubectlResfit(t, append([]string{"--snapshot", shipped}, args...)...); got != live {
			t.Errorf("%v: live and the shipped snapshot differ:\nlive:\n%s\nsnapshot:\n%s", args, live, got)
		}
		t.Logf("%v:\n%s", args, live)
	}
	out := kubectlResfit(t, "--kubeconfig", kubeconfig, "defrag", "--config", rsf, "--for", "train/job-2")
	if !strings.Contains(out, "1     notebook/notebook-0  gpu-b  gpu-a (GPU 6)") || !strings.Contains(out, "PodDisruptionBudget infer/infer allows 0 disruptions") {
		t.Errorf("with the budget:\n%s", out)
	}
	// The budget allows one disruption now (the controller's status as it
	// would be with a second replica healthy): infer-1 may move.
	created.Status.DisruptionsAllowed, created.Status.CurrentHealthy, created.Status.ExpectedPods = 1, 2, 2
	if _, err := admin.PolicyV1().PodDisruptionBudgets(pdb.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	out = kubectlResfit(t, "--kubeconfig", kubeconfig, "defrag", "--config", rsf, "--for", "train/job-2")
	if !strings.Contains(out, "1     infer/infer-1  gpu-b  gpu-a (GPU 6)") || !strings.Contains(out, "PodDisruptionBudget infer/infer allows 1 disruption; the plan uses 1.") {
		t.Errorf("with one disruption allowed:\n%s", out)
	}
	podsUnchanged(t, ctx, admin, before.Items)
}
