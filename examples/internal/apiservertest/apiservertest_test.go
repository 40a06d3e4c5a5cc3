package apiservertest

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// fatal records what a test helper's Fatalf said, and ends the goroutine
// as Fatalf does.
type fatal struct {
	testing.TB
	said string
}

func (f *fatal) Fatalf(format string, args ...any) {
	f.said = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (f *fatal) Fatal(args ...any) {
	f.said = fmt.Sprint(args...)
	runtime.Goexit()
}

func (f *fatal) Helper() {}

// startFailure runs Start with flags and returns what it failed with ("" if
// it did not fail).
func startFailure(t *testing.T, flags ...string) string {
	f := &fatal{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Start(f, flags...)
	}()
	<-done
	return f.said
}

// requireBinaries skips the test where the binaries are not there (.ci/test
// builds them).
func requireBinaries(t *testing.T) {
	t.Helper()
	if os.Getenv(APIServerEnv) == "" {
		if _, err := exec.LookPath("kube-apiserver"); err != nil {
			t.Skipf("no kube-apiserver (%s, PATH): %s", APIServerEnv, BuildHint)
		}
	}
	if _, err := exec.LookPath("etcd"); err != nil {
		t.Skipf("no etcd on PATH: %s", BuildHint)
	}
}

// Without the binaries the test fails, saying how to build them.
func TestStartWithoutBinariesSaysHowToBuildThem(t *testing.T) {
	t.Setenv(APIServerEnv, "")
	t.Setenv("PATH", t.TempDir())
	said := startFailure(t)
	if !strings.Contains(said, "kube-apiserver: not in "+APIServerEnv+" and not on PATH") || !strings.Contains(said, BuildHint) {
		t.Fatalf("Start without binaries said %q", said)
	}
}

// The server answers with the token given, and refuses a client without
// it under RBAC.
func TestStartServesTheTokensUser(t *testing.T) {
	requireBinaries(t)
	s := Start(t, "--authorization-mode=RBAC")
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.CA) {
		t.Fatalf("CA %q holds no certificate", s.CAFile)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer client.CloseIdleConnections()
	for _, c := range []struct {
		token string
		want  int
	}{{s.Token, http.StatusOK}, {"", http.StatusForbidden}, {"not-" + s.Token, http.StatusUnauthorized}} {
		req, err := http.NewRequest(http.MethodGet, s.Host+"/api/v1/namespaces/default", nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("token %q: %s, want %d", c.token, resp.Status, c.want)
		}
	}
}

// A server that exits fails the test at once, with its log.
func TestStartOfAServerThatExitsSaysWhy(t *testing.T) {
	requireBinaries(t)
	said := startFailure(t, "--no-such-flag")
	if !strings.Contains(said, "it exited") || !strings.Contains(said, "no-such-flag") {
		t.Fatalf("Start of a server given an unknown flag said %q", said)
	}
}
