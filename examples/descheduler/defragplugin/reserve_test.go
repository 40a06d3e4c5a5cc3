package defragplugin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/resfit/resfit/examples/kubebridge/cache"
	"github.com/resfit/resfit/examples/kubebridge/planning"
	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring/config"
	"github.com/resfit/resfit/scoring/lifetime"
)

// TestRunningEndsForTheHold: reserve mode plans its hold by what a pod
// declares, else, under ResfitFrag, what the cluster's finished pods like
// it ran (256 pods of its Job, as many as the model needs, ran 40 min: 10
// min in, 30 min left); not the as-long-again guess for a pod nothing is
// known of, and nothing under a configuration that does not follow when
// pods end. A declared end that does not read counts as none, and is kept
// to be logged; the scene of a configuration that follows ends warns of
// such a pod, naming it.
func TestRunningEndsForTheHold(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	running := func(name string, ago time.Duration, job bool) *v1.Pod {
		p := kubetest.Running(kubetest.Pod(name, "gpu-a", "cpu", "2", "nvidia.com/gpu", "1"), now.Add(-ago))
		if job {
			kubetest.OfJob(p, "etl")
		}
		return p
	}
	declared := running("declared", time.Hour, false)
	declared.Annotations = map[string]string{planning.RunsForAnnotation: "2h"}
	learned, old := running("learned", 10*time.Minute, true), running("old", 5*time.Hour, false)
	unreadable := running("unreadable", time.Hour, false)
	unreadable.Annotations = map[string]string{planning.RunsForAnnotation: "soon"}
	pods := []*v1.Pod{declared, learned, old, unreadable}
	for i := range lifetime.DefaultMinSamples {
		pods = append(pods, kubetest.OfJob(kubetest.Succeeded(kubetest.Pod(fmt.Sprintf("etl-%d", i), "gpu-a", "cpu", "2", "nvidia.com/gpu", "1"), now.Add(-3*time.Hour), 40*time.Minute), "etl"))
	}
	snap, err := cache.New([]*v1.Node{kubetest.Node("gpu-a", "cpu", "64", "memory", "256Gi", "pods", "110", "nvidia.com/gpu", "8")}, pods, cache.Options{Devices: resource.GPU})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		config string
		want   map[string]time.Time
	}{
		{`plugins: [{name: ResfitFrag, args: {classes: [{cpu: 2, gpus: 1}]}}]`, map[string]time.Time{
			"declared": now.Add(time.Hour), "learned": now.Add(30 * time.Minute), "old": {}, "unreadable": {}}},
		// At lifetime weight 0 the tie-breaker and the node size still
		// wait for ends, so the scene follows them; packing from the start
		// and without the node size, it does not.
		{`plugins: [{name: ResfitFrag, args: {classes: [{cpu: 2, gpus: 1}], lifetime: {weight: 0}}}]`, map[string]time.Time{
			"declared": now.Add(time.Hour), "learned": now.Add(30 * time.Minute), "old": {}, "unreadable": {}}},
		{`plugins: [{name: ResfitFrag, args: {classes: [{cpu: 2, gpus: 1}], lifetime: {weight: 0}, tieBreaker: {untilEndsKnown: PackLeastUsed}}}]`, map[string]time.Time{
			"declared": now.Add(time.Hour), "learned": now.Add(30 * time.Minute), "old": {}, "unreadable": {}}},
		{`plugins: [{name: ResfitFrag, args: {classes: [{cpu: 2, gpus: 1}], lifetime: {weight: 0}, nodeSize: {weight: 0}, tieBreaker: {untilEndsKnown: PackLeastUsed}}}]`, map[string]time.Time{
			"declared": now.Add(time.Hour), "learned": {}, "old": {}, "unreadable": {}}},
	} {
		cfg, err := config.Load([]byte(c.config), config.Options{})
		if err != nil {
			t.Fatal(err)
		}
		sc, err := planning.NewSceneAt(snap, cfg, pods, planning.Ends{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if w := strings.Join(sc.Warnings(), "\n"); strings.Contains(w, "default/unreadable") != cfg.ReadsLifetimes() {
			t.Errorf("%s: warnings %q; want one naming default/unreadable where the scene follows ends", c.config, w)
		}
		var bad error
		for _, p := range pods[:4] {
			if got := runningEnd(sc, p, nil, now, &bad); !got.Equal(c.want[p.Name]) {
				t.Errorf("%s: %s ends %v, want %v", c.config, p.Name, got, c.want[p.Name])
			}
		}
		if bad == nil {
			t.Errorf("%s: the unreadable runs-for was not kept", c.config)
		}
	}
}

// TestLearnsFromRunToRun: the plugin's model outlives its runs. At the
// first run nothing has ended, and nothing is known of how long the etl
// Job's pods run; by the second, an hour later, its 256 pods that had run
// three hours (as many as the model needs) are gone (deleted between the
// runs: they ran 4 h), so fresh, of the same Job and 70 min in, is
// expected to run 170 min more.
func TestLearnsFromRunToRun(t *testing.T) {
	p, _, _ := learnFromRunToRun(t, `plugins: [{name: ResfitFrag, args: {classes: [{cpu: 2, gpus: 1}]}}]`, lifetime.DefaultMinSamples)
	if got := p.lifetimes.Model().Options(); got != (lifetime.ModelOptions{}).Resolved() {
		t.Errorf("the model learns with %+v, want the defaults", got)
	}
}

// TestLearnsWithTheConfiguredModel: a configuration that asks the model
// to predict once 4 pods of a kind ended (lifetime: {model: {minSamples:
// 4}}) has the plugin learn from 4; at a run whose configuration asks for
// 8, the model starts afresh, and nothing is known again.
func TestLearnsWithTheConfiguredModel(t *testing.T) {
	p, file, end := learnFromRunToRun(t, `plugins: [{name: ResfitFrag, args: {classes: [{cpu: 2, gpus: 1}], lifetime: {model: {minSamples: 4}}}}]`, 4)
	if got := p.lifetimes.Model().Options().MinSamples; got != 4 {
		t.Errorf("the model predicts from %d lifetimes, want 4", got)
	}
	if err := os.WriteFile(file, []byte(`plugins: [{name: ResfitFrag, args: {classes: [{cpu: 2, gpus: 1}], lifetime: {model: {minSamples: 8}}}}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := end(time.Hour + time.Minute); !got.IsZero() {
		t.Errorf("after the configuration asked for 8: fresh ends %v, want not known", got)
	}
}

// learnFromRunToRun runs the plugin of that configuration (in the file it
// returns) twice, an hour apart, with n pods of the etl Job that ran three
// hours deleted between the runs, and checks what it expects of fresh, of
// the same Job: nothing at the first run, 170 min more at the second. end
// is when fresh is expected to end at a run that long after the first.
func learnFromRunToRun(t *testing.T, doc string, n int) (*Plugin, string, func(after time.Duration) time.Time) {
	ctx := t.Context()
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	file := filepath.Join(t.TempDir(), "resfit.yaml")
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	node := kubetest.Node("gpu-a", "cpu", "64", "memory", "256Gi", "pods", "110", "nvidia.com/gpu", "8")
	etl := func(name string, started time.Time) *v1.Pod {
		return kubetest.OfJob(kubetest.Running(kubetest.Pod(name, "gpu-a", "cpu", "2", "nvidia.com/gpu", "1"), started), "etl")
	}
	fresh := etl("fresh", now.Add(-10*time.Minute))
	objects := []runtime.Object{node, fresh}
	for i := range n {
		objects = append(objects, etl(fmt.Sprint("etl-", i), now.Add(-3*time.Hour)))
	}
	p, client := newPlugin(t, ctx, &Args{ConfigFile: file, Mode: ModeMakeRoom}, objects...)
	end := func(after time.Duration) time.Time {
		t.Helper()
		r, err := p.read(ctx, []*v1.Node{node}, now.Add(after))
		if err != nil {
			t.Fatal(err)
		}
		var bad error
		return runningEnd(r.sc, fresh, nil, now.Add(after), &bad)
	}
	if got := end(0); !got.IsZero() {
		t.Errorf("first run: fresh ends %v, want not known", got)
	}
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprint("etl-", i)
	}
	if err := kubetest.DeletePods(ctx, client, "default", names, func() (int, error) {
		pods, err := p.pods.List(labels.Everything())
		return len(pods), err
	}); err != nil {
		t.Fatal(err)
	}
	if got, want := end(time.Hour), now.Add(time.Hour+170*time.Minute); !got.Equal(want) {
		t.Errorf("second run: fresh ends %v, want %v", got, want)
	}
	return p, file, end
}
