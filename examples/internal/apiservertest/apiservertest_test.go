package apiservertest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
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

// held picks, for the nth call of its first attempt, an address a
// listener of the test holds (the race Start meets when another process
// takes a port between the pick and the bind), and free ones otherwise.
func held(t *testing.T, nth int) (pick func(testing.TB) string, picks *int) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	calls := 0
	return func(tb testing.TB) string {
		calls++
		if calls == nth {
			return l.Addr().String()
		}
		return freeAddress(tb)
	}, &calls
}

// A port taken before etcd or the server binds it is picked again: Start
// tries other ports, and the server it returns answers.
func TestStartPicksOtherPortsWhenOneIsTaken(t *testing.T) {
	requireBinaries(t)
	for _, c := range []struct {
		name string
		nth  int // the pick taken: 1 etcd's clients, 3 the server's
	}{{"etcd", 1}, {"kube-apiserver", 3}} {
		t.Run(c.name, func(t *testing.T) {
			pick, picks := held(t, c.nth)
			s := startOn(t, pick)
			if *picks != 6 {
				t.Errorf("%d ports picked, want 3 twice", *picks)
			}
			if err := s.ready(context.Background()); err != nil {
				t.Fatalf("the server started on the second ports: %v", err)
			}
		})
	}
}

// Start says which port was taken when every attempt finds it so.
func TestStartOnPortsAlwaysTakenSaysSo(t *testing.T) {
	requireBinaries(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	f := &fatal{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		startOn(f, func(testing.TB) string { return l.Addr().String() })
	}()
	<-done
	if !strings.Contains(f.said, "address already in use") || !strings.Contains(f.said, errPortTaken.Error()) || !strings.Contains(f.said, "etcd.log") {
		t.Fatalf("Start on ports always taken said %q", f.said)
	}
}
