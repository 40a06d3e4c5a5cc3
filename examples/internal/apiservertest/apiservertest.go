// Package apiservertest runs a real etcd and a real kube-apiserver as
// processes of their own, for the hosts' integration tests: Kubernetes
// v1.37.2's kube-apiserver (APIServerEnv, or kube-apiserver on PATH;
// .ci/test builds it static, as its releases are built) on the etcd it
// pins (on PATH). A test's clients, its scheduler and its controllers run
// in the test's process, under the race detector where the test does; the
// server does not, so it is compiled once, without the detector, and up in
// a second or two instead of ten.
//
// It needs only the standard library, so that every host's module (the
// kube-scheduler's, the descheduler's, the replay's, the vc-scheduler's on
// Kubernetes of its own) starts its servers through it.
package apiservertest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// APIServerEnv names the environment variable that holds the path of the
// kube-apiserver binary to run; without it, kube-apiserver is looked up on
// PATH.
const APIServerEnv = "KUBE_APISERVER"

// BuildHint says how to build the binaries a test needs, for its error.
const BuildHint = "build them with: cd examples/kubescheduler && CGO_ENABLED=0 go build -trimpath -o DIR/kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver && CGO_ENABLED=0 go build -trimpath -o DIR/etcd go.etcd.io/etcd/server/v3, then PATH=DIR:$PATH (.ci/test does)"

// readyTimeout is how long a server has to answer /readyz: on an idle
// machine it takes one to two seconds.
const readyTimeout = 2 * time.Minute

// Server is a running kube-apiserver.
type Server struct {
	// Host is its address, https://127.0.0.1:port.
	Host string
	// Token is a bearer token of a user in system:masters.
	Token string
	// CAFile is the file of the CA that signed its serving certificate
	// (the server's own, self-signed).
	CAFile string
	// CA is that file's content.
	CA []byte
	// Log is the file its output goes to.
	Log string
}

// Start runs an etcd and a kube-apiserver on it, with flags after its own,
// until the test ends, and returns once the server's /readyz answers ok. A
// missing binary, or a server that is not ready within two minutes or
// whose etcd exits, fails the test, with the last lines of the log of the
// one that failed. A port it picked that another process took before the
// server or etcd bound it ("address already in use") is no failure: it
// picks new ports and starts both again, up to portAttempts times.
//
// The server runs as Kubernetes' integration test server runs it: on
// 127.0.0.1, with no endpoint reconciler (127.0.0.1 is no endpoint for a
// Service), ServiceAccount tokens signed and read (TokenRequest works),
// the Service range 10.0.0.0/16, and authorization AlwaysAllow unless
// flags say otherwise. The admission plugins a test turns off (no
// controller creates default ServiceAccounts, no kubelet reports nodes
// ready) are its flags.
func Start(t testing.TB, flags ...string) *Server {
	t.Helper()
	return startOn(t, freeAddress, flags...)
}

// portAttempts is how many times Start picks its ports. A port found free
// is free only until the server binds it: another process can take it in
// between, and then Start picks new ones.
const portAttempts = 3

// errPortTaken says a server could not bind the port picked for it.
var errPortTaken = errors.New("a port picked for it was taken before it bound it")

// startOn is Start with the ports picked by address.
func startOn(t testing.TB, address func(testing.TB) string, flags ...string) *Server {
	t.Helper()
	apiserver := os.Getenv(APIServerEnv)
	if apiserver == "" {
		path, err := exec.LookPath("kube-apiserver")
		if err != nil {
			t.Fatalf("kube-apiserver: not in %s and not on PATH; %s", APIServerEnv, BuildHint)
		}
		apiserver = path
	}
	etcd, err := exec.LookPath("etcd")
	if err != nil {
		t.Fatalf("etcd: not on PATH; %s", BuildHint)
	}
	for attempt := 1; ; attempt++ {
		s, failed, err := start(t, address, apiserver, etcd, flags)
		if err == nil {
			return s
		}
		if !errors.Is(err, errPortTaken) || attempt == portAttempts {
			t.Fatalf("kube-apiserver %s not ready: %v; the last lines of %s:\n%s", apiserver, err, filepath.Base(failed), tail(failed, 40))
		}
		t.Logf("kube-apiserver %s: %v; starting again on other ports", apiserver, err)
	}
}

