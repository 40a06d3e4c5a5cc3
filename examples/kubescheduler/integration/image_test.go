package integration

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resfit/resfit/examples/internal/imagetest"
	"github.com/resfit/resfit/examples/kubebridge/testing/manifesttest"
)

// TestSchedulerImageFromManifests builds resfit's kube-scheduler image as
// the README does (a static binary in an image of its own, FROM scratch;
// nothing is pulled) and runs it as deployment.yaml runs it — its command
// and flags, its user, a read-only root, the ConfigMap's configuration
// mounted at /etc/resfit, and in-cluster credentials of the
// ServiceAccount that rbac.yaml grants — against a real kube-apiserver,
// on the host's network. The scheduler binds the pods that name it as the
// in-process test sees it do: GPU pods pack, CPU pods spread.
func TestSchedulerImageFromManifests(t *testing.T) {
	imagetest.Require(t)
	deployment := manifesttest.Read(t, "../manifests/deployment.yaml")[0].(*appsv1.Deployment)
	spec := deployment.Spec.Template.Spec
	container := spec.Containers[0]
	image := container.Image
	imagetest.BuildStatic(t, "..", "kube-scheduler", "../Dockerfile", image) // as the README builds it

	testCtx := startAPIServer(t, "rooms", "--authorization-mode=RBAC") // the Room CRD served
	admin, ctx, ns := testCtx.ClientSet, testCtx.Ctx, testCtx.NS.Name
	manifesttest.InstallRoomCRD(t, ctx, testCtx.KubeConfig, admin, "../manifests/rooms.yaml")
	for _, file := range []string{"rbac.yaml", "rooms.yaml", "configmap.yaml"} {
		manifesttest.Apply(t, ctx, admin, manifesttest.Read(t, "../manifests/"+file))
	}
	cm, err := admin.CoreV1().ConfigMaps(deployment.Namespace).Get(ctx, spec.Volumes[0].ConfigMap.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	imagetest.Run(t, imagetest.Container{
		Image: image, Command: container.Command, User: "65532:65532",
		Files:   map[string]map[string]string{container.VolumeMounts[0].MountPath: cm.Data},
		Account: manifesttest.Account(t, ctx, admin, testCtx.KubeConfig.Host, testCtx.KubeConfig.CAFile, deployment.Namespace, spec.ServiceAccountName),
	})
	newTestCluster(t, context.WithoutCancel(ctx), admin, ns, "resfit-scheduler").packFrag()
}
