package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/strategy"
)

var (
	kubeDefaultFit      = NodeResourcesFitArgs{Type: ScoringLeastAllocated, Resources: []strategy.Resource{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}}}
	kubeDefaultBalanced = BalancedAllocationArgs{Resources: []string{"cpu", "memory"}}
)

// KubeSchedulerConfiguration, as kube-scheduler v1.37 reads it.
func TestKubeSchedulerConfiguration(t *testing.T) {
	runLoadCases(t, []loadCase{
		{name: "no profiles: the default profile", doc: `{apiVersion: kubescheduler.config.k8s.io/v1, kind: KubeSchedulerConfiguration}`,
			filters: []string{NodeResourcesFit},
			scorers: []ScorerConfig{{Name: NodeResourcesFit, Weight: 1, Args: kubeDefaultFit}, {Name: NodeResourcesBalancedAllocation, Weight: 1, Args: kubeDefaultBalanced}}},
		{name: "weights and arguments", doc: `
profiles:
- plugins:
    score:
      enabled: [{name: NodeResourcesFit, weight: 3}, {name: NodeResourcesBalancedAllocation}]
  pluginConfig:
  - name: NodeResourcesFit
    args:
      ignoredResources: [example.com/foo]
      scoringStrategy:
        type: MostAllocated
        resources: [{name: nvidia.com/gpu, weight: 5}, {name: cpu, weight: 0}]`,
			filters: []string{NodeResourcesFit},
			scorers: []ScorerConfig{
				{Name: NodeResourcesFit, Weight: 3, Args: NodeResourcesFitArgs{Type: ScoringMostAllocated, IgnoredResources: []string{"example.com/foo"},
					Resources: []strategy.Resource{{Name: "nvidia.com/gpu", Weight: 5}, {Name: "cpu", Weight: 1}}}},
				{Name: NodeResourcesBalancedAllocation, Weight: 1, Args: kubeDefaultBalanced}}},
		{name: "disabled scores and filter, a plugin resfit does not compute", doc: `
profiles:
- plugins:
    multiPoint: {disabled: [{name: NodeResourcesBalancedAllocation}]}
    score: {disabled: [{name: NodeResourcesFit}], enabled: [{name: ImageLocality, weight: 2}]}
    filter: {disabled: [{name: "*"}]}`},
		{name: "RequestedToCapacityRatio", doc: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
        requestedToCapacityRatio: {shape: [{utilization: 0, score: 10}, {utilization: 100, score: 0}]}`,
			filters: []string{NodeResourcesFit},
			scorers: []ScorerConfig{{Name: NodeResourcesFit, Weight: 1, Args: NodeResourcesFitArgs{Type: ScoringRequestedToCapacityRatio, Resources: kubeDefaultFit.Resources,
				Shape: []strategy.ShapePoint{{Utilization: 0, Score: 10}, {Utilization: 100, Score: 0}}}},
				{Name: NodeResourcesBalancedAllocation, Weight: 1, Args: kubeDefaultBalanced}}},
		{name: "errors", doc: `
profiles:
- plugins:
    score: {enabled: [{name: NodeResourcesFit, weight: -1}]}
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: Spread, resources: [{name: cpu, weight: 101}]}}
  - name: NodeResourcesBalancedAllocation
    args: {resources: [{name: cpu, weight: 2}]}`,
			errs: []string{
				`profiles[0].plugins.score.enabled[0].weight: must be ≥ 0, got -1`,
				`profiles[0].pluginConfig[0].args.scoringStrategy.type: unsupported scoring strategy type, want MostAllocated, LeastAllocated or RequestedToCapacityRatio, got "Spread"`,
				`profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: must be in (0, 100], got 101`,
				`profiles[0].pluginConfig[1].args.resources[0].weight: must be 1, got 2`}},
		{name: "resfit's kube-scheduler plugins, as the plugins read their args", profile: "resfitfrag", doc: resfitProfiles,
			filters: []string{NodeResourcesFit},
			scorers: []ScorerConfig{
				kubeScorer(ScorerConfig{Name: FGD, Weight: 101, Args: FGDArgs{Device: resource.GPU, ShareUnit: 1000, Classes: []FragClass{{MilliCPU: 8000, GPUs: 1, GPUShare: 1000, Weight: 1}}}}),
				{Name: KubeResourceStrategyFit, Weight: 1, Args: KubePluginArgs{Plugin: KubeResourceStrategyFit, Config: &Config{
					Filters: []FilterConfig{{Name: NodeResourcesFit, Args: NodeResourcesFitArgs{}}},
					Scorers: []ScorerConfig{{Name: NodeResourcesBalancedAllocation, Weight: 1, Args: BalancedAllocationArgs{Resources: []string{"cpu", resource.GPU}}}}}}}}},
		{name: "ResourceStrategyFit in a profile that scores with it alone", profile: "resfit", doc: resfitProfiles,
			filters: []string{NodeResourcesFit},
			scorers: []ScorerConfig{{Name: KubeResourceStrategyFit, Weight: 1, Args: KubePluginArgs{Plugin: KubeResourceStrategyFit, Config: &Config{
				Filters: []FilterConfig{{Name: NodeResourcesFit, Args: NodeResourcesFitArgs{}}},
				Scorers: []ScorerConfig{{Name: NodeResourcesFit, Weight: 2, Args: NodeResourcesFitArgs{Type: ScoringMostAllocated, Resources: []strategy.Resource{{Name: resource.GPU, Weight: 1}}}}}}}}}},
		{name: "several profiles, none named", doc: resfitProfiles,
			errs: []string{`profiles: 3 profiles ("resfit", "resfitfrag", "default-scheduler"): name the one to read by its schedulerName`}},
		{name: "a profile that is not there", profile: "volcano", doc: resfitProfiles,
			errs: []string{`profiles: no profile named "volcano"; the profiles are "resfit", "resfitfrag", "default-scheduler"`}},
		{name: "the default-scheduler profile", profile: "default-scheduler", doc: resfitProfiles,
			filters: []string{NodeResourcesFit},
			scorers: []ScorerConfig{{Name: NodeResourcesFit, Weight: 1, Args: kubeDefaultFit}, {Name: NodeResourcesBalancedAllocation, Weight: 1, Args: kubeDefaultBalanced}}},
		{name: "errors inside resfit's plugins' args", doc: `
profiles:
- plugins:
    multiPoint: {enabled: [{name: ResourceStrategyFit}, {name: FGD}]}
  pluginConfig:
  - name: ResourceStrategyFit
    args: {plugins: [{name: binpack, weight: -1}]}
  - name: FGD
    args: {classes: [{cpu: -1}]}`,
			errs: []string{
				`profiles[0].pluginConfig[0].args.plugins[0].weight: must be ≥ 0, got -1`,
				`profiles[0].pluginConfig[1].args.classes[0].cpu: quantity "-1": negative amounts are not allowed`}},
		{name: "ResourceStrategyFit without args", doc: `profiles: [{plugins: {multiPoint: {enabled: [{name: ResourceStrategyFit}]}}}]`,
			errs: []string{`profiles[0].pluginConfig: ResourceStrategyFit needs a configuration (plugins: ...) as its args`}},
		{name: "RequestedToCapacityRatio without a shape", doc: `profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: RequestedToCapacityRatio}}}]}]`,
			errs: []string{`profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio: must be specified when type is RequestedToCapacityRatio`}},
	})
}

// resfitProfiles are three profiles: resfit's plugins as the kubescheduler
// example enables them, and kube-scheduler's default.
const resfitProfiles = `
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: resfit
  plugins:
    multiPoint: {enabled: [{name: ResourceStrategyFit}]}
    score: {disabled: [{name: NodeResourcesFit}, {name: NodeResourcesBalancedAllocation}]}
  pluginConfig:
  - name: ResourceStrategyFit
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: ResourceStrategyFitArgs
      plugins:
      - name: NodeResourcesFit
        weight: 2
        args: {scoringStrategy: {type: MostAllocated, resources: [{name: nvidia.com/gpu, weight: 1}]}}
