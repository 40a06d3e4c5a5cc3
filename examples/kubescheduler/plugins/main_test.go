package plugins

import (
	"os"
	"testing"

	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// TestMain registers kube-scheduler's metrics, which its framework runtime
// records into.
func TestMain(m *testing.M) {
	metrics.Register()
	os.Exit(m.Run())
}
