package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/descheduler/pkg/descheduler"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"

	"github.com/resfit/resfit/examples/descheduler/defragplugin"
	"github.com/resfit/resfit/examples/kubebridge/testing/manifesttest"
)

// The shipped policy loads through the descheduler's own loader, with the
// plugin registered as the command registers it: its arguments decoded
// strictly, defaulted and validated. A policy with a bad argument fails,
// naming the field.
func TestShippedPolicyLoads(t *testing.T) {
	cm := manifesttest.ConfigMap(t, "manifests/policy.yaml")
	descheduler.SetupPlugins()
	defragplugin.Register(pluginregistry.PluginRegistry)
	var read *defragplugin.Args
	load := func(text string) error {
		path := filepath.Join(t.TempDir(), "policy.yaml")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		policy, err := descheduler.LoadPolicyConfig(path, fake.NewClientset(), pluginregistry.PluginRegistry)
		if err != nil {
			return err
		}
		for _, pc := range policy.Profiles[0].PluginConfigs {
			if a, ok := pc.Args.(*defragplugin.Args); ok {
				if a.ConfigMap == nil || a.ConfigMap.Name != "resfit-scheduler-config" || a.MaxMovesPerWorkload != 1 || a.MaxPods == nil || *a.MaxPods != defragplugin.DefaultMaxPods {
					t.Errorf("ResfitDefrag's arguments read as %+v", a)
				}
				read = a
				return nil
			}
		}
		t.Fatal("no ResfitDefrag arguments in the policy")
		return nil
	}
	shipped := cm.Data["policy.yaml"]
	if err := load(shipped); err != nil {
		t.Fatalf("the shipped policy: %v", err)
	}
	if err := load(strings.Replace(shipped, "mode: make-room", "mode: spread", 1)); err == nil || !strings.Contains(err.Error(), "args.mode") {
		t.Errorf("a bad mode: %v", err)
	}
	if err := load(strings.Replace(shipped, "maxMoves: 4", "maxMovez: 4", 1)); err == nil || !strings.Contains(err.Error(), "maxMovez") {
		t.Errorf("an unknown argument: %v", err)
	}
	// Reserve mode with the arguments the README shows.
	if err := load(strings.Replace(shipped, "mode: make-room", "mode: reserve\n      starveAfter: 10m\n      patience: 30m\n      holdFor: 10m\n      maxMovesPerHour: \"1%\"", 1)); err != nil ||
		read.Mode != defragplugin.ModeReserve || read.Patience.Duration != 30*time.Minute || read.MaxMovesPerHour != "1%" {
		t.Errorf("reserve mode as the README writes it: %+v, %v", read, err)
	}
	// maxMoves: 0, written to stop evictions, is 0, not the default.
	if err := load(strings.Replace(shipped, "maxMoves: 4", "maxMoves: 0", 1)); err != nil || read.MaxMoves == nil || *read.MaxMoves != 0 {
		t.Errorf("maxMoves: 0 read as %v (%v)", read.MaxMoves, err)
	}
	for _, bad := range []struct{ from, to, want string }{
		{"movesPerPod: 2", "movesPerPod: 0", "args.movesPerPod: Invalid value: 0"},
		{"movesPerPod: 2", "movesPerPod: 1000000000", "args.movesPerPod: Invalid value: 1000000000"},
		{"maxMoves: 4", "maxMoves: 4\n      searchTimeout: 100000h", `args.searchTimeout: Invalid value: "100000h0m0s"`},
		{"name: resfit-scheduler-config", "name: ../../etc/passwd", `args.configMap.name: Invalid value: "../../etc/passwd"`},
	} {
		if err := load(strings.Replace(shipped, bad.from, bad.to, 1)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want %s", bad.to, err, bad.want)
		}
	}
}

