package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/strategy"
)

// drawNumber draws a YAML scalar where a configuration wants a number: the
// small values real files hold, the bounds, and the whole int64 and
// float64 ranges, NaN and the infinities, numbers too large for int64, and
// things that are not numbers at all.
func drawNumber(t *rapid.T, label string) string {
	return rapid.OneOf(
		rapid.SampledFrom([]string{"0", "1", "2", "3", "10", "100", "101", "1000000", "1000001", "-1",
			"7.9", "0.5", "-0.5", "1e17", "1e300", "-1e300", ".nan", ".inf", "-.inf",
			"9223372036854775807", "-9223372036854775808", "9223372036854775808", "18446744073709551616",
			"4611686018427387904", "ten", "null", "[1]", "{a: 1}"}),
		rapid.Map(rapid.Int64(), func(i int64) string { return strconv.FormatInt(i, 10) }),
		rapid.Map(rapid.Int64Range(0, 20), func(i int64) string { return strconv.FormatInt(i, 10) }),
		rapid.Map(rapid.Float64(), func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }),
	).Draw(t, label)
}

func drawType(t *rapid.T) string {
	return rapid.SampledFrom([]string{"MostAllocated", "LeastAllocated", "Spread", "7"}).Draw(t, "type")
}

// optional joins the fields a draw keeps, in flow style.
func optional(t *rapid.T, fields ...string) string {
	var kept []string
	for i, f := range fields {
		if rapid.Bool().Draw(t, fmt.Sprintf("keep %d", i)) {
			kept = append(kept, f)
		}
	}
	return "{" + strings.Join(kept, ", ") + "}"
}

func typedResources(t *rapid.T) string {
	return optional(t,
		fmt.Sprintf("nvidia.com/gpu: {type: %s, weight: %s}", drawType(t), drawNumber(t, "gpu weight")),
		fmt.Sprintf("cpu: {type: %s, weight: %s}", drawType(t), drawNumber(t, "cpu weight")),
		fmt.Sprintf("memory: {type: %s}", drawType(t)))
}

func rsfArgs(t *rapid.T) string {
	sra := rapid.SampledFrom([]string{
		"",
		fmt.Sprintf("sra: {enable: true, resources: nvidia.com/gpu, weight: %s, resourceWeight: {nvidia.com/gpu: %s}}", drawNumber(t, "sra weight"), drawNumber(t, "sra gpu")),
		fmt.Sprintf("sra.policy: retention, sra.resources: nvidia.com/gpu, sra.retention.weight: %s", drawNumber(t, "flat sra weight")),
		fmt.Sprintf("sra: {policy: 'retention, proportional', resources: nvidia.com/gpu, retention: {weight: %s}, proportional: {nvidia.com/gpu.cpu: %s}}", drawNumber(t, "nested weight"), drawNumber(t, "nested ratio")),
	}).Draw(t, "sra form")
	proportional := fmt.Sprintf("proportional: {enable: true, resources: nvidia.com/gpu, resourceProportion: {nvidia.com/gpu.cpu: %s, nvidia.com/gpu.memory: %s}}",
		drawNumber(t, "ratio cpu"), drawNumber(t, "ratio memory"))
	fields := []string{"resourceStrategyFitWeight: " + drawNumber(t, "rsf weight"), "resources: " + typedResources(t)}
	if sra != "" {
		fields = append(fields, sra)
	}
	if !strings.Contains(sra, "proportional") {
		fields = append(fields, proportional)
	}
	return optional(t, fields...)
}

func binpackArgs(t *rapid.T) string {
	return optional(t, "binpack.weight: "+drawNumber(t, "binpack weight"), "binpack.cpu: "+drawNumber(t, "binpack cpu"),
		"binpack.memory: "+drawNumber(t, "binpack memory"), "binpack.resources: nvidia.com/gpu",
		"binpack.resources.nvidia.com/gpu: "+drawNumber(t, "binpack gpu"))
}

func fitArgs(t *rapid.T) string {
	typ := rapid.SampledFrom([]string{"MostAllocated", "LeastAllocated", "RequestedToCapacityRatio"}).Draw(t, "kube type")
	shape := ""
	if typ == "RequestedToCapacityRatio" {
		shape = fmt.Sprintf(", requestedToCapacityRatio: {shape: [{utilization: 0, score: %s}, {utilization: %s, score: %s}]}",
			drawNumber(t, "s0"), drawNumber(t, "u1"), drawNumber(t, "s1"))
	}
	return fmt.Sprintf("{scoringStrategy: {type: %s, resources: [{name: cpu, weight: %s}, {name: nvidia.com/gpu, weight: %s}]%s}}",
		typ, drawNumber(t, "kube cpu"), drawNumber(t, "kube gpu"), shape)
}

