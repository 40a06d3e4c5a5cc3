package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"

	"github.com/resfit/resfit/examples/kubescheduler/plugins"
)

// The README's scheduler-config.yaml builds, with kube-scheduler's own
// defaulting and multiPoint expansion, into profiles where every resfit
// plugin that scores also runs at PreScore (its Score reads what PreScore
// wrote) and at Reserve, ResourceStrategyFit and FGD filter at PreFilter
// and Filter, and the ResfitFrag profile weighs FGD 101 against
// ResourceStrategyFit 1 (its packing tie-breaker), with no other score,
// and scores every feasible node. No profile leaves kube's resource
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
	if err := registry.Merge(frameworkruntime.Registry{
		plugins.NodeResourcesFitPlusName:    plugins.NewNodeResourcesFitPlus,
		plugins.ScarceResourceAvoidanceName: plugins.NewScarceResourceAvoidance,
		plugins.ResourceStrategyFitName:     plugins.NewResourceStrategyFit,
		plugins.FGDName:                     plugins.NewFGD,
	}); err != nil {
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
			if !slices.Contains([]string{plugins.NodeResourcesFitPlusName, plugins.ScarceResourceAvoidanceName, plugins.ResourceStrategyFitName, plugins.FGDName}, name) {
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
			if got := strings.Join(weights, " "); got != "FGD×101 ResourceStrategyFit×1" {
				t.Errorf("ResfitFrag's scores: %s", got)
			}
			if p := profile.PercentageOfNodesToScore; p == nil || *p != 100 {
				t.Errorf("ResfitFrag's profile scores a sample of the nodes: percentageOfNodesToScore %v", p)
			}
		}
	}
}
