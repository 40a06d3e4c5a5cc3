// Package schedtest runs the real kube-scheduler in a test, in the test's
// process, on a real kube-apiserver run as a process of its own
// (examples/internal/apiservertest): what kube-scheduler's own integration
// tests do (k8s.io/kubernetes/test/integration/util), without compiling
// the apiserver into the test. The kube-scheduler's, the descheduler's and
// the replay's integration tests start their clusters through it.
package schedtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/profile"

	"github.com/resfit/resfit/examples/internal/apiservertest"
)

// DisabledAdmission are the admission plugins kube-scheduler's integration
// tests turn off (test/integration/util: InitTestAPIServer): no controller
// makes the default ServiceAccounts, no kubelet reports the nodes ready, no
// PriorityClasses and no volumes are involved.
const DisabledAdmission = "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition,Priority,StorageObjectInUseProtection"

// Server is a running kube-apiserver and a client of it with the rights of
// system:masters.
type Server struct {
	*apiservertest.Server
	// Config is the client's configuration: the server's address, the
	// bearer token and the CA file.
	Config *rest.Config
	Client kubernetes.Interface
}

// StartAPIServer runs etcd and kube-apiserver with flags until the test
// ends (apiservertest.Start) and returns a client of it.
func StartAPIServer(t testing.TB, flags ...string) *Server {
	t.Helper()
	s := apiservertest.Start(t, flags...)
	config := &rest.Config{Host: s.Host, BearerToken: s.Token, TLSClientConfig: rest.TLSClientConfig{CAFile: s.CAFile},
		// As Kubernetes' integration test server's client: a test's burst
		// of creates is not paced.
		QPS: 1000, Burst: 10000}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	return &Server{Server: s, Config: config, Client: client}
}

// CreateNamespace makes the namespace name on the server.
func (s *Server) CreateNamespace(t testing.TB, ctx context.Context, name string) *v1.Namespace {
	t.Helper()
	ns, err := s.Client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// StartScheduler makes kube-scheduler with opts on the server config
// reaches (and as the user config names), as kube-scheduler's integration
// tests make it (InitTestSchedulerWithOptions: no resync, events recorded
// to the server), starts its informers and waits up to a minute for them
// to sync, and runs it until ctx ends or the test does. An informer that
// does not sync (what the user may not list and watch) fails the test,
// named.
func StartScheduler(t testing.TB, ctx context.Context, config *rest.Config, opts ...scheduler.Option) *scheduler.Scheduler {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	informers := scheduler.NewInformerFactory(client, 0, nil)
	dynInformers := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, v1.NamespaceAll, nil)
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	t.Cleanup(cancel)
	context.AfterFunc(ctx, broadcaster.Shutdown)
	sched, err := scheduler.New(ctx, client, informers, dynInformers, profile.NewRecorderFactory(broadcaster),
		append(opts, scheduler.WithKubeConfig(config))...)
	if err != nil {
		t.Fatalf("kube-scheduler: %v", err)
	}
	broadcaster.StartRecordingToSink(ctx.Done())

	informers.Start(ctx.Done())
	dynInformers.Start(ctx.Done())
	syncCtx, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	for typ, synced := range informers.WaitForCacheSync(syncCtx.Done()) {
		if !synced {
			t.Fatalf("kube-scheduler's informer for %v did not sync within a minute", typ)
		}
	}
	for gvr, synced := range dynInformers.WaitForCacheSync(syncCtx.Done()) {
		if !synced {
			t.Fatalf("kube-scheduler's informer for %v did not sync within a minute", gvr)
		}
	}
	go sched.Run(ctx)
	return sched
}

// WaitForNodes waits up to a minute until the scheduler's cache holds n
// nodes.
func WaitForNodes(ctx context.Context, sched *scheduler.Scheduler, n int) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return sched.Cache.NodeCount() == n, nil
	})
}

// WaitForBound waits up to timeout until the pod namespace/name is bound
// to a node, and returns the node's name.
func WaitForBound(ctx context.Context, client kubernetes.Interface, namespace, name string, timeout time.Duration) (string, error) {
	var node string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		pod, err := client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil // a connection error: try again
		}
		node = pod.Spec.NodeName
		return node != "", nil
	})
	if err != nil {
		return "", fmt.Errorf("pod %s/%s not bound within %v: %w", namespace, name, timeout, err)
	}
	return node, nil
}
