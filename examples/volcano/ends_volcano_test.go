//go:build volcano

package volcano

import (
	"fmt"
	"maps"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"volcano.sh/volcano/cmd/scheduler/app/options"
	"volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/framework"

	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
)

// atNow opens the test's sessions at now, and forgets what the plugins
// learned before and after the test.
func atNow(t *testing.T, now time.Time) {
	was := clock
	clock = func() time.Time { return now }
	forgetLearned()
	t.Cleanup(func() { clock = was; forgetLearned() })
}

// forgetLearned forgets what every plugin learned of when pods end.
func forgetLearned() { sessionLearners.Clear() }

// The lifetime term in Volcano's sessions, worked by hand (ResfitLifetime
// alone: 100 × left / (left + rest), an empty node 0, 0 everywhere for a
// task whose end nothing says: the term adds nothing):
//   - the first session knows nothing of how long pods of new's shape
//     run: 0 on both nodes;
//   - by the second, an hour later, the eight pods of that shape that ran
//     on gpu-a since three hours before the first (as many as the model
//     needs here, the configuration's model: {minSamples: 8}; gpu-a holds
//     8, not the default's 256) are gone: deleted
//     between the sessions, they ran 4 h, so new is expected to run 4 h;
//     gpu-a is empty (0), and gpu-b's keeper, of a shape never seen, has
//     run 4 h and is expected to run as long again (Lindy): 100 × 4/(4+4)
//     = 50;
//   - once the session allocates new on gpu-a, a second task of its shape
//     sees gpu-a busy for new's 4 h: 50 there too;
//   - reloaded with the default model, the plugin's model starts afresh,
//     and new's end is not known again: 0 on both.
func TestLifetimeLearnsBetweenSessions(t *testing.T) {
	options.Default()
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	atNow(t, t0)
	shape := func() v1.ResourceList { return api.BuildResourceList("1", "1Gi", gpu("1")) }
	running := func(name, node string, rl v1.ResourceList) *v1.Pod {
		return kubetest.Running(pod(name, node, v1.PodRunning, rl), t0.Add(-3*time.Hour))
	}
	keeper := running("keeper", "gpu-b", api.BuildResourceList("2", "2Gi", gpu("1")))
	first := []*v1.Pod{keeper, pod("new", "", v1.PodPending, shape())}
	for i := range 8 {
		first = append(first, running(fmt.Sprint("old-", i), "gpu-a", shape()))
	}
	const arguments = "plugins: [{name: ResfitLifetime, weight: 1, args: {model: {minSamples: 8}}}]"
	ssn := lifetimeSession(t, arguments, first)
	if got, want := scoresOf(t, ssn, "new"), map[string]float64{"gpu-a": 0, "gpu-b": 0}; !maps.Equal(got, want) {
		t.Errorf("first session: %v, want %v", got, want)
	}

	clock = func() time.Time { return t0.Add(time.Hour) }
	ssn = lifetimeSession(t, arguments, []*v1.Pod{keeper, pod("new", "", v1.PodPending, shape()), pod("next", "", v1.PodPending, shape())})
	if got, want := scoresOf(t, ssn, "new"), map[string]float64{"gpu-a": 0, "gpu-b": 50}; !maps.Equal(got, want) {
		t.Errorf("second session: %v, want %v", got, want)
	}
	if err := framework.NewStatement(ssn).Allocate(taskNamed(t, ssn, "new"), ssn.Nodes["gpu-a"]); err != nil {
		t.Fatal(err)
	}
	if got, want := scoresOf(t, ssn, "next"), map[string]float64{"gpu-a": 50, "gpu-b": 50}; !maps.Equal(got, want) {
		t.Errorf("second session, new allocated on gpu-a: %v, want %v", got, want)
	}

	// Reloaded with the default model, the plugin's model starts afresh:
	// nothing is known again of how long new will run.
	ssn = lifetimeSession(t, "plugins: [{name: ResfitLifetime, weight: 1}]", []*v1.Pod{keeper, pod("new", "", v1.PodPending, shape())})
	if got, want := scoresOf(t, ssn, "new"), map[string]float64{"gpu-a": 0, "gpu-b": 0}; !maps.Equal(got, want) {
		t.Errorf("reloaded with the default model: %v, want %v", got, want)
	}
}

// lifetimeSession is a session of two 8-GPU nodes with the pods, and three
// more whose GPUs a pod holds (so that at most a fifth of the 8-GPU nodes
// are whole, and the lifetime term scores: lifetime.WholeShare), the
// resfit plugin configured by arguments.
func lifetimeSession(t *testing.T, arguments string, pods []*v1.Pod) *framework.Session {
	t.Helper()
	nodes := []*v1.Node{gpuNode("gpu-a", "64", "256Gi", "8"), gpuNode("gpu-b", "64", "256Gi", "8")}
	for i := range 3 {
		name := fmt.Sprint("full-", i)
		nodes = append(nodes, gpuNode(name, "64", "256Gi", "8"))
		pods = append(pods, pod(name+"-pod", name, v1.PodRunning, api.BuildResourceList("8", "32Gi", gpu("8"))))
	}
	return sessionOf(t, ResfitPluginName, Builders[ResfitPluginName], arguments, nodes, pods)
}

// scoresOf is the node-order total of gpu-a and gpu-b for the task of that
// name.
func scoresOf(t *testing.T, ssn *framework.Session, task string) map[string]float64 {
	t.Helper()
	nodes := []*api.NodeInfo{ssn.Nodes["gpu-a"], ssn.Nodes["gpu-b"]}
	scores, err := nodeOrder(ssn, taskNamed(t, ssn, task), nodes)
	if err != nil {
		t.Fatal(err)
	}
	return scores
}
