package integration

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/resfit/resfit/examples/kubebridge/testing/examplecluster"
	"github.com/resfit/resfit/examples/kubectl-resfit/command"
)

// kubectl-resfit run live against a real apiserver, reading the cluster as
// a user who may only list nodes, pods and DRA objects, answers exactly as it
// does from a snapshot of the same objects, and as from the snapshot the
// README's example ships; and the cluster is as it was.
func TestKubectlResfitLive(t *testing.T) {
	testCtx := startAPIServer(t, "kubectl-resfit", "--authorization-mode=RBAC") // the viewer may only list
	admin, ctx := testCtx.ClientSet, testCtx.Ctx
	createExampleCluster(t, ctx, admin, examplecluster.Cluster)
	kubeconfig := viewerKubeconfig(t, ctx, admin, testCtx.KubeConfig)

	// The snapshot a user would take of the live objects.
	nodes, err := admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods, err := admin.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var nodeList []*v1.Node
	for i := range nodes.Items {
		nodeList = append(nodeList, &nodes.Items[i])
	}
	var podList []*v1.Pod
	for i := range pods.Items {
		podList = append(podList, &pods.Items[i])
	}
	taken := filepath.Join(t.TempDir(), "cluster.json")
	if err := os.WriteFile(taken, examplecluster.SnapshotJSON(nodeList, podList), 0o644); err != nil {
		t.Fatal(err)
	}
	shipped := filepath.Join("..", "..", "kubectl-resfit", "testdata", "cluster.json")
	rsf := filepath.Join("..", "..", "kubectl-resfit", "testdata", "rsf.yaml")
	rsfSRA := filepath.Join("..", "..", "kubectl-resfit", "testdata", "rsf-sra.yaml")

	for _, args := range [][]string{
		{"explain", "--config", rsf, "train/job-1", "-o", "json"},
		{"explain", "--config", rsfSRA, "web/api-1"},
		{"explain", "--config", rsf, "-n", "train", "job-0", "-o", "json"},
		{"whatif", "-q", "--config", rsf, "--config", rsfSRA, "-o", "json"},
		{"whatif", "-q", "--config", rsf, "--config", rsfSRA},
	} {
		live := kubectlResfit(t, append([]string{"--kubeconfig", kubeconfig}, args...)...)
		for _, snapshot := range []string{taken, shipped} {
			if got := kubectlResfit(t, append([]string{"--snapshot", snapshot}, args...)...); got != live {
				t.Errorf("%v: live and %s differ:\nlive:\n%s\nsnapshot:\n%s", args, snapshot, live, got)
			}
		}
		t.Logf("%v:\n%s", args, live)
	}
	// One answer worked by hand (resfitctl's tests have the rest): job-1 to
	// gpu-a at 875.
	if out := kubectlResfit(t, "--kubeconfig", kubeconfig, "explain", "--config", rsf, "train/job-1", "--top", "1"); !bytes.Contains([]byte(out), []byte("1     gpu-a  875    875")) {
		t.Errorf("live explain:\n%s", out)
	}

	// Read-only: every pod as it was (same resource version), the pending
	// ones still unbound.
	podsUnchanged(t, ctx, admin, pods.Items)
}

// podsUnchanged checks that the cluster's pods are those listed before,
// each at the same resource version: kubectl-resfit only lists.
func podsUnchanged(t *testing.T, ctx context.Context, cs kubernetes.Interface, before []v1.Pod) {
	t.Helper()
	after, err := cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	versions := map[string]string{}
	for _, p := range before {
		versions[p.Namespace+"/"+p.Name] = p.ResourceVersion
	}
	for _, p := range after.Items {
		if rv, ok := versions[p.Namespace+"/"+p.Name]; !ok || rv != p.ResourceVersion {
			t.Errorf("pod %s/%s changed while kubectl-resfit ran (version %s, was %s)", p.Namespace, p.Name, p.ResourceVersion, rv)
		}
	}
	if len(after.Items) != len(before) {
		t.Errorf("%d pods before, %d after", len(before), len(after.Items))
	}
}