- schedulerName: resfitfrag
  plugins:
    preFilter: {enabled: [{name: FGD}, {name: ResourceStrategyFit}]}
    filter: {enabled: [{name: FGD}, {name: ResourceStrategyFit}]}
    preScore: {enabled: [{name: FGD}, {name: ResourceStrategyFit}]}
    score:
      enabled: [{name: FGD, weight: 101}, {name: ResourceStrategyFit, weight: 1}]
      disabled: [{name: "*"}]
  pluginConfig:
  - name: FGD
    args: {classes: [{cpu: 8, gpus: 1}]}
  - name: ResourceStrategyFit
    args:
      plugins:
      - name: NodeResourcesBalancedAllocation
        args: {resources: [{name: cpu, weight: 1}, {name: nvidia.com/gpu, weight: 1}]}
- schedulerName: default-scheduler # kube requires a name where there are several profiles
`

// The configuration resfit's kube-scheduler plugins run is the one Load
// reads from the profile that enables them: KubePlugin, which the plugins
// call, decodes each one's args alike, and a profile's canonical form
// loads back to it.
func TestKubePluginIsTheProfilesPlugin(t *testing.T) {
	for _, profile := range []string{"resfit", "resfitfrag"} {
		c, err := Load([]byte(resfitProfiles), Options{Profile: profile})
		if err != nil {
			t.Fatal(err)
		}
		doc, err := decodeDocument([]byte(resfitProfiles))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range c.Scorers {
			var args map[string]any
			for _, p := range doc["profiles"].([]any) {
				if p.(map[string]any)["schedulerName"] != profile {
					continue
				}
				for _, pc := range p.(map[string]any)["pluginConfig"].([]any) {
					if pc.(map[string]any)["name"] == s.Name {
						args = pc.(map[string]any)["args"].(map[string]any)
					}
				}
			}
			plugin, err := KubePlugin(s.Name, args, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(s.Args.(KubePluginArgs).Config, plugin, cmpopts.IgnoreFields(ScorerConfig{}, "Sources"), cmpopts.IgnoreFields(FilterConfig{}, "Source"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s in profile %s (-Load +KubePlugin):\n%s", s.Name, profile, diff)
			}
		}
		text := c.Canonical()
		back, err := Load(text, Options{})
		if err != nil {
			t.Fatalf("written as\n%s\ndoes not load back: %v", text, err)
		}
		if diff := cmp.Diff(c.Scorers, back.Scorers, cmpopts.IgnoreFields(ScorerConfig{}, "Sources"), cmpopts.IgnoreFields(FilterConfig{}, "Source"), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("written as\n%s\nscorers (-loaded +loaded back):\n%s", text, diff)
		}
	}
	if _, err := KubePlugin("ResfitFrag", nil, Options{}); err == nil || !strings.Contains(err.Error(), `unknown plugin "ResfitFrag"; resfit's kube-scheduler plugins are ResourceStrategyFit, FGD, NodeResourcesFitPlus, ScarceResourceAvoidance`) {
		t.Errorf("KubePlugin of an unknown plugin: %v", err)
	}
}

