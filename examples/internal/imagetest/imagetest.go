// Package imagetest builds and runs the hosts' container images in tests,
// as their manifests deploy them: podman from Debian's packages, in a
// sandbox without systemd or cgroup delegation (runc, cgroupfs:
// containers.conf), nothing pulled from a registry. The kube-scheduler's
// and the vc-scheduler's image tests share it.
package imagetest

import (
	"crypto/sha256"
	_ "embed"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// RequireEnv names the environment variable that, when set, makes an
// image test fail where podman is missing instead of skipping (.ci/run sets
// it, and installs podman).
const RequireEnv = "RESFIT_REQUIRE_IMAGES"

//go:embed containers.conf
var containersConf []byte

// Require skips the test where podman is missing, or fails it when
// RequireEnv is set.
func Require(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("podman"); err != nil {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("podman is required (%s is set): %v", RequireEnv, err)
		}
		t.Skip("no podman: the image is not built or run")
	}
}

// confPath is where containers.conf is written for podman to read: one
// file per content, kept between runs (podman reads it at every call,
// cleanups included).
var confPath = sync.OnceValues(func() (string, error) {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("resfit-containers-%x.conf", sha256.Sum256(containersConf)))
	return path, os.WriteFile(path, containersConf, 0o644)
})

// Command is podman with the containers configuration this sandbox needs.
func Command(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	conf, err := confPath()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("podman", args...)
	cmd.Env = append(os.Environ(), "CONTAINERS_CONF="+conf)
	return cmd
}

// Podman runs podman, failing the test with its output; it returns what
// podman printed, trimmed.
func Podman(t *testing.T, args ...string) string {
	t.Helper()
	out, err := Command(t, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// Account is a ServiceAccount's in-cluster credentials, as a pod has them:
// the API server's address and CA, a token, and the namespace.
type Account struct {
	Server    string // the API server's URL (https://host:port)
	CA        []byte
	Token     string
	Namespace string
}

// Container is a container as a Deployment runs it.
type Container struct {
	Image   string
	Command []string // the entrypoint and its arguments
	User    string   // uid:gid
	Env     []string // NAME=value
	// Files are the files mounted read-only, by mount path and file name
	// (a ConfigMap's data).
	Files map[string]map[string]string
	// Tmpfs are writable directories (a pod's emptyDir volumes).
	Tmpfs   []string
	Account Account
}

// Run runs the container detached, with a read-only root, on the host's
// network (where the test's API server listens), until the test ends; the
// container's last log lines are logged when the test fails. It returns
// the container's ID.
func Run(t *testing.T, c Container) string {
	t.Helper()
	server, err := url.Parse(c.Account.Server)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "--detach", "--network", "host", "--read-only", "--user", c.User,
		"--env", "KUBERNETES_SERVICE_HOST=" + server.Hostname(), "--env", "KUBERNETES_SERVICE_PORT=" + server.Port()}
	account := map[string]string{"token": c.Account.Token, "ca.crt": string(c.Account.CA), "namespace": c.Account.Namespace}
	mounts := map[string]map[string]string{"/var/run/secrets/kubernetes.io/serviceaccount": account}
	for path, files := range c.Files {
		mounts[path] = files
	}
	for path, files := range mounts {
		dir := t.TempDir()
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// Readable by the image's user.
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--volume", dir+":"+path+":ro")
	}
	for _, env := range c.Env {
		args = append(args, "--env", env)
	}
	for _, path := range c.Tmpfs {
		args = append(args, "--tmpfs", path)
	}
	args = append(args, "--entrypoint", c.Command[0], c.Image)
	args = append(args, c.Command[1:]...)
	id := Podman(t, args...)
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := Command(t, "logs", "--tail", "60", id).CombinedOutput()
			t.Logf("the container's last log lines:\n%s", logs)
		}
		_ = Command(t, "rm", "--force", id).Run()
	})
	return id
}

// Logs is what the container has printed so far.
func Logs(t *testing.T, id string) string {
	t.Helper()
	out, _ := Command(t, "logs", id).CombinedOutput()
	return string(out)
}

// BuildStatic builds a host's image as its README does: the static binary
// of the Go package at pkg (CGO_ENABLED=0) written as binary into a build
// directory of its own, then the image from dockerfile there, tagged image.
// Nothing is pulled. The binary is built in the mode that compiles least:
// without the race detector, without the README's -trimpath (which only
// leaves the build machine's paths out of the binary), so that it links
// what the tests compiled with CGO_ENABLED=0 (.ci/test's first run);
// under it (CI), with -trimpath as the README builds it, so that the
// fresh-clone check's build of the README's line reuses it.
func BuildStatic(t *testing.T, pkg, binary, dockerfile, image string) {
	t.Helper()
	build := t.TempDir()
	args := []string{"build"}
	if race {
		args = append(args, "-trimpath")
	}
	goBuild := exec.Command("go", append(args, "-o", filepath.Join(build, binary), pkg)...)
	goBuild.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := goBuild.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	Podman(t, "build", "--quiet", "-f", dockerfile, "-t", image, build)
}