func pluginArgs(t *rapid.T, name string) string {
	switch name {
	case ResourceStrategyFit:
		return rsfArgs(t)
	case Binpack:
		return binpackArgs(t)
	case NodeResourcesFit:
		return fitArgs(t)
	case NodeResourcesFitPlus:
		return "{resources: " + typedResources(t) + "}"
	case ScarceResourceAvoidance:
		return "{resources: [nvidia.com/gpu]}"
	case PackLeastUsed:
		return optional(t, fmt.Sprintf("resources: [{name: cpu, weight: %s}, {name: memory}]", drawNumber(t, "pack weight")),
			"untilEndsKnown: "+rapid.SampledFrom([]string{PackLeastUsed, NodeResourcesBalancedAllocation, "MostAllocated", "3"}).Draw(t, "until"))
	case Lifetime, LearnedLifetime:
		model := "model: " + optional(t, "window: "+drawNumber(t, "window"), "minSamples: "+drawNumber(t, "minSamples"), "quantile: "+drawNumber(t, "quantile"))
		if name == Lifetime {
			return optional(t, model, "ends: "+rapid.SampledFrom([]string{"all", "declared", "learned"}).Draw(t, "ends"))
		}
		return optional(t, model)
	case NodeOrder:
		return optional(t, "leastrequested.weight: "+drawNumber(t, "least"), "mostrequested.weight: "+drawNumber(t, "most"),
			"balancedresource.weight: "+drawNumber(t, "balanced"), "nodeaffinity.weight: "+drawNumber(t, "affinity"))
	}
	return fmt.Sprintf("{resources: [{name: cpu, weight: %s}, {name: memory}]}", drawNumber(t, "balanced weight"))
}

var plugins = []string{ResourceStrategyFit, Binpack, NodeOrder, NodeResourcesFit, NodeResourcesBalancedAllocation, PackLeastUsed, NodeResourcesFitPlus, ScarceResourceAvoidance, Lifetime, LearnedLifetime}

// drawConfig draws a configuration in one of the four dialects.
func drawConfig(t *rapid.T) string {
	var b strings.Builder
	switch rapid.IntRange(0, 3).Draw(t, "dialect") {
	case 0:
		b.WriteString("plugins:\n")
		for range rapid.IntRange(1, 3).Draw(t, "plugins") {
			name := rapid.SampledFrom(plugins).Draw(t, "plugin")
			fmt.Fprintf(&b, "- {name: %s, weight: %s, args: %s}\n", name, drawNumber(t, "plugin weight"), pluginArgs(t, name))
		}
	case 1:
		b.WriteString("tiers:\n- plugins:\n")
		for _, name := range []string{ResourceStrategyFit, Binpack, NodeOrder} {
			if rapid.Bool().Draw(t, "volcano "+name) {
				fmt.Fprintf(&b, "  - {name: %s, arguments: %s}\n", name, pluginArgs(t, name))
			}
		}
		b.WriteString("  - {name: gang}\n")
	case 2:
		b.WriteString("profiles:\n- plugins: {score: {enabled: [")
		var configs []string
		for i, name := range []string{NodeResourcesFit, NodeResourcesBalancedAllocation, NodeResourcesFitPlus, ScarceResourceAvoidance} {
			if i < 2 && !rapid.Bool().Draw(t, "configure "+name) {
				continue
			}
			if i >= 2 {
				if !rapid.Bool().Draw(t, "enable "+name) {
					continue
				}
				fmt.Fprintf(&b, "{name: %s, weight: %s}, ", name, drawNumber(t, "profile weight"))
			}
			configs = append(configs, fmt.Sprintf("{name: %s, args: %s}", name, pluginArgs(t, name)))
		}
		fmt.Fprintf(&b, "]}}\n  pluginConfig: [%s]\n", strings.Join(configs, ", "))
	case 3:
		b.WriteString("priorities:\n")
		fmt.Fprintf(&b, "- {name: MostRequestedPriority, weight: %s}\n", drawNumber(t, "policy weight"))
		fmt.Fprintf(&b, "- {name: RequestedToCapacityRatioPriority, weight: %s, argument: {requestedToCapacityRatioArguments: {shape: [{utilization: %s, score: %s}], resources: [{resource: cpu, weight: %s}]}}}\n",
			drawNumber(t, "rtcr weight"), drawNumber(t, "u"), drawNumber(t, "s"), drawNumber(t, "rtcr cpu"))
	}
	if rapid.Bool().Draw(t, "in a ConfigMap") {
		return "kind: ConfigMap\ndata:\n  config: |\n" + indent(b.String(), "    ")
	}
	return b.String()
}

// drawAmount draws an amount from the whole range a Vector holds.
func drawAmount(t *rapid.T, label string) int64 {
	return rapid.OneOf(
		rapid.Just(int64(0)),
		rapid.Just(resource.MaxAmount),
		rapid.Int64Range(1, 1<<20),
		rapid.Int64Range(0, resource.MaxAmount),
	).Draw(t, label)
}