func FuzzKube(f *testing.F) {
	fuzzConfig(f,
		`{apiVersion: kubescheduler.config.k8s.io/v1, kind: KubeSchedulerConfiguration}`,
		`profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]}}}}]}]`,
		`profiles: [{plugins: {score: {enabled: [{name: NodeResourcesFit, weight: 3}], disabled: [{name: NodeResourcesBalancedAllocation}]}}, pluginConfig: [{name: NodeResourcesFit, args: {ignoredResources: [a], scoringStrategy: {type: MostAllocated, resources: [{name: nvidia.com/gpu, weight: 5}]}}}]}]`,
		`profiles: [{schedulerName: a, plugins: {multiPoint: {disabled: [{name: "*"}]}}}, {schedulerName: b}]`)
}

// The scheduler whose pods a configuration scores: the profile's
// schedulerName (default-scheduler without one); none in resfit's own form.
func TestKubeSchedulerName(t *testing.T) {
	for _, c := range []struct {
		doc, profile, want string
	}{
		{`{apiVersion: kubescheduler.config.k8s.io/v1, kind: KubeSchedulerConfiguration}`, "", "default-scheduler"},
		{"profiles:\n- {}", "", "default-scheduler"},
		{resfitProfiles, "resfitfrag", "resfitfrag"},
		{"plugins:\n- name: NodeResourcesFit", "", ""},
	} {
		cfg, err := Load([]byte(c.doc), Options{Profile: c.profile})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.SchedulerName != c.want {
			t.Errorf("profile %q of %.40q: scheduler %q, want %q", c.profile, c.doc, cfg.SchedulerName, c.want)
		}
	}
}

