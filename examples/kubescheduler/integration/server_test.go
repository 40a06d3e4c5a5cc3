package integration

import (
	"context"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/test/integration/framework"
	testutils "k8s.io/kubernetes/test/integration/util"
)

// startAPIServer starts a kube-apiserver with its whole server chain, so
// that custom resources are served (Kubernetes' own integration test of
// custom resources in the scheduler starts it so), with the admission
// plugins testutils.InitTestAPIServer turns off turned off and flags
// after them, and makes the namespace ns to test in.
//
// It waits up to a minute for the server's /healthz, where
// InitTestAPIServer (and InitTestSchedulerWithNS, which calls it) waits
// ten seconds: under the race detector this server takes 9 to 11 s to come
// up on 2 idle cores, so those ten seconds failed a test whenever another
// suite or an image build ran beside it.
func startAPIServer(t *testing.T, ns string, flags ...string) *testutils.TestContext {
	t.Helper()
	server := kubeapiservertesting.StartTestServerOrDie(t, kubeapiservertesting.NewDefaultTestServerOptions(),
		append([]string{"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition,Priority,StorageObjectInUseProtection"}, flags...), framework.SharedEtcd())
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		server.TearDownFn()
	})
	config := rest.CopyConfig(server.ClientConfig)
	config.CAFile = filepath.Join(server.TmpDir, "apiserver.crt") // the serving certificate's CA, for a client of its own
	testCtx := &testutils.TestContext{Ctx: ctx, KubeConfig: config, ClientSet: kubernetes.NewForConfigOrDie(config), CloseFn: func() {}}
	created, err := testCtx.ClientSet.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	testCtx.NS = created
	return testCtx
}

// startScheduler starts a kube-apiserver (startAPIServer) and kube-scheduler
// with opts on it, running until the test ends: what
// testutils.InitTestSchedulerWithNS does, on a server given a minute.
func startScheduler(t *testing.T, ns string, opts ...scheduler.Option) *testutils.TestContext {
	t.Helper()
	testCtx := testutils.InitTestSchedulerWithOptions(t, startAPIServer(t, ns), 0, opts...)
	testutils.SyncSchedulerInformerFactory(testCtx)
	go testCtx.Scheduler.Run(testCtx.SchedulerCtx)
	t.Cleanup(testCtx.SchedulerCloseFn)
	return testCtx
}
