package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/resfit/resfit/scoring/lifetime"
)

const modelClasses = "classes: [{cpu: 8, gpus: 1, weight: 1}]"

// The lifetime model's options are read where the plugins that follow ends
// take them, merged over the configuration's plugins, written back by
// Canonical, and refused at their field's path when lifetime cannot use
// them or two plugins set one apart.
func TestLifetimeModelOptions(t *testing.T) {
	for doc, want := range map[string]lifetime.ModelOptions{
		`plugins: [{name: ResfitFrag, args: {` + modelClasses + `}}]`:                                                                                                      {},
		`plugins: [{name: ResfitFrag, args: {` + modelClasses + `, lifetime: {model: {minSamples: 16}}}}]`:                                                                 {MinSamples: 16},
		`plugins: [{name: ResfitFrag, args: {` + modelClasses + `, lifetime: {weight: 3, model: {}}}}]`:                                                                    {},
		"plugins:\n- {name: ResfitLifetime, args: {ends: declared, model: {window: 64, minSamples: 4}}}\n- {name: ResfitLearnedLifetime, args: {model: {quantile: 0.75}}}": {Window: 64, MinSamples: 4, Quantile: 0.75},
		`tiers: [{plugins: [{name: resfit-frag, arguments: {classes: [{gpus: 1}], lifetime: {model: {window: 1024, quantile: 0.6}}}}]}]`:                                   {Window: 1024, Quantile: 0.6},
		"plugins:\n- {name: ResfitLifetime, args: {model: {minSamples: 8}}}\n- {name: ResfitLearnedLifetime, args: {model: {minSamples: 8}}}":                              {MinSamples: 8},
	} {
		c, err := Load([]byte(doc), Options{})
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		got, err := c.LifetimeModel()
		if err != nil || got != want {
			t.Errorf("%s: %+v (%v), want %+v", doc, got, err, want)
		}
		text := c.Canonical()
		if (want != lifetime.ModelOptions{}) != strings.Contains(string(text), "model:") {
			t.Errorf("%s: written as\n%s", doc, text)
		}
		back, err := Load(text, Options{})
		if err != nil {
			t.Fatalf("%s: written as\n%s\ndoes not load back: %v", doc, text, err)
		}
		if got, _ := back.LifetimeModel(); got != want {
			t.Errorf("%s: written as\n%s\nloads back to %+v, want %+v", doc, text, got, want)
		}
	}
	for doc, want := range map[string]string{
		`plugins: [{name: ResfitFrag, args: {` + modelClasses + `, lifetime: {model: {minSamples: 0}}}}]`:                                      `plugins[0].args.lifetime.model.minSamples: must be in [1, 2147483647], got 0`,
		`plugins: [{name: ResfitFrag, args: {` + modelClasses + `, lifetime: {model: {quantile: 1}}}}]`:                                        `plugins[0].args.lifetime.model.quantile: must be in (0, 1), got 1`,
		`plugins: [{name: ResfitFrag, args: {` + modelClasses + `, lifetime: {model: 3}}}]`:                                                    `plugins[0].args.lifetime.model: must be an object, got 3`,
		`plugins: [{name: ResfitLifetime, args: {model: {window: 4, minSamples: 8}}}]`:                                                         `plugins[0].args.model.minSamples: must be in [1, window = 4], got 8`,
		`plugins: [{name: ResfitLifetime, args: {model: {minSamples: 600}}}]`:                                                                  `plugins[0].args.model.minSamples: must be in [1, window = 512], got 600`,
		`plugins: [{name: ResfitLifetime, args: {model: {window: 2.5}}}]`:                                                                      `plugins[0].args.model.window: must be a whole number, got 2.5`,
		`plugins: [{name: ResfitLifetime, args: {model: {window: 1e300}}}]`:                                                                    `plugins[0].args.model.window: must be in [1, 2147483647], got 1e+300`,
		`plugins: [{name: ResfitLifetime, args: {model: {quantile: .nan}}}]`:                                                                   `plugins[0].args.model.quantile: must be a finite number, got NaN`,
		`plugins: [{name: ResfitLearnedLifetime, args: {model: {size: 3}}}]`:                                                                   `plugins[0].args.model["size"]: unknown field; known are window, minSamples, quantile, got 3`,
		"plugins:\n- {name: ResfitLifetime, args: {model: {minSamples: 8}}}\n- {name: ResfitLearnedLifetime, args: {model: {minSamples: 16}}}": `plugins[1].args.model: ResfitLifetime and ResfitLearnedLifetime ask the host's one lifetime model for options that do not go together: minSamples: 8 and 16: one model learns with one minSamples`,
		"plugins:\n- {name: ResfitLifetime, args: {model: {window: 300}}}\n- {name: ResfitLearnedLifetime, args: {model: {minSamples: 400}}}":  `plugins[1].args.model: ResfitLifetime and ResfitLearnedLifetime ask the host's one lifetime model for options that do not go together: minSamples: must be in [1, window = 300], got 400`,
		"apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    score:\n      enabled: [{name: ResfitLifetime}, {name: ResourceStrategyFit}]\n  pluginConfig:\n" +
			"  - {name: ResfitLifetime, args: {ends: declared, model: {minSamples: 8}}}\n  - {name: ResourceStrategyFit, args: {plugins: [{name: ResfitFrag, args: {" + modelClasses + ", lifetime: {model: {minSamples: 16}}}}]}}": `profiles[0].pluginConfig[1].args.plugins[0].args.lifetime: ResfitLifetime and ResourceStrategyFit ask the host's one lifetime model for options that do not go together: minSamples: 8 and 16: one model learns with one minSamples`,
		`plugins: [{name: ResfitLifetime, args: {model: {window: 64}}}]`: `plugins[0].args.model.window: must be at least minSamples, 256 by default (give minSamples too), got 64`,
	} {
		_, err := Load([]byte(doc), Options{})
		var ce *ConfigError
		if !errors.As(err, &ce) || len(ce.Errors) != 1 || ce.Errors[0].Error() != want {
			t.Errorf("%s:\n%v\nwant\n%s", doc, err, want)
		}
	}
}

