package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"

	"github.com/resfit/resfit/examples/kubescheduler/plugins"
	resfitconfig "github.com/resfit/resfit/scoring/config"
)

// The README's scheduler-config.yaml builds, with kube-scheduler's own
// defaulting and multiPoint expansion, into profiles where every resfit
// plugin that scores also runs at PreScore (its Score reads what PreScore
// wrote) and at Reserve, ResourceStrategyFit and FGD filter at PreFilter
// and Filter, and the ResfitFrag profile weighs FGD 101 against
// ResourceStrategyFit 1 (its packing tie-breaker) and the lifetime term,
// declared ends and learned apart, at ResfitFrag's default weights, with
// no other score, and scores every feasible node. No profile leaves kube's resource
// scores (NodeResourcesFit, BalancedAllocation) beside resfit's, and the
// configuration names the cluster's kubeconfig.
func TestREADMESchedulerConfigEnablesEveryPoint(t *testing.T) {
	metrics.Register() // the framework runtime records into them
	text, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(text), "`scheduler-config.yaml`,")
	if ok {
		_, block, ok = strings.Cut(block, "```yaml\n")
	}
	if ok {
		block, _, ok = strings.Cut(block, "```")
	}
	if !ok {
		t.Fatal("README.md has no scheduler-config.yaml block")
	}
	obj, _, err := schedulerscheme.Codecs.UniversalDecoder().Decode([]byte(block), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := obj.(*config.KubeSchedulerConfiguration)
	if cfg.ClientConnection.Kubeconfig == "" {
		t.Error("the configuration names no kubeconfig: kube-scheduler, given --config, ignores --kubeconfig and finds no cluster")
	}
	registry := frameworkplugins.NewInTreeRegistry()
	if err := registry.Merge(plugins.Registry()); err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset()
	ctx := context.Background()
	if len(cfg.Profiles) != 3 {
		t.Fatalf("%d profiles, want 3", len(cfg.Profiles))
	}
	for i := range cfg.Profiles {
		profile := &cfg.Profiles[i]
		fw, err := frameworkruntime.NewFramework(ctx, registry, profile,
			frameworkruntime.WithClientSet(client),
			frameworkruntime.WithInformerFactory(informers.NewSharedInformerFactory(client, 0)),
			frameworkruntime.WithSnapshotSharedLister(cache.NewEmptySnapshot()))
		if err != nil {
			t.Fatalf("profile %s: %v", profile.SchedulerName, err)
		}
		enabled := fw.ListPlugins()
		names := func(set config.PluginSet) []string {
			var out []string
			for _, p := range set.Enabled {
				out = append(out, p.Name)
			}
			return out
		}
		scorers := 0
		for _, name := range names(enabled.Score) {
			if !slices.Contains([]string{plugins.NodeResourcesFitPlusName, plugins.ScarceResourceAvoidanceName, plugins.ResourceStrategyFitName, plugins.FGDName, plugins.LifetimeName, plugins.LearnedLifetimeName}, name) {
				continue
			}
			scorers++
			for point, set := range map[string]config.PluginSet{"preScore": enabled.PreScore, "reserve": enabled.Reserve} {
				if !slices.Contains(names(set), name) {
					t.Errorf("profile %s: %s scores but is not enabled at %s", profile.SchedulerName, name, point)
				}
			}
			if (name == plugins.ResourceStrategyFitName || name == plugins.FGDName) && (!slices.Contains(names(enabled.PreFilter), name) || !slices.Contains(names(enabled.Filter), name)) {
				t.Errorf("profile %s: %s does not filter", profile.SchedulerName, name)
			}
		}
		for _, name := range names(enabled.Score) {
			if (name == "NodeResourcesFit" || name == "NodeResourcesBalancedAllocation") && scorers > 0 {
				t.Errorf("profile %s: kube's %s scores resources beside resfit's, against its arguments", profile.SchedulerName, name)
			}
		}
		if scorers == 0 {
			t.Errorf("profile %s: no resfit plugin scores (score plugins: %v)", profile.SchedulerName, names(enabled.Score))
		}
		if profile.SchedulerName == "resfitfrag-scheduler" {
			var weights []string
			for _, p := range enabled.Score.Enabled {
				weights = append(weights, fmt.Sprint(p.Name, "×", p.Weight))
			}
			want := fmt.Sprintf("FGD×101 ResourceStrategyFit×1 ResfitLifetime×%d ResfitLearnedLifetime×%d ResfitNodeSize×%d",
				resfitconfig.DefaultLifetimeWeight, resfitconfig.DefaultLearnedLifetimeWeight, resfitconfig.DefaultNodeSizeWeight)
			if got := strings.Join(weights, " "); got != want {
				t.Errorf("ResfitFrag's scores: %s, want ResfitFrag's defaults, %s", got, want)
			}
			for _, pc := range profile.PluginConfig {
				if pc.Name != plugins.LifetimeName {
					continue
				}
				var args map[string]any
				unknown, _ := pc.Args.(*runtime.Unknown)
				if unknown == nil || json.Unmarshal(unknown.Raw, &args) != nil {
					t.Fatalf("ResfitLifetime's args %T are not JSON kube-scheduler left to the plugin", pc.Args)
				}
				if got, err := resfitconfig.KubePlugin(pc.Name, args, resfitconfig.Options{}); err != nil || !strings.Contains(string(got.Canonical()), "ends: declared") {
					t.Errorf("ResfitFrag's ResfitLifetime does not follow the declared ends alone, as the learned ones have a plugin of their own (%v)", err)
				}
			}
			if p := profile.PercentageOfNodesToScore; p == nil || *p != 100 {
				t.Errorf("ResfitFrag's profile scores a sample of the nodes: percentageOfNodesToScore %v", p)
			}
		}
	}
}

