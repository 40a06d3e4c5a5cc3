package plugins

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"

	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	"pgregory.net/rapid"

	resfitconfig "github.com/resfit/resfit/scoring/config"
)

// kubeLoads reports whether kube-scheduler's own loader takes a
// configuration: its strict decoding (the scheme's codecs), defaulting and
// ValidateKubeSchedulerConfiguration, as kube-scheduler reads --config.
func kubeLoads(text []byte) error {
	obj, _, err := schedulerscheme.Codecs.UniversalDecoder().Decode(text, nil, nil)
	if err != nil {
		return err
	}
	cfg, ok := obj.(*config.KubeSchedulerConfiguration)
	if !ok {
		return fmt.Errorf("decoded a %T", obj)
	}
	return validation.ValidateKubeSchedulerConfiguration(cfg)
}

// drawKubeConfig draws a KubeSchedulerConfiguration around what resfit
// reads of one: its version and kind, the numbers kube validates at the
// top and in each profile, one or two profiles with or without names (the
// same twice, or empty), NodeResourcesFit enabled at score or multiPoint
// and configured once or twice; and, now and then, one key anywhere down to
// the plugins misspelt as a user misspells it (multipoint, schedulerNme).
// It returns the document and the profile to read: the first, by the name
// kube gives it.
func drawKubeConfig(t *rapid.T) (map[string]any, string) {
	maybe := func(m map[string]any, key string, values ...any) {
		if i := rapid.IntRange(-len(values), len(values)-1).Draw(t, key); i >= 0 { // absent half the time
			m[key] = values[i]
		}
	}
	doc := map[string]any{
		"apiVersion": "kubescheduler.config.k8s.io/v1",
		"kind":       "KubeSchedulerConfiguration",
	}
	switch rapid.IntRange(0, 7).Draw(t, "version") { // mostly right
	case 0:
		doc["apiVersion"] = rapid.SampledFrom([]string{"kubescheduler.config.k8s.io/v1beta9", "kubescheduler.config.k8s.io/v1beta3"}).Draw(t, "apiVersion")
	case 1:
		doc["kind"] = "KubeSchedulerConfig"
	}
	maybe(doc, "percentageOfNodesToScore", -1, 0, 50, 100, 101)
	maybe(doc, "parallelism", 0, 16)
	maybe(doc, "podInitialBackoffSeconds", 0, 1, 5)
	maybe(doc, "podMaxBackoffSeconds", 0, 3, 10)
	var profiles []any
	for i := range rapid.IntRange(1, 2).Draw(t, "profiles") {
		p := map[string]any{}
		maybe(p, "schedulerName", "", "a", "b")
		maybe(p, "percentageOfNodesToScore", -1, 0, 100, 101)
		point := rapid.SampledFrom([]string{"score", "multiPoint"}).Draw(t, fmt.Sprint("point", i))
		p["plugins"] = map[string]any{point: map[string]any{"enabled": []any{
			map[string]any{"name": "NodeResourcesFit", "weight": rapid.IntRange(1, 3).Draw(t, fmt.Sprint("weight", i))}}}}
		args := map[string]any{"scoringStrategy": map[string]any{"type": "MostAllocated", "resources": []any{map[string]any{"name": "cpu", "weight": 1}}}}
		configs := []any{map[string]any{"name": "NodeResourcesFit", "args": args}}
		if rapid.IntRange(0, 4).Draw(t, fmt.Sprint("twice", i)) == 0 {
			configs = append(configs, map[string]any{"name": "NodeResourcesFit", "args": args})
		}
		p["pluginConfig"] = configs
		profiles = append(profiles, p)
	}
	doc["profiles"] = profiles
	// One key misspelt, at some level: the objects a user writes keys in.
	if rapid.IntRange(0, 2).Draw(t, "misspell") > 0 {
		var objects []map[string]any
		var walk func(v any)
		walk = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				if x["scoringStrategy"] == nil && x["type"] == nil && x["resources"] == nil { // not the plugin's own args
					objects = append(objects, x)
				}
				for _, k := range slices.Sorted(maps.Keys(x)) {
					if k != "args" {
						walk(x[k])
					}
				}
			case []any:
				for _, y := range x {
					walk(y)
				}
			}
		}
		walk(doc)
		m := rapid.SampledFrom(objects).Draw(t, "object")
		keys := slices.Sorted(maps.Keys(m))
		k := rapid.SampledFrom(keys).Draw(t, "key")
		wrong := rapid.SampledFrom([]string{k + "x", "x" + k, lowerFirst(k)}).Draw(t, "wrong")
		if wrong != k {
			m[wrong] = m[k]
			delete(m, k)
		}
	}
	name := "default-scheduler"
	if first := profiles[0].(map[string]any); first["schedulerName"] != nil {
		name = first["schedulerName"].(string)
	}
	return doc, name
}

// lowerFirst is a key as a user types it all in lower case (multipoint).
func lowerFirst(k string) string {
	out := []byte(k)
	for i, c := range out {
		if c >= 'A' && c <= 'Z' {
			out[i] = c + 'a' - 'A'
		}
	}
	return string(out)
}

// resfit reads a KubeSchedulerConfiguration exactly when kube-scheduler's
// own loader does, on generated documents: versions, kinds, every key down
// to the plugins (misspelt now and then), profile names, plugin configs
// and the numbers kube validates. A document kube refuses is one resfit
// refuses, with an error naming the field; one kube takes, resfit reads.
func TestKubeSchedulerConfigurationAsKubesLoader(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		doc, profile := drawKubeConfig(t)
		text, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		kubeErr := kubeLoads(text)
		_, ourErr := resfitconfig.Load(text, resfitconfig.Options{Profile: profile})
		if (kubeErr == nil) != (ourErr == nil) {
			t.Fatalf("%s\nkube-scheduler: %v\nresfit: %v", text, kubeErr, ourErr)
		}
	})
}
