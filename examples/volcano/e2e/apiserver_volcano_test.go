//go:build volcano

package e2e

import (
	"testing"

	"k8s.io/client-go/rest"

	"github.com/resfit/resfit/examples/internal/apiservertest"
)

// startAPIServer runs a real etcd and a real kube-apiserver as processes
// (apiservertest.Start: Kubernetes v1.37.2's, which check.sh or .ci/run
// builds, in apiservertest.APIServerEnv) with flags until the test ends,
// and returns a client configuration with the rights of system:masters,
// and the file of the CA that signed the server's serving certificate.
func startAPIServer(t *testing.T, flags ...string) (*rest.Config, string) {
	t.Helper()
	s := apiservertest.Start(t, flags...)
	return &rest.Config{Host: s.Host, BearerToken: s.Token, TLSClientConfig: rest.TLSClientConfig{CAFile: s.CAFile}}, s.CAFile
}
