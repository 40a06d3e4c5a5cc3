package integration

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testutils "k8s.io/kubernetes/test/integration/util"
	"k8s.io/utils/ptr"
)

// RequireImagesEnv names the environment variable that, when set, makes
// the image test fail where podman is missing instead of skipping (.ci/run
// sets it, and installs podman).
const RequireImagesEnv = "RESFIT_REQUIRE_IMAGES"

// podmanCmd is podman with the containers configuration this sandbox
// needs (runc, cgroupfs, no default ulimits: testdata/containers.conf).
func podmanCmd(args ...string) *exec.Cmd {
	cmd := exec.Command("podman", args...)
	if conf, err := filepath.Abs("testdata/containers.conf"); err == nil {
		cmd.Env = append(os.Environ(), "CONTAINERS_CONF="+conf)
	}
	return cmd
}

// podman runs podmanCmd, failing the test with its output.
func podman(t *testing.T, args ...string) string {
	t.Helper()
	out, err := podmanCmd(args...).CombinedOutput()
	if err != nil {
		t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestSchedulerImageFromManifests builds resfit's kube-scheduler image as
// the README does (a static binary in an image of its own, FROM scratch;
// nothing is pulled) and runs it as deployment.yaml runs it — its command
// and flags, its user, a read-only root, the ConfigMap's configuration
// mounted at /etc/resfit, and in-cluster credentials of the
// ServiceAccount that rbac.yaml grants — against a real kube-apiserver,
// on the host's network. The scheduler binds the pods that name it as the
// in-process test sees it do: GPU pods pack, CPU pods spread.
func TestSchedulerImageFromManifests(t *testing.T) {
	if _, err := exec.LookPath("podman"); err != nil {
		if os.Getenv(RequireImagesEnv) != "" {
			t.Fatalf("podman is required (%s is set): %v", RequireImagesEnv, err)
		}
		t.Skip("no podman: the image is not built or run")
	}
	// The image, as the README builds it.
	build := t.TempDir()
	goBuild := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(build, "kube-scheduler"), "..")
	goBuild.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := goBuild.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	deployment := readManifests(t, "../manifests/deployment.yaml")[0].(*appsv1.Deployment)
	spec := deployment.Spec.Template.Spec
	container := spec.Containers[0]
	image := container.Image
	podman(t, "build", "--quiet", "-f", "../Dockerfile", "-t", image, build)

	testCtx := testutils.InitTestAPIServer(t, "resfit-image", nil)
	admin, ctx, ns := testCtx.ClientSet, testCtx.Ctx, testCtx.NS.Name
	apply(t, ctx, admin, readManifests(t, "../manifests/rbac.yaml"))
	apply(t, ctx, admin, readManifests(t, "../manifests/configmap.yaml"))
	cm, err := admin.CoreV1().ConfigMaps(deployment.Namespace).Get(ctx, spec.Volumes[0].ConfigMap.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The ConfigMap's files, and the ServiceAccount's token, CA and
	// namespace where a pod has them.
	configDir, accountDir := t.TempDir(), t.TempDir()
	for name, text := range cm.Data {
		write(t, filepath.Join(configDir, name), text)
	}
	token, err := admin.CoreV1().ServiceAccounts(deployment.Namespace).CreateToken(ctx, spec.ServiceAccountName,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(testCtx.KubeConfig.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(accountDir, "token"), token.Status.Token)
	write(t, filepath.Join(accountDir, "ca.crt"), string(ca))
	write(t, filepath.Join(accountDir, "namespace"), deployment.Namespace)
	server, err := url.Parse(testCtx.KubeConfig.Host)
	if err != nil {
		t.Fatal(err)
	}
	run := []string{"run", "--detach", "--network", "host", "--read-only", "--user", "65532:65532",
		"--env", "KUBERNETES_SERVICE_HOST=" + server.Hostname(), "--env", "KUBERNETES_SERVICE_PORT=" + server.Port(),
		"--volume", configDir + ":" + container.VolumeMounts[0].MountPath + ":ro",
		"--volume", accountDir + ":/var/run/secrets/kubernetes.io/serviceaccount:ro",
		"--entrypoint", container.Command[0], image}
	run = append(run, container.Command[1:]...)
	for _, dir := range []string{configDir, accountDir} {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	id := podman(t, run...)
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := podmanCmd("logs", "--tail", "60", id).CombinedOutput()
			t.Logf("the scheduler's last log lines:\n%s", logs)
		}
		podmanCmd("rm", "--force", id).Run()
	})
	newTestCluster(t, context.WithoutCancel(ctx), admin, ns, "resfit-scheduler").packAndSpread()
}

// write writes a file readable by the image's user.
func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