// The command refuses a policy file the descheduler's loader would read
// with a key given twice (the loader keeps the last: "maxMoves: 0" above a
// forgotten "maxMoves: 4" would evict 4 a run), a field the policy does not
// have, a plugin enabled where no plugin of that name and kind is, or
// larger than a configuration may be, before it runs; the shipped policy
// passes.
func TestPolicyFileChecked(t *testing.T) {
	shipped := manifesttest.ConfigMap(t, "manifests/policy.yaml").Data["policy.yaml"]
	preRun := func(text string) error {
		path := filepath.Join(t.TempDir(), "policy.yaml")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := command()
		if err := cmd.Flags().Set("policy-config-file", path); err != nil {
			t.Fatal(err)
		}
		return cmd.PreRunE(cmd, nil)
	}
	if err := preRun(shipped); err != nil {
		t.Fatalf("the shipped policy: %v", err)
	}
	twice := strings.Replace(shipped, "maxMoves: 4", "maxMoves: 0\n      maxMoves: 4", 1)
	if err := preRun(twice); err == nil || !strings.Contains(err.Error(), `key "maxMoves" already set`) {
		t.Errorf("maxMoves given twice: %v", err)
	}
	// A field the policy does not have, which the loader drops, is refused
	// with its path: a policy with no profiles, a plugin set enabling
	// nothing.
	for _, bad := range []struct{ from, to, want string }{
		{"profiles:", "profile:", `unknown field "profile"`},
		{"balance: {enabled", "balanse: {enabled", `unknown field "profiles[0].plugins.balanse"`},
		{"preevictionfilter:", "preEvictionFilter:", `unknown field "profiles[0].plugins.preEvictionFilter" (the descheduler reads keys as written: this plugin set is preevictionfilter)`},
		// A plugin no extension point of its kind has: the loader lets it
		// through, and the descheduler refuses it only at its first run.
		{"balance: {enabled: [ResfitDefrag]}", "balance: {enabled: [ResfitDefarg]}", `profiles[0].plugins.balance.enabled[0]: "ResfitDefarg" is not a balance plugin of this descheduler (they are HighNodeUtilization, LowNodeUtilization, RemoveDuplicates, RemovePodsViolatingTopologySpreadConstraint, ResfitDefrag)`},
		{"balance: {enabled: [ResfitDefrag]}", "balance: {enabled: [ResfitDefrag]}\n    deschedule: {enabled: [ResfitDefrag]}", `profiles[0].plugins.deschedule.enabled[0]: "ResfitDefrag" is not a deschedule plugin`},
		{"filter: {enabled: [DefaultEvictor]}", "filter: {enabled: [DefaultEvictor, ResfitDefrag]}", `profiles[0].plugins.filter.enabled[1]: "ResfitDefrag" is not a filter plugin of this descheduler (they are DefaultEvictor)`},
	} {
		if !strings.Contains(shipped, bad.from) {
			t.Fatalf("the shipped policy has no %q", bad.from)
		}
		if err := preRun(strings.Replace(shipped, bad.from, bad.to, 1)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v\nwant %s", bad.to, err, bad.want)
		}
	}
	huge := shipped + "\n#" + strings.Repeat("x", 8<<20)
	if err := preRun(huge); err == nil || !strings.Contains(err.Error(), "policy config file") {
		t.Errorf("a policy of 8 MiB: %v", err)
	}
}

// The version command says what was built: the descheduler module and
// resfit's plugin (the descheduler's own printed empty fields).
func TestVersionCommand(t *testing.T) {
	cmd := command()
	var out strings.Builder
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"version"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.HasPrefix(got, "resfit's descheduler: sigs.k8s.io/descheduler v0.36.0 with resfit's ResfitDefrag plugin; resfit ") {
		t.Errorf("version: %q", got)
	}
}

// The shipped reserve policy loads through the descheduler's own loader
// and passes the command's checks, with the arguments the replay measured
// the README's headline at: 32 holds, an hour before a pod is elected, two
// before its node is drained, within 1% of the running pods an hour.
func TestShippedReservePolicyLoads(t *testing.T) {
	shipped := manifesttest.ConfigMap(t, "manifests/reserve/policy.yaml").Data["policy.yaml"]
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(shipped), 0o600); err != nil {
		t.Fatal(err)
	}
	descheduler.SetupPlugins()
	defragplugin.Register(pluginregistry.PluginRegistry)
	policy, err := descheduler.LoadPolicyConfig(path, fake.NewClientset(), pluginregistry.PluginRegistry)
	if err != nil {
		t.Fatalf("the shipped reserve policy: %v", err)
	}
	var a *defragplugin.Args
	for _, pc := range policy.Profiles[0].PluginConfigs {
		if args, ok := pc.Args.(*defragplugin.Args); ok {
			a = args
		}
	}
	if a == nil || a.Mode != defragplugin.ModeReserve || *a.Holds != 32 || a.StarveAfter.Duration != time.Hour || a.Patience.Duration != 2*time.Hour ||
		*a.MaxMoves != 1000 || a.MaxMovesPerHour != "1%" || a.ConfigMap == nil || a.ConfigMap.Name != "resfit-scheduler-config" {
		t.Errorf("ResfitDefrag's arguments read as %+v", a)
	}
	cmd := command()
	if err := cmd.Flags().Set("policy-config-file", path); err != nil {
		t.Fatal(err)
	}
	if err := cmd.PreRunE(cmd, nil); err != nil {
		t.Errorf("the command's checks: %v", err)
	}
}
