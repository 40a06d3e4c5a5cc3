package config

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/lifetime"
)

// ResfitNodeSize alone scores as ResfitFrag's node-size part does, in
// resfit's form and in a KubeSchedulerConfiguration's, beside the table's
// largest node or the one given, and waits for an end in a host that
// follows them; written out, it loads back; a bad argument is refused with
// its path.
func TestNodeSizePlugin(t *testing.T) {
	schema, _ := resource.NewSchema("cpu", "memory", resource.GPU)
	table := resource.NewTable(schema, 3)
	for _, alloc := range []resource.Vector{{128000, 768 << 30, 8000}, {96000, 384 << 30, 8000}, {104000, 512 << 30, 2000}} {
		table.Add("n", alloc, nil)
	}
	scores := func(c *Config, host Host, task *scoring.Task) []float64 {
		t.Helper()
		pipe, err := c.BuildFor(schema, host)
		if err != nil {
			t.Fatal(err)
		}
		ws := pipe.Scorers()
		out := make([]float64, table.Len())
		if err := ws[len(ws)-1].Scorer.ScoreNodes(task, scoring.NewSpan(table, 0, table.Len()), out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	devices, _ := resource.NewDevices(resource.GPU, 1000)
	for range table.Len() {
		devices.AddNode(0)
	}
	for _, c := range []struct {
		alone, inFrag string
		kube          bool // scored as resfit's kube-scheduler plugin: 0..100, rounded
	}{
		{`plugins: [{name: ResfitNodeSize}]`, `{}`, false},
		{`plugins: [{name: ResfitNodeSize, args: {largest: {cpu: 256, nvidia.com/gpu: 8}}}]`, `{largest: {cpu: 256, nvidia.com/gpu: 8}}`, false},
		{`
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    score:
      disabled: [{name: "*"}]
      enabled: [{name: ResfitNodeSize}]
  pluginConfig:
  - {name: ResfitNodeSize, args: {largest: {cpu: 256, nvidia.com/gpu: 8}}}`, `{largest: {cpu: 256, nvidia.com/gpu: 8}}`, true},
	} {
		alone, err := Load([]byte(c.alone), Options{})
		if err != nil {
			t.Fatal(err)
		}
		frag, err := Load([]byte(`plugins: [{name: ResfitFrag, args: {classes: `+fragClasses+`, nodeSize: `+c.inFrag+`}}]`), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !alone.ReadsLifetimes() {
			t.Errorf("%s does not read lifetimes", c.alone)
		}
		// A view whose model has learned a lifetime has seen a pod end:
		// with an end known, the part counts however few GPUs are in use.
		view := lifetime.NewNodes(table.Len())
		model, err := lifetime.NewModel(lifetime.ModelOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ended := lifetime.NewTracker[int](model, table.Len())
		model.Observe([]string{"a pod"}, 60)
		for _, x := range []struct {
			host  Host
			task  *scoring.Task
			waits bool
		}{
			{Host{Devices: devices}, &scoring.Task{}, false},
			{Host{Devices: devices, Lifetimes: view}, &scoring.Task{}, true},
			{Host{Devices: devices, Lifetimes: view}, &scoring.Task{Ends: 60}, true}, // no pod ended, no GPU in use
			{Host{Devices: devices, Lifetimes: ended.Nodes()}, &scoring.Task{}, true},
			{Host{Devices: devices, Lifetimes: ended.Nodes()}, &scoring.Task{Ends: 60}, false},
		} {
			got, want := scores(alone, x.host, x.task), scores(frag, x.host, x.task)
			if c.kube {
				for i := range want {
					want[i] = math.Round(want[i])
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s, lifetimes %v, ends %v: %v, ResfitFrag's part %v", c.alone, x.host.Lifetimes != nil, x.task.Ends, got, want)
			}
			if zero := !slices.ContainsFunc(got, func(v float64) bool { return v != 0 }); zero != x.waits {
				t.Errorf("%s, lifetimes %v (a pod ended: %v), ends %v: %v; it should score 0 everywhere only while it waits (%v)",
					c.alone, x.host.Lifetimes != nil, x.host.Lifetimes != nil && x.host.Lifetimes.Ended(), x.task.Ends, got, x.waits)
			}
		}
		again, err := Load(alone.Canonical(), Options{})
		if err != nil || !cmp.Equal(again.Scorers, alone.Scorers, cmpopts.IgnoreFields(ScorerConfig{}, "Sources"), cmpopts.IgnoreFields(FilterConfig{}, "Source"), cmpopts.EquateEmpty()) {
			t.Errorf("%s written out and read back: %v (%v)", c.alone, again, err)
		}
	}
	for bad, path := range map[string]string{
		`{largest: {cpu: 0}}`:      "plugins[0].args.largest",
		`{largest: {cpu: -1}}`:     "plugins[0].args.largest.cpu",
		`{largest: [cpu]}`:         "plugins[0].args.largest",
		`{largets: {cpu: 1}}`:      `plugins[0].args["largets"]`,
		`{weight: 1}`:              `plugins[0].args["weight"]`,
		`{largest: {"bad!": 1}}`:   "plugins[0].args.largest",
		`{largest: {memory: 1Zi}}`: "plugins[0].args.largest.memory",
	} {
		_, err := Load([]byte(`plugins: [{name: ResfitNodeSize, args: `+bad+`}]`), Options{})
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("ResfitNodeSize args %s: %v, want an error naming %s", bad, err, path)
		}
	}
}