// The outer layer of a KubeSchedulerConfiguration is read as strictly as
// kube-scheduler's loader reads it (TestKubeSchedulerConfigurationAsKubesLoader
// in examples/kubescheduler holds the two together on generated documents):
// the findings of a user's mistakes, each an error naming the field.
func TestKubeSchedulerConfigurationOuterLayer(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    multipoint: {enabled: [{name: FGD}]}\n",
			`profiles[0].plugins["multipoint"]: unknown field; known are preEnqueue, queueSort, preFilter, filter, postFilter, preScore, score, reserve, permit, preBind, bind, postBind, multiPoint, placementGenerate, placementScore, podGroupPostFilter, got an object`},
		{"apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerNme: resfit\n",
			`profiles[0]["schedulerNme"]: unknown field; known are schedulerName, percentageOfNodesToScore, plugins, pluginConfig, got "resfit"`},
		{"apiVersion: kubescheduler.config.k8s.io/v1beta9\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: resfit\n",
			`apiVersion: kube-scheduler v1.37 reads kubescheduler.config.k8s.io/v1 only, got "kubescheduler.config.k8s.io/v1beta9"`},
		{"apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: resfit\n- schedulerName: resfit\n",
			`profiles[1].schedulerName: appears in two profiles, got "resfit"`},
		// kube names only a lone profile: of two, the one left unnamed is
		// an error, as kube-scheduler's validation makes it.
		{"apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: resfit\n- plugins: {}\n",
			`profiles[1].schedulerName: required where there are several profiles`},
		{"apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 101\nprofiles:\n- schedulerName: resfit\n",
			`percentageOfNodesToScore: must be in [0, 100], got 101`},
	} {
		_, err := Load([]byte(c.doc), Options{Profile: "resfit"})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant %s", c.doc, err, c.want)
		}
	}
}

// A profile's plugins as kube-scheduler v1.37.2 and resfit's build know
// them: kube's own scorers (its default profile's, and those enabled) are
// listed apart, not warned about as if misspelt; ResfitRooms scores
// nothing; a name neither knows is an error, as kube-scheduler refuses to
// start with it; a resfit plugin resfit's kube-scheduler does not register
// is read with a warning saying so.
func TestKubeProfilePlugins(t *testing.T) {
	for _, c := range []struct {
		name, plugins string
		kube          []string
		warn, err     string
	}{
		{name: "default", plugins: `{}`,
			kube: []string{"TaintToleration", "NodeAffinity", "VolumeBinding", "PodTopologySpread", "InterPodAffinity", "DynamicResources", "ImageLocality"}},
		{name: "ImageLocality enabled, one default off", plugins: `{score: {disabled: [{name: TaintToleration}], enabled: [{name: ImageLocality, weight: 2}]}}`,
			kube: []string{"NodeAffinity", "VolumeBinding", "PodTopologySpread", "InterPodAffinity", "DynamicResources", "ImageLocality"}},
		{name: "all off", plugins: `{score: {disabled: [{name: "*"}], enabled: [{name: NodeResourcesFit}]}}`},
		{name: "rooms", plugins: `{multiPoint: {enabled: [{name: NodeResourcesFit}, {name: ResfitRooms}]}, score: {disabled: [{name: "*"}]}}`},
		{name: "misspelt", plugins: `{multiPoint: {enabled: [{name: ResourceStrategyFitt}]}}`,
			err: `profiles[0].plugins.multiPoint.enabled[0].name: no such plugin: kube-scheduler v1.37.2 builds in DefaultBinder, `},
		{name: "resfit's, not registered", plugins: `{score: {disabled: [{name: "*"}], enabled: [{name: PackLeastUsed}]}}`,
			warn: `profiles[0].plugins.score.enabled[0].name: PackLeastUsed is a resfit plugin that resfit's kube-scheduler does not register`},
	} {
		doc := "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins: " + c.plugins + "\n"
		cfg, err := Load([]byte(doc), Options{})
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want %q", c.name, err, c.err)
			}
			continue
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !slices.Equal(cfg.KubeScorers, c.kube) {
			t.Errorf("%s: kube's scorers %v, want %v", c.name, cfg.KubeScorers, c.kube)
		}
		if got := strings.Join(cfg.Warnings, "\n"); (c.warn == "") != (got == "") || !strings.Contains(got, c.warn) {
			t.Errorf("%s: warnings %q, want %q", c.name, got, c.warn)
		}
	}
}
