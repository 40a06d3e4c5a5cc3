package config

import (
	"strings"
	"testing"
)

const kubeConfigMap = `apiVersion: v1
kind: ConfigMap
metadata: {name: resfit-scheduler-config, namespace: kube-system}
data:
  scheduler-config.yaml: |
    apiVersion: kubescheduler.config.k8s.io/v1
    kind: KubeSchedulerConfiguration
    profiles:
    - schedulerName: resfit-scheduler
      plugins:
        score:
          enabled: [{name: NodeResourcesFit, weight: 4}]
`

// Configurations as users keep them: in a ConfigMap, among manifests.
func TestConfigurationsInManifests(t *testing.T) {
	fitAndBalanced := []ScorerConfig{{Name: NodeResourcesFit, Weight: 4, Args: kubeDefaultFit}, {Name: NodeResourcesBalancedAllocation, Weight: 1, Args: kubeDefaultBalanced}}
	runLoadCases(t, []loadCase{
		{name: "a KubeSchedulerConfiguration in a ConfigMap", doc: kubeConfigMap,
			filters: []string{NodeResourcesFit}, scorers: fitAndBalanced},
		{name: "among other documents, with empty ones", doc: "---\n# a comment\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: s}\n---\n" + kubeConfigMap + "---\n",
			filters: []string{NodeResourcesFit}, scorers: fitAndBalanced},
		{name: "a KubeSchedulerConfiguration among documents", doc: "kind: Namespace\n---\napiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
			filters: []string{NodeResourcesFit},
			scorers: []ScorerConfig{{Name: NodeResourcesFit, Weight: 1, Args: kubeDefaultFit}, {Name: NodeResourcesBalancedAllocation, Weight: 1, Args: kubeDefaultBalanced}}},
		{name: "JSON", doc: `{"kind": "ConfigMap", "data": {"conf": "tiers: [{plugins: [{name: binpack}]}]"}}`,
			filters: []string{NodeResourcesFit}, scorers: []ScorerConfig{{Name: Binpack, Weight: 1, Args: binpackDefaults}}},
		{name: "a ConfigMap without a configuration", doc: "kind: ConfigMap\ndata: {a: 'x: 1', b: '- 2'}",
			errs: []string{`data: no key of this ConfigMap holds a scheduler configuration (a document with plugins, tiers, profiles, priorities); its keys are a, b`}},
		{name: "a ConfigMap with two", doc: "kind: ConfigMap\ndata: {a: 'tiers: []', b: 'plugins: []'}",
			errs: []string{`data: several keys of this ConfigMap hold a scheduler configuration (data["a"], data["b"]); keep one`}},
		{name: "manifests without one", doc: "kind: ServiceAccount\nmetadata: {name: s, namespace: ns}\n---\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: 'x'}\n",
			errs: []string{`(root): none of the 2 documents is a scheduler configuration or a ConfigMap holding one; found ServiceAccount ns/s, ConfigMap c`}},
		{name: "manifests with two", doc: kubeConfigMap + "---\n" + volcanoConfigMap(volcanoDefaultConf),
			errs: []string{`several documents hold a scheduler configuration ((document 1).data["scheduler-config.yaml"], (document 2).data["volcano-scheduler.conf"]); keep one`}},
		{name: "an error inside", doc: strings.Replace(kubeConfigMap, "weight: 4", "weight: four", 1),
			errs: []string{`data["scheduler-config.yaml"].profiles[0].plugins.score.enabled[0].weight: must be a whole number, got "four"`}},
		{name: "a broken document", doc: "kind: A\n---\nkind: [\n",
			errs: []string{`(root): not YAML or JSON: document 2: yaml: line`}},
	})
	c, err := Load([]byte(kubeConfigMap), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `ConfigMap kube-system/resfit-scheduler-config, data["scheduler-config.yaml"]`; c.Source != want {
		t.Errorf("Source %q, want %q", c.Source, want)
	}
}

func FuzzManifest(f *testing.F) {
	fuzzConfig(f, kubeConfigMap, volcanoManifests(volcanoDefaultConf),
		"kind: ConfigMap\ndata: {a: 'tiers: []', b: 'x: 1'}",
		"---\nkind: A\n---\nplugins: [{name: binpack}]\n---\n")
}
