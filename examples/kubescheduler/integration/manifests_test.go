package integration

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/utils/ptr"

	"github.com/resfit/resfit/examples/kubebridge/testing/manifesttest"
	"github.com/resfit/resfit/examples/kubescheduler/plugins"
	"github.com/resfit/resfit/examples/kubescheduler/testing/schedtest"
)

// TestSecondSchedulerFromManifests deploys resfit's scheduler as the
// manifests describe, on a real kube-apiserver with RBAC: it applies
// rbac.yaml, rooms.yaml (the Room CRD, and the rooms and Jobs ResfitRooms
// reads) and configmap.yaml, reads the KubeSchedulerConfiguration back
// from the ConfigMap, and runs kube-scheduler with resfit's plugins under
// the ServiceAccount's own token. The ServiceAccount can run its leader
// election on its lease, and the scheduler binds the pods that name it
// as ResfitFrag places them (testCluster.packFrag). deployment.yaml runs
// the same binary with that ServiceAccount and ConfigMap.
func TestSecondSchedulerFromManifests(t *testing.T) {
	deployment := manifesttest.Read(t, "../manifests/deployment.yaml")
	d, ok := deployment[0].(*appsv1.Deployment)
	if !ok || d.Spec.Template.Spec.ServiceAccountName != "resfit-scheduler" || d.Spec.Template.Spec.Volumes[0].ConfigMap.Name != "resfit-scheduler-config" {
		t.Fatalf("deployment.yaml does not run as resfit-scheduler with its ConfigMap: %+v", deployment)
	}

	// The whole server chain (the Room CRD served), RBAC on.
	testCtx := startAPIServer(t, "rooms", "--authorization-mode=RBAC")
	admin, ctx, ns := testCtx.ClientSet, testCtx.Ctx, testCtx.NS.Name
	manifesttest.InstallRoomCRD(t, ctx, testCtx.KubeConfig, admin, "../manifests/rooms.yaml")
	for _, file := range []string{"rbac.yaml", "rooms.yaml", "configmap.yaml"} {
		manifesttest.Apply(t, ctx, admin, manifesttest.Read(t, "../manifests/"+file))
	}

	cm, err := admin.CoreV1().ConfigMaps("kube-system").Get(ctx, "resfit-scheduler-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	obj, _, err := schedulerscheme.Codecs.UniversalDecoder().Decode([]byte(cm.Data["scheduler-config.yaml"]), nil, nil)
	if err != nil {
		t.Fatalf("the ConfigMap's scheduler configuration: %v", err)
	}
	cfg := obj.(*config.KubeSchedulerConfiguration)
	if cfg.LeaderElection.ResourceName != "resfit-scheduler" || cfg.Profiles[0].SchedulerName != "resfit-scheduler" {
		t.Fatalf("configuration: lease %q, profile %q", cfg.LeaderElection.ResourceName, cfg.Profiles[0].SchedulerName)
	}

	saConfig := rest.AnonymousClientConfig(testCtx.KubeConfig)
	saConfig.BearerToken = manifesttest.Account(t, ctx, admin, testCtx.KubeConfig.Host, testCtx.KubeConfig.CAFile, "kube-system", "resfit-scheduler").Token
	sa := kubernetes.NewForConfigOrDie(saConfig)

	// Leader election creates and renews the lease the configuration names.
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "resfit-scheduler", Namespace: "kube-system"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("resfit-scheduler-0")}}
	if lease, err = sa.CoordinationV1().Leases("kube-system").Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the ServiceAccount cannot create its lease: %v", err)
	}
	if _, err := sa.CoordinationV1().Leases("kube-system").Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("the ServiceAccount cannot renew its lease: %v", err)
	}
	if _, err := sa.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{}); err == nil {
		t.Error("the ServiceAccount can list secrets: its permissions are wider than a scheduler's")
	}

	// The scheduler talks to the apiserver only as the ServiceAccount
	// (what it may not list and watch never syncs, and fails the test).
	schedtest.StartScheduler(t, ctx, saConfig, scheduler.WithProfiles(cfg.Profiles...), scheduler.WithFrameworkOutOfTreeRegistry(plugins.Registry()))

	newTestCluster(t, ctx, admin, ns, "resfit-scheduler").packFrag()
}
