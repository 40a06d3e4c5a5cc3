package integration

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/resfit/resfit/examples/internal/imagetest"
	"github.com/resfit/resfit/examples/kubebridge/testing/manifesttest"
)

// TestDeschedulerImageFromManifests builds resfit's descheduler image as
// the README does (the static binary alone, FROM scratch; nothing is
// pulled) and runs it as deployment.yaml runs it — its command and flags,
// its user, a read-only root, the policy ConfigMap mounted at /policy,
// and in-cluster credentials of the ServiceAccount that rbac.yaml grants,
// on an apiserver that authorizes by RBAC — against the cluster of the
// end-to-end tests (the real scheduler with ResfitRooms, the real
// controllers) with the defrag example. Its first run carries the plan
// out as TestDeschedulerCarriesThePlanOut's does: notebook-0's
// replacement on gpu-a, job-2 on gpu-b. A permission the manifests do not
// grant fails it: the run's plan, rooms, evictions and events go through
// the account's token.
func TestDeschedulerImageFromManifests(t *testing.T) {
	imagetest.Require(t)
	deployment := manifesttest.Read(t, "../manifests/deployment.yaml")[0].(*appsv1.Deployment)
	spec := deployment.Spec.Template.Spec
	container := spec.Containers[0]
	imagetest.BuildStatic(t, "..", "descheduler", "../Dockerfile", container.Image) // as the README builds it

	c := startCluster(t, "--authorization-mode=RBAC")
	c.createDefragExample(true)
	manifesttest.Apply(t, c.ctx, c.cs, manifesttest.Read(t, "../manifests/rbac.yaml"))
	manifesttest.Apply(t, c.ctx, c.cs, manifesttest.Read(t, "../manifests/policy.yaml"))
	policy, err := c.cs.CoreV1().ConfigMaps(deployment.Namespace).Get(c.ctx, spec.Volumes[0].ConfigMap.Name, metav1.GetOptions{})
	c.must(err)
	id := imagetest.Run(t, imagetest.Container{
		Image: container.Image, Command: container.Command, User: "65532:65532",
		Files:   map[string]map[string]string{container.VolumeMounts[0].MountPath: policy.Data},
		Account: manifesttest.Account(t, c.ctx, c.cs, c.config.Host, c.caFile, deployment.Namespace, spec.ServiceAccountName),
	})
	c.poll("the descheduler's run", func() (bool, error) {
		if logs := imagetest.Logs(t, id); strings.Contains(logs, "forbidden") {
			t.Fatalf("the descheduler was refused by RBAC:\n%s", logs)
		}
		job2, err := c.cs.CoreV1().Pods("train").Get(c.ctx, "job-2", metav1.GetOptions{})
		return err == nil && job2.Spec.NodeName != "", err
	})
	if _, err := c.cs.CoreV1().Pods("notebook").Get(c.ctx, "notebook-0", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("notebook-0 is still there: %v", err)
	}
	list, err := c.cs.CoreV1().Pods("notebook").List(c.ctx, metav1.ListOptions{LabelSelector: labels.Set{"app": "notebook"}.String()})
	c.must(err)
	job2, err := c.cs.CoreV1().Pods("train").Get(c.ctx, "job-2", metav1.GetOptions{})
	c.must(err)
	if len(list.Items) != 1 || list.Items[0].Spec.NodeName != "gpu-a" || job2.Spec.NodeName != "gpu-b" {
		t.Fatalf("notebook's pods %v, job-2 on %q; want the replacement on gpu-a, job-2 on gpu-b", podPlaces(list.Items), job2.Spec.NodeName)
	}
	if logs := imagetest.Logs(t, id); !strings.Contains(logs, `"plan" plugin="ResfitDefrag"`) {
		t.Errorf("no plan in the descheduler's log:\n%s", logs)
	}
}