// On drawn options, a configuration loads exactly when lifetime takes the
// options (lifetime.ModelOptions.Check, the reference; 0, which lifetime
// reads as unset, is refused where written), and then asks for them.
func TestLifetimeModelOptionsAgreeWithLifetime(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var fields []string
		var opts lifetime.ModelOptions
		if rapid.Bool().Draw(t, "window given") {
			opts.Window = rapid.IntRange(-2, 600).Draw(t, "window")
			fields = append(fields, fmt.Sprint("window: ", opts.Window))
		}
		if rapid.Bool().Draw(t, "minSamples given") {
			opts.MinSamples = rapid.IntRange(-2, 600).Draw(t, "minSamples")
			fields = append(fields, fmt.Sprint("minSamples: ", opts.MinSamples))
		}
		if rapid.Bool().Draw(t, "quantile given") {
			opts.Quantile = rapid.SampledFrom([]float64{-0.5, 0, 0.1, 0.5, 0.99, 1, 2}).Draw(t, "quantile")
			fields = append(fields, fmt.Sprint("quantile: ", opts.Quantile))
		}
		plugin := rapid.SampledFrom([]string{
			`{name: ResfitFrag, args: {` + modelClasses + `, lifetime: {model: {%s}}}}`,
			`{name: ResfitLifetime, args: {model: {%s}}}`,
			`{name: ResfitLearnedLifetime, args: {model: {%s}}}`,
		}).Draw(t, "plugin")
		doc := "plugins: [" + fmt.Sprintf(plugin, strings.Join(fields, ", ")) + "]"
		c, err := Load([]byte(doc), Options{})
		takes := opts.Check() == nil && opts.Window >= 0 && opts.MinSamples >= 0 && opts.Quantile >= 0
		for _, f := range fields {
			takes = takes && !strings.HasSuffix(f, ": 0")
		}
		if (err == nil) != takes {
			t.Fatalf("%s: %v; lifetime says %v", doc, err, opts.Check())
		}
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.Contains(ce.Errors[0].Path, ".model") {
				t.Fatalf("%s: %v, want an error at the model's field", doc, err)
			}
			return
		}
		if got, err := c.LifetimeModel(); err != nil || got != opts {
			t.Fatalf("%s: asks for %+v (%v), want %+v", doc, got, err, opts)
		}
		if _, err := lifetime.NewModel(opts); err != nil {
			t.Fatalf("%s: loaded, but lifetime refuses %+v: %v", doc, opts, err)
		}
	})
}

// A kube-scheduler plugin's arguments are held to one lifetime model too:
// ResourceStrategyFit's configuration whose plugins ask for options that
// clash is refused where kube-scheduler hands it over (KubePlugin), at the
// path in its arguments.
func TestKubePluginHasOneLifetimeModel(t *testing.T) {
	args := map[string]any{"plugins": []any{
		map[string]any{"name": "ResfitFrag", "args": map[string]any{"classes": []any{map[string]any{"gpus": 1}}, "lifetime": map[string]any{"model": map[string]any{"minSamples": 8}}}},
		map[string]any{"name": "ResfitLifetime", "args": map[string]any{"model": map[string]any{"minSamples": 16}}},
	}}
	_, err := KubePlugin(KubeResourceStrategyFit, args, Options{})
	want := "plugins[1].args.model: ResfitFrag and ResfitLifetime ask the host's one lifetime model for options that do not go together: minSamples: 8 and 16: one model learns with one minSamples"
	if err == nil || err.Error() != want {
		t.Errorf("%v\nwant\n%s", err, want)
	}
	args["plugins"].([]any)[1].(map[string]any)["args"] = map[string]any{"model": map[string]any{"minSamples": 8}}
	c, err := KubePlugin(KubeResourceStrategyFit, args, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := c.LifetimeModel(); got != (lifetime.ModelOptions{MinSamples: 8}) {
		t.Errorf("asks for %+v, want minSamples 8", got)
	}
}
