//go:build perf

// Package perf runs kube-scheduler's own scheduler_perf harness
// (k8s.io/kubernetes/test/integration/scheduler_perf) out of tree, with
// resfit's plugins registered: a real kube-apiserver and etcd, 5000 nodes,
// pods created through the API and scheduled by the real scheduler, and the
// scheduling throughput it measures. It compares kube-scheduler's default
// profile with a profile where resfit's ResourceStrategyFit computes the
// same resource scores instead of NodeResourcesFit and
// NodeResourcesBalancedAllocation. It takes minutes, so it is not part of
// CI; run it with the command in ../README.md.
package perf

import (
	"fmt"
	"os"
	"testing"

	_ "k8s.io/component-base/logs/json/register"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	perf "k8s.io/kubernetes/test/integration/scheduler_perf"

	"github.com/resfit/resfit/examples/kubescheduler/plugins"
)

func TestMain(m *testing.M) {
	if err := perf.InitTests(); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
	m.Run()
}

func BenchmarkPerfScheduling(b *testing.B) {
	perf.RunBenchmarkPerfScheduling(b, "performance-config.yaml", "resfit", frameworkruntime.Registry{
		plugins.ResourceStrategyFitName:     plugins.NewResourceStrategyFit,
		plugins.NodeResourcesFitPlusName:    plugins.NewNodeResourcesFitPlus,
		plugins.ScarceResourceAvoidanceName: plugins.NewScarceResourceAvoidance,
	})
}