// kubectlResfit runs the command in-process and returns its stdout; a
// non-zero exit fails the test.
func kubectlResfit(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := command.Run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("kubectl resfit %v: exit %d: %s", args, code, stderr.String())
	}
	return stdout.String()
}

// createExampleCluster makes the example's nodes, namespaces and pods (from
// the generator) through the API: bound pods are bound at creation, and
// their phase set through the status subresource as a kubelet would.
func createExampleCluster(t *testing.T, ctx context.Context, cs kubernetes.Interface, generate func() ([]*v1.Node, []*v1.Pod)) {
	t.Helper()
	class := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: examplecluster.TrainingPriorityClass}, Value: examplecluster.TrainingPriority}
	if _, err := cs.SchedulingV1().PriorityClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	nodes, pods := generate()
	for _, n := range nodes {
		n.CreationTimestamp = metav1.Time{}
		if _, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	namespaces := map[string]bool{}
	for _, p := range pods {
		if !namespaces[p.Namespace] {
			namespaces[p.Namespace] = true
			_, err := cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.Namespace}}, metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
		}
	}
	// Created in the generator's order, so creation times keep its queue
	// order (pods created within the same second tie, then go by name,
	// which the example's names keep in the same order).
	for _, p := range pods {
		phase := p.Status.Phase
		p.CreationTimestamp, p.Status = metav1.Time{}, v1.PodStatus{}
		created, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if phase != v1.PodPending {
			created.Status.Phase = phase
			if _, err := cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// viewerKubeconfig writes a kubeconfig for a ServiceAccount that may only
// list nodes, pods, the DRA objects and PodDisruptionBudgets (the
// README's RBAC): whatever
// kubectl-resfit tried beyond listing would be refused.
func viewerKubeconfig(t *testing.T, ctx context.Context, admin kubernetes.Interface, server *rest.Config) string {
	t.Helper()
	const name = "resfit-viewer"
	objs := []func() error{
		func() error {
			_, err := admin.CoreV1().ServiceAccounts("default").Create(ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Rules: []rbacv1.PolicyRule{
					{APIGroups: []string{""}, Resources: []string{"nodes", "pods"}, Verbs: []string{"list"}},
					{APIGroups: []string{"resource.k8s.io"}, Resources: []string{"resourceslices", "deviceclasses", "resourceclaims", "resourceclaimtemplates"}, Verbs: []string{"list"}},
					{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: []string{"list"}},
				},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: "default"}},
			}, metav1.CreateOptions{})
			return err
		},
	}
	for _, create := range objs {
		if err := create(); err != nil {
			t.Fatal(err)
		}
	}
	token, err := admin.CoreV1().ServiceAccounts("default").CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cluster := &clientcmdapi.Cluster{Server: server.Host, CertificateAuthorityData: server.CAData, TLSServerName: server.ServerName, InsecureSkipTLSVerify: server.Insecure}
	if len(server.CAData) == 0 {
		cluster.CertificateAuthority = server.CAFile // a kubeconfig names one or the other
	}
	cfg.Clusters["test"] = cluster
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token.Status.Token}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: name, Namespace: "default"}
	cfg.CurrentContext = "test"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	// The ServiceAccount reads, and may not write.
	saConfig := rest.AnonymousClientConfig(server)
	saConfig.BearerToken = token.Status.Token
	sa := kubernetes.NewForConfigOrDie(saConfig)
	if _, err := sa.CoreV1().Pods("web").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("the viewer cannot list pods: %v", err)
	}
	if _, err := sa.CoreV1().Pods("web").Get(ctx, "api-1", metav1.GetOptions{}); err == nil {
		t.Fatal("the viewer can get a pod")
	}
	if err := sa.CoreV1().Pods("web").Delete(ctx, "api-1", metav1.DeleteOptions{}); err == nil {
		t.Fatal("the viewer can delete pods")
	}
	return path
}
