package integration

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/pkg/scheduler"

	"github.com/resfit/resfit/examples/kubescheduler/testing/schedtest"
)

// testContext is a test's cluster: the server, a client of it with the
// rights of system:masters, the namespace to test in, and the scheduler
// when one runs.
type testContext struct {
	Ctx        context.Context
	ClientSet  kubernetes.Interface
	KubeConfig *rest.Config
	NS         *v1.Namespace
	Scheduler  *scheduler.Scheduler
}

// startAPIServer starts a kube-apiserver (schedtest.StartAPIServer), with
// the admission plugins kube-scheduler's integration tests turn off turned
// off and flags after them, and makes the namespace ns to test in.
func startAPIServer(t *testing.T, ns string, flags ...string) *testContext {
	t.Helper()
	server := schedtest.StartAPIServer(t, append([]string{schedtest.DisabledAdmission}, flags...)...)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return &testContext{Ctx: ctx, ClientSet: server.Client, KubeConfig: server.Config, NS: server.CreateNamespace(t, ctx, ns)}
}

// startScheduler starts a kube-apiserver (startAPIServer) and kube-scheduler
// with opts on it, running until the test ends.
func startScheduler(t *testing.T, ns string, opts ...scheduler.Option) *testContext {
	t.Helper()
	testCtx := startAPIServer(t, ns)
	testCtx.Scheduler = schedtest.StartScheduler(t, testCtx.Ctx, testCtx.KubeConfig, opts...)
	return testCtx
}
