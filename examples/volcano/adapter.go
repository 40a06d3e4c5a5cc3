// Package volcano runs resfit as Volcano's resource-strategy-fit scheduler
// plugin.
//
// Everything that does not touch Volcano's types is here and tested
// everywhere: decoding the plugin arguments exactly as Volcano hands them
// over (parsed by yaml.v2, every dialect resfit reads), and filling resfit's
// vectors from Volcano's amounts (milli-cpu, bytes and milli-units, as
// float64) without allocating. The glue that implements Volcano's
// framework.Plugin is in plugin.go, built with -tags volcano against a
// Volcano source tree by check.sh.
package volcano

import (
	"fmt"
	"math"
	"slices"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring/config"
	"github.com/resfit/resfit/sra"
	"github.com/resfit/resfit/strategy"
)

// PluginName is the plugin's name in volcano-scheduler.conf.
const PluginName = "resource-strategy-fit"

// Config is the plugin's decoded configuration.
type Config struct {
	// Scoring builds the node-order pipeline (resource-strategy-fit and,
	// when configured, sra retention).
	Scoring *config.Config
	// Proportional holds the sra proportional ratios; nil when off.
	Proportional []sra.Ratio
	// Warnings are the values compatibility mode changed.
	Warnings []string
}

// Decode reads the plugin's arguments as Volcano passes them (a
// framework.Arguments, that is a map[string]interface{} from yaml.v2 with
// nested map[interface{}]interface{}). With compat, it does what Volcano
// does with bad values, and warns; without, bad values are errors.
func Decode(arguments map[string]any, compat bool) (*Config, error) {
	doc, ok := normalize(arguments).(map[string]any)
	if !ok {
		doc = map[string]any{}
	}
	args, warnings, err := config.DecodeArgs(PluginName, doc, config.Options{Compat: compat})
	if err != nil {
		return nil, err
	}
	rsf := args.(config.ResourceStrategyFitArgs)
	proportional := rsf.Proportional
	rsf.Proportional = nil // the predicate is registered separately
	return &Config{
		Scoring:      &config.Config{Scorers: []config.ScorerConfig{{Name: PluginName, Weight: 1, Args: rsf}}},
		Proportional: proportional,
		Warnings:     warnings,
	}, nil
}

// normalize turns yaml.v2's map[interface{}]interface{} into
// map[string]any, recursively.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	}
	return v
}

// Fill writes a Volcano resource amount into dst (one amount per schema
// slot): milliCPU in millicores, memory in bytes, scalars in milli-units —
// resfit's canonical units — rounded to whole units and clamped to
// [0, resource.MaxAmount]. scalars is Volcano's ScalarResources map as it
// is (any string key type). Resources outside the schema are ignored. It
// does not allocate.
func Fill[K ~string](schema *resource.Schema, dst resource.Vector, milliCPU, memory float64, scalars map[K]float64) {
	clear(dst)
	set := func(name string, v float64) {
		if i, ok := schema.Slot(name); ok {
			dst[i] = clampAmount(v)
		}
	}
	set(resource.CPU, milliCPU)
	set(resource.Memory, memory)
	for name, v := range scalars {
		set(string(name), v)
	}
}

func clampAmount(v float64) int64 {
	switch {
	case !(v > 0): // NaN too
		return 0
	case v >= float64(resource.MaxAmount):
		return resource.MaxAmount
	}
	return int64(math.Round(v))
}

// Schema lists cpu, memory, and every scalar resource of the nodes (the
// scalars of a task not on any node cannot be scored, so they are left
// out), scalars sorted.
func Schema[K ~string](nodeScalars []map[K]float64) (*resource.Schema, error) {
	seen := map[string]bool{resource.CPU: true, resource.Memory: true}
	var rest []string
	for _, m := range nodeScalars {
		for k := range m {
			if n := string(k); !seen[n] && resource.ValidateName(n) == nil {
				seen[n] = true
				rest = append(rest, n)
			}
		}
	}
	slices.Sort(rest)
	return resource.NewSchema(append([]string{resource.CPU, resource.Memory}, rest...)...)
}

// Override reads a task's volcano.sh/resource-strategy-* annotations; an
// unusable pair scores the task 0 everywhere, as Volcano does.
func Override(schema *resource.Schema, annotations map[string]string) *strategy.Override {
	o, err := strategy.ParseVolcanoAnnotations(schema,
		annotations["volcano.sh/resource-strategy-scoring-type"], annotations["volcano.sh/resource-strategy-weight"])
	if err != nil {
		return strategy.ZeroOverride()
	}
	return o
}

// GPU models. A node's model is its label (resource.NodeModel: GPU feature
// discovery's nvidia.com/gpu.product, else Koordinator's); a task accepts
// the models its pod's annotations leave (resource.AcceptedModels:
// resfit.io/gpu-models, or nvidia.com/use-gputype and
// nvidia.com/nouse-gputype, which Volcano's vGPU device plugin reads for
// vGPU requests and this predicate applies to whole GPUs too).

// gpuRequests are the resources whose request makes a task's GPU models
// matter.
var gpuRequests = []string{"nvidia.com/gpu", "volcano.sh/vgpu-number"}

// AsksForGPUs reports whether a task's scalar requests include a GPU.
func AsksForGPUs[K ~string](scalars map[K]float64) bool {
	for _, name := range gpuRequests {
		if scalars[K(name)] > 0 {
			return true
		}
	}
	return false
}

// ClusterModels lists the GPU models of the nodes, given their labels,
// sorted, each once.
func ClusterModels(nodeLabels []map[string]string) []string {
	models := make([]string, len(nodeLabels))
	for i, labels := range nodeLabels {
		models[i] = resource.NodeModel(labels)
	}
	return resource.DistinctModels(models)
}

// ModelReason says why a node may not serve a task that asks for GPUs,
// given the models the task accepts (AcceptedModels' result and error for
// its pod's annotations): the annotations' error, or the node's model not
// being one of them; "" when it may.
func ModelReason(accepted resource.ModelSet, acceptErr error, nodeLabels map[string]string) string {
	if acceptErr != nil {
		return acceptErr.Error()
	}
	return accepted.Rejection("nvidia.com/gpu", resource.NodeModel(nodeLabels))
}
