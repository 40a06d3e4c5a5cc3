//go:build volcano

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resfit/resfit/examples/internal/imagetest"
	"github.com/resfit/resfit/examples/kubebridge/testing/manifesttest"
)

// TestVCSchedulerImageFromManifests builds resfit's vc-scheduler image as
// the README does (the static binary check.sh builds, in an image of its
// own, FROM scratch; nothing is pulled) and runs it as
// manifests/deployment.yaml runs it — its command and flags, its user, a
// read-only root with the klog socket directory writable, the ConfigMap's
// volcano-scheduler.conf mounted at /volcano.scheduler, leader election on
// its lease, and in-cluster credentials of the ServiceAccount that
// rbac.yaml grants and nothing else — against a real kube-apiserver with
// RBAC on and Volcano's custom resources, on the host's network. It binds the pods of
// the scenario as the binaries do (TestVCSchedulerBindsWithResfit), and
// logs no request its permissions refused and no plugin it did not know.
func TestVCSchedulerImageFromManifests(t *testing.T) {
	imagetest.Require(t)
	bin := os.Getenv(resfitScheduler.env)
	if bin == "" {
		t.Fatalf("%s: the vc-scheduler binary (check.sh builds it)", resfitScheduler.env)
	}
	// The image, as the README builds it: the binary beside the Dockerfile.
	build := t.TempDir()
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(build, "vc-scheduler"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	deployment := manifesttest.Read(t, "../manifests/deployment.yaml")[0].(*appsv1.Deployment)
	spec := deployment.Spec.Template.Spec
	container := spec.Containers[0]
	imagetest.Podman(t, "build", "--quiet", "-f", "../Dockerfile", "-t", container.Image, build)

	c := startCluster(t)
	c.defaultQueue(t)
	ctx := context.Background()
	// volcano-system, where Volcano's installation runs its scheduler.
	if _, err := c.kube.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: deployment.Namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	manifesttest.Apply(t, ctx, c.kube, manifesttest.Read(t, "../manifests/rbac.yaml"))
	manifesttest.Apply(t, ctx, c.kube, manifesttest.Read(t, "../manifests/configmap.yaml"))
	files := map[string]map[string]string{}
	var tmpfs []string
	for _, mount := range container.VolumeMounts {
		for _, volume := range spec.Volumes {
			switch {
			case volume.Name != mount.Name:
			case volume.ConfigMap != nil:
				cm, err := c.kube.CoreV1().ConfigMaps(deployment.Namespace).Get(ctx, volume.ConfigMap.Name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				files[mount.MountPath] = cm.Data
			case volume.EmptyDir != nil:
				tmpfs = append(tmpfs, mount.MountPath)
			}
		}
	}
	var env []string
	for _, e := range container.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	var id string
	scenario(t, c, "image", func(t *testing.T) {
		id = imagetest.Run(t, imagetest.Container{
			Image: container.Image, Command: container.Command, User: "65532:65532", Env: env, Files: files, Tmpfs: tmpfs,
			Account: manifesttest.Account(t, ctx, c.kube, c.config.Host, c.servingCA, deployment.Namespace, spec.ServiceAccountName),
		})
	})
	logs := imagetest.Logs(t, id)
	for _, refused := range []string{"forbidden", "Failed to get plugin"} {
		if i := strings.Index(logs, refused); i >= 0 {
			t.Errorf("vc-scheduler logged %q: %s", refused, logs[max(0, i-200):min(len(logs), i+200)])
		}
	}
}