// TestEveryLoadedConfigurationScoresInRange: over configurations of every
// dialect, in strict and compatibility mode, with weights from the whole
// int64 and float64 range: a configuration that loads builds a pipeline
// whose totals, on tables and tasks with extreme amounts (and Volcano
// annotation weights from the same range), are finite and in
// [0, MaxScore]; one that does not load fails with field errors, each with
// a path.
func TestEveryLoadedConfigurationScoresInRange(t *testing.T) {
	schema, _ := resource.NewSchema("cpu", "memory", "nvidia.com/gpu", "pods")
	rapid.Check(t, func(t *rapid.T) {
		doc := drawConfig(t)
		opts := Options{Compat: rapid.Bool().Draw(t, "compat")}
		c, err := Load([]byte(doc), opts)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) || len(ce.Errors) == 0 {
				t.Fatalf("%s\nfailed without field errors: %v", doc, err)
			}
			for _, fe := range ce.Errors {
				if fe.Path == "" || fe.Detail == "" {
					t.Fatalf("%s\nan error without a path or detail: %q", doc, fe.Error())
				}
			}
			return
		}
		p, err := c.Build(schema)
		if err != nil {
			t.Fatalf("%s\nloaded but did not build: %v", doc, err)
		}
		max := p.MaxScore()
		if !(max >= 0 && max <= scoring.MaxTotalScore) {
			t.Fatalf("%s\nMaxScore %v", doc, max)
		}
		nodes := resource.NewTable(schema, 4)
		for i := range rapid.IntRange(1, 4).Draw(t, "nodes") {
			alloc, used := make(resource.Vector, 4), make(resource.Vector, 4)
			for j := range alloc {
				alloc[j], used[j] = drawAmount(t, "alloc"), drawAmount(t, "used")
			}
			if _, err := nodes.Add(fmt.Sprint("n", i), alloc, used); err != nil {
				t.Fatal(err)
			}
		}
		req := make(resource.Vector, 4)
		for j := range req {
			req[j] = drawAmount(t, "request")
		}
		nonZero := append(resource.Vector(nil), req...)
		nonZero[0] = min(resource.MaxAmount, nonZero[0]+resource.DefaultMilliCPURequest)
		task := &scoring.Task{Name: "t", Requests: req, NonZeroRequests: nonZero}
		if rapid.Bool().Draw(t, "annotated") {
			o, err := strategy.ParseVolcanoAnnotations(schema, drawType(t), fmt.Sprintf(`{"cpu": %s, "nvidia.com/gpu": %s}`, drawNumber(t, "annotation cpu"), drawNumber(t, "annotation gpu")))
			if err != nil {
				o = strategy.ZeroOverride()
			}
			task.Override = o
		}
		b := p.NewBatch(nodes.Len())
		if err := p.Score(task, nodes, b); err != nil {
			t.Fatalf("%s\nScore: %v", doc, err)
		}
		for i := range b.Len() {
			if tot := b.Total(i); math.IsNaN(tot) || tot < 0 || tot > max {
				t.Fatalf("%s\nnode %d: total %v outside [0, %v]", doc, i, tot, max)
			}
		}
	})
}

// A loaded configuration written by Canonical loads back, in the same mode,
// to the same filters and scoring plugins (names aside: a Policy's
// MostRequestedPriority comes back as NodeResourcesFit).
func TestCanonicalLoadsBackToTheSameConfiguration(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		doc := drawConfig(t)
		opts := Options{Compat: rapid.Bool().Draw(t, "compat")}
		c, err := Load([]byte(doc), opts)
		if err != nil {
			return
		}
		text := c.Canonical()
		back, err := Load(text, opts)
		if err != nil {
			t.Fatalf("%s\nwritten as\n%s\ndoes not load back: %v", doc, text, err)
		}
		ignore := cmpopts.IgnoreFields(ScorerConfig{}, "Name", "Sources")
		if diff := cmp.Diff(c.Scorers, back.Scorers, ignore); diff != "" {
			t.Fatalf("%s\nwritten as\n%s\nscorers (-loaded +loaded back):\n%s", doc, text, diff)
		}
		if diff := cmp.Diff(filterViews(c), filterViews(back)); diff != "" {
			t.Fatalf("%s\nwritten as\n%s\nfilters (-loaded +loaded back):\n%s", doc, text, diff)
		}
	})
}

// filterViews are a configuration's filters as they run: name and the
// resources the fit check ignores.
func filterViews(c *Config) []NodeResourcesFitArgs {
	var out []NodeResourcesFitArgs
	for _, f := range c.Filters {
		a, _ := f.Args.(NodeResourcesFitArgs)
		out = append(out, NodeResourcesFitArgs{Type: f.Name, IgnoredResources: a.IgnoredResources, IgnoredResourceGroups: a.IgnoredResourceGroups})
	}
	return out
}