// start runs one etcd and one kube-apiserver on it, on ports picked by
// address. When the server is not ready it stops both, and says why and
// which of the two logs says more; errPortTaken is in that error when one
// could not bind its port.
func start(t testing.TB, address func(testing.TB) string, apiserver, etcd string, flags []string) (_ *Server, failed string, _ error) {
	t.Helper()
	dir := t.TempDir()
	etcdURL := "http://" + address(t)
	etcdLog := filepath.Join(dir, "etcd.log")
	etcdRun := launch(t, etcdLog, etcd, "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", "http://"+address(t), "--log-level", "warn")

	keyFile := filepath.Join(dir, "service-account.key")
	writeKey(t, keyFile)
	token := randomToken(t)
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(token+`,resfit-test-admin,resfit-test-admin,"system:masters"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	certs := filepath.Join(dir, "certs")
	host, port, err := net.SplitHostPort(address(t))
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Host: "https://" + net.JoinHostPort(host, port), Token: token,
		CAFile: filepath.Join(certs, "apiserver.crt"), Log: filepath.Join(dir, "kube-apiserver.log")}
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=" + host, "--advertise-address=" + host, "--secure-port=" + port,
		"--cert-dir=" + certs,
		"--token-auth-file=" + tokens,
		"--service-account-key-file=" + keyFile, "--service-account-signing-key-file=" + keyFile,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-cluster-ip-range=10.0.0.0/16",
		"--endpoint-reconciler-type=none",
	}
	apiRun := launch(t, s.Log, apiserver, append(args, flags...)...)
	err = s.waitReady(apiRun.exited, etcdRun.exited)
	if err == nil {
		return s, "", nil
	}
	apiRun.stop()
	etcdRun.stop()
	failed = s.Log
	if errors.Is(err, errEtcdExited) {
		failed = etcdLog
	}
	if strings.Contains(tail(failed, 40), "address already in use") {
		err = fmt.Errorf("%w (%w)", err, errPortTaken)
	}
	return nil, failed, err
}

// errEtcdExited says the etcd under a server exited before it was ready.
var errEtcdExited = errors.New("its etcd exited")

// waitReady waits until the server's certificate is written and its
// /readyz answers ok, the server or its etcd exits, or readyTimeout passes.
func (s *Server) waitReady(exited, etcdExited <-chan error) error {
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last := errors.New("no answer yet")
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("it exited: %v", err)
		case err := <-etcdExited:
			return fmt.Errorf("%w: %v", errEtcdExited, err)
		case <-ctx.Done():
			return fmt.Errorf("not within %v (last: %v)", readyTimeout, last)
		case <-tick.C:
		}
		if last = s.ready(ctx); last == nil {
			return nil
		}
	}
}

// ready is nil when the server's /readyz answers ok.
func (s *Server) ready(ctx context.Context) error {
	ca, err := os.ReadFile(s.CAFile)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return fmt.Errorf("%s: no certificate yet", s.CAFile)
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.Host+"/readyz", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK || string(body) != "ok" {
		return fmt.Errorf("/readyz: %s: %s", resp.Status, body)
	}
	s.CA = ca
	return nil
}

// writeKey writes a new P-256 key, the ServiceAccount tokens' signing key,
// to path.
func writeKey(t testing.TB, path string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// randomToken is 16 random bytes in hex.
func randomToken(t testing.TB) string {
	t.Helper()
	secret := make([]byte, 16)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(secret)
}

// Run starts a command, its output to the file log, and kills it when the
// test ends; the channel says when it exits, and why. (The servers here
// run so; so does the vc-scheduler of the Volcano check.)
func Run(t testing.TB, log, bin string, args ...string) <-chan error {
	t.Helper()
	return launch(t, log, bin, args...).exited
}

// process is a command Run started.
type process struct {
	// exited says when it exits, and why.
	exited <-chan error
	// stop kills it and waits for it; it is called again when the test
	// ends, and does nothing then.
	stop func()
}

// launch is Run, with a way to stop the command before the test ends.
func launch(t testing.TB, log, bin string, args ...string) process {
	t.Helper()
	out, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		exited <- cmd.Wait()
		close(done)
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			<-done
			out.Close()
		})
	}
	t.Cleanup(stop)
	return process{exited: exited, stop: stop}
}

// tail is the last n lines of the file path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// freeAddress is a loopback address with a port no one listens on (the
// kernel's choice; taken again by the process it is given to).
func freeAddress(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}
