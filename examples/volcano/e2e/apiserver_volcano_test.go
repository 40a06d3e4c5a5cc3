//go:build volcano

package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// APIServerEnv names the environment variable that holds the path to the
// kube-apiserver binary the tests run (check.sh builds Kubernetes
// v1.37.2's, from examples/kubescheduler's module, with the race detector
// as that module's integration tests compile it, so that CI compiles the
// API server once).
const APIServerEnv = "KUBE_APISERVER"

// startAPIServer runs a real etcd (found on PATH) and a real
// kube-apiserver (APIServerEnv) as processes of their own until the test
// ends, and returns a client configuration with the rights of
// system:masters, and the file of the CA that signed the server's serving
// certificate (the server's own, self-signed, written to its certificate
// directory).
//
// The server runs as Kubernetes' integration test server runs it: no
// endpoint reconciler (127.0.0.1 is no endpoint for a Service), no
// ServiceAccount admission (no controller creates the default accounts),
// ServiceAccount tokens signed and read (TokenRequest works); and, with
// flags of the caller's, here RBAC and no TaintNodesByCondition (no kubelet
// reports the nodes ready).
func startAPIServer(t *testing.T, flags ...string) (*rest.Config, string) {
	t.Helper()
	bin := os.Getenv(APIServerEnv)
	if bin == "" {
		t.Fatalf("%s: the kube-apiserver binary to run (check.sh builds it)", APIServerEnv)
	}
	etcd, err := exec.LookPath("etcd")
	if err != nil {
		t.Fatalf("etcd must be on PATH: %v", err)
	}
	dir := t.TempDir()
	etcdURL := "http://" + freeAddress(t)
	run(t, filepath.Join(dir, "etcd.log"), etcd, "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", "http://"+freeAddress(t), "--log-level", "warn")

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "service-account.key")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	secret := make([]byte, 16)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	token := hex.EncodeToString(secret)
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(token+`,e2e-admin,e2e-admin,"system:masters"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	certs := filepath.Join(dir, "certs")
	host, port, err := net.SplitHostPort(freeAddress(t))
	if err != nil {
		t.Fatal(err)
	}
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=" + host, "--advertise-address=" + host, "--secure-port=" + port,
		"--cert-dir=" + certs,
		"--token-auth-file=" + tokens,
		"--service-account-key-file=" + keyFile, "--service-account-signing-key-file=" + keyFile,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-cluster-ip-range=10.0.0.0/24",
		"--endpoint-reconciler-type=none",
	}
	run(t, filepath.Join(dir, "kube-apiserver.log"), bin, append(args, flags...)...)

	servingCA := filepath.Join(certs, "apiserver.crt")
	config := &rest.Config{Host: "https://" + net.JoinHostPort(host, port), BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{CAFile: servingCA}}
	// Ready once the certificate is written and /readyz answers ok: under
	// the race detector, on a busy machine, that takes a while.
	ctx := context.Background()
	var last error
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if _, err := os.Stat(servingCA); err != nil {
			last = err
			return false, nil
		}
		client, err := kubernetes.NewForConfig(config)
		if err != nil {
			return false, err
		}
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		last = fmt.Errorf("/readyz: %s: %v", body, err)
		return err == nil && string(body) == "ok", nil
	}); err != nil {
		logs, _ := os.ReadFile(filepath.Join(dir, "kube-apiserver.log"))
		lines := strings.Split(strings.TrimSpace(string(logs)), "\n")
		t.Fatalf("kube-apiserver not ready: %v (last: %v); its last log lines:\n%s", err, last, strings.Join(lines[max(0, len(lines)-40):], "\n"))
	}
	return config, servingCA
}

// run starts a command, its output to a log file, and stops it when the
// test ends.
func run(t *testing.T, log, bin string, args ...string) {
	t.Helper()
	out, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		out.Close()
	})
}

// freeAddress is a loopback address with a port no one listens on (the
// kernel's choice; taken again by the process it is given to).
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}
