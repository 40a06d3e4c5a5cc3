package schedtest

import (
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Main runs a package's tests, as a TestMain, and fails them when a
// goroutine they started is still running a minute after they ended: a
// scheduler, an informer or a controller a test did not stop (what
// Kubernetes' integration framework checks, EtcdMain, without its etcd).
func Main(m *testing.M) {
	before := goleak.IgnoreCurrent()
	code := m.Run()
	if code == 0 {
		if err := findLeaks(time.Minute, before); err != nil {
			fmt.Fprintf(os.Stderr, "goroutines left running after the tests: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// findLeaks looks for goroutines beyond those opts ignore until there are
// none or within passes (goleak.Find retries for a second only: a stopped
// informer's watch takes longer to wind down).
func findLeaks(within time.Duration, opts ...goleak.Option) error {
	deadline := time.Now().Add(within)
	for {
		err := goleak.Find(opts...)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(time.Second)
	}
}