// The plugins the command registers are the ones resfit's configuration
// reader knows as resfit's kube-scheduler plugins, so that kubectl resfit
// and the Volcano host read every profile the scheduler runs, and warn of
// one it does not.
func TestRegisteredPluginsAreTheConfigurations(t *testing.T) {
	registered := slices.Sorted(slices.Values(plugins.Names()))
	known := slices.Sorted(slices.Values(resfitconfig.KubeResfitPlugins()))
	if !slices.Equal(registered, known) {
		t.Errorf("the scheduler registers %v, resfit's configuration reads %v as its plugins", registered, known)
	}
}

// The plugins resfit's configuration reader knows as kube-scheduler's
// (config.KubeInTreePlugins) are v1.37.2's in-tree registry, and those it
// lists as scoring in a default profile beside NodeResourcesFit and
// NodeResourcesBalancedAllocation are what kube-scheduler's default profile
// enables at Score.
func TestInTreePluginsAreKubes(t *testing.T) {
	metrics.Register()
	registry := frameworkplugins.NewInTreeRegistry()
	var kube []string
	for name := range registry {
		kube = append(kube, name)
	}
	slices.Sort(kube)
	ours := slices.Sorted(slices.Values(resfitconfig.KubeInTreePlugins()))
	if !slices.Equal(ours, kube) {
		t.Errorf("resfit's list of kube's plugins %v, kube-scheduler v1.37.2's registry %v", ours, kube)
	}
	obj, _, err := schedulerscheme.Codecs.UniversalDecoder().Decode([]byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	profile := &obj.(*config.KubeSchedulerConfiguration).Profiles[0]
	client := fake.NewClientset()
	fw, err := frameworkruntime.NewFramework(context.Background(), registry, profile,
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(informers.NewSharedInformerFactory(client, 0)),
		frameworkruntime.WithSnapshotSharedLister(cache.NewEmptySnapshot()))
	if err != nil {
		t.Fatal(err)
	}
	var scores []string
	for _, p := range fw.ListPlugins().Score.Enabled {
		if p.Name != "NodeResourcesFit" && p.Name != "NodeResourcesBalancedAllocation" {
			scores = append(scores, p.Name)
		}
	}
	cfg, err := resfitconfig.Load([]byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"), resfitconfig.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(slices.Sorted(slices.Values(cfg.KubeScorers)), slices.Sorted(slices.Values(scores))) {
		t.Errorf("resfit reads kube's default scorers as %v, kube-scheduler's default profile scores with %v", cfg.KubeScorers, scores)
	}
}
