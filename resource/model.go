package resource

import (
	"fmt"
	"slices"
	"strings"
)

// A device model names a kind of device, such as a GPU product: "V100M32",
// "A10", "NVIDIA-A100-SXM4-80GB". It has the form of a Kubernetes label
// value (what NVIDIA's GPU feature discovery puts in nvidia.com/gpu.product):
// at most 63 letters, digits, '-', '_' and '.', starting and ending with a
// letter or digit. "" is a node whose model is not known.

// ValidateModel checks a device model name ("" is allowed: unknown).
func ValidateModel(model string) error {
	if model == "" {
		return nil
	}
	if err := validateLocalName(model); err != nil {
		return fmt.Errorf("device model %q: %s", model, err)
	}
	return nil
}

// ModelSet is the device models a task accepts, in canonical form: sorted,
// without duplicates, joined by "|" (openb's gpu_spec form). The empty set
// accepts every model, an unknown one included. A ModelSet is a plain
// string, so it can be compared and used as a map key.
type ModelSet string

// ParseModelSet reads a set written as models separated by "|" or ",",
// spaces around each ignored: "V100M16|V100M32", "A10, T4". An empty or
// blank text is the empty set (any model).
func ParseModelSet(text string) (ModelSet, error) {
	fields := strings.FieldsFunc(text, func(r rune) bool { return r == '|' || r == ',' })
	var names []string
	for _, f := range fields {
		name := strings.TrimSpace(f)
		if name == "" {
			continue
		}
		if err := validateLocalName(name); err != nil {
			return "", fmt.Errorf("device models %q: model %q: %s", text, name, err)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return ModelSet(strings.Join(slices.Compact(names), "|")), nil
}

// Accepts reports whether a device of the model may serve the task: always
// for the empty set, else when the model is one of the set's (an unknown
// model, "", is not).
func (s ModelSet) Accepts(model string) bool {
	if s == "" {
		return true
	}
	rest := string(s)
	for rest != "" {
		var name string
		name, rest, _ = strings.Cut(rest, "|")
		if name == model {
			return true
		}
	}
	return false
}

// Rejection says why a device of the model may not serve the task, naming
// the device resource ("nvidia.com/gpu model P100 is not one the task
// accepts (V100M16, V100M32)"), or "" when the set accepts it.
func (s ModelSet) Rejection(device, model string) string {
	switch {
	case s.Accepts(model):
		return ""
	case model == "":
		return fmt.Sprintf("%s model unknown; the task accepts only %s", device, strings.Join(s.Names(), ", "))
	}
	return fmt.Sprintf("%s model %s is not one the task accepts (%s)", device, model, strings.Join(s.Names(), ", "))
}

// Names returns the set's models, sorted (nil for the empty set).
func (s ModelSet) Names() []string {
	if s == "" {
		return nil
	}
	return strings.Split(string(s), "|")
}

// Where Kubernetes objects state GPU models. A node's model is the label
// NVIDIA's GPU feature discovery sets (nvidia.com/gpu.product), or else
// the one Koordinator's koordlet sets. A pod states the models it accepts
// with resfit's annotation, exact names as ParseModelSet reads them, and
// with HAMi's pair, which Volcano's vGPU device plugin reads too: a comma
// list of texts a model must contain to be used, and one of texts that
// exclude a model, both compared without regard to case (a space in a
// text matches the '-' that GPU feature discovery puts in its place).
const (
	GPUProductLabel          = "nvidia.com/gpu.product"
	KoordinatorGPUModelLabel = "node.koordinator.sh/gpu-model"
	GPUModelsAnnotation      = "resfit.io/gpu-models"
	UseGPUTypeAnnotation     = "nvidia.com/use-gputype"
	NoUseGPUTypeAnnotation   = "nvidia.com/nouse-gputype"
)

// NodeModel returns a node's GPU model from its labels: GPUProductLabel,
// else KoordinatorGPUModelLabel; "" (unknown) when neither is set or the
// value is not a valid model name.
func NodeModel(labels map[string]string) string {
	for _, key := range []string{GPUProductLabel, KoordinatorGPUModelLabel} {
		if m := labels[key]; m != "" {
			if ValidateModel(m) != nil {
				return ""
			}
			return m
		}
	}
	return ""
}

// AcceptedModels returns the GPU models a pod accepts, from its
// annotations, among the models of the cluster's nodes (as NodeModel
// reads them; "" entries are ignored). Every annotation the pod has
// narrows the set: GPUModelsAnnotation to its names, UseGPUTypeAnnotation
// to the models containing one of its texts, NoUseGPUTypeAnnotation to
// those containing none of its texts. A pod without them accepts any
// model (the empty set). The annotations are written by the pod's
// author, so they are untrusted: a name that is not a valid model, more
// than MaxModelTexts texts, or annotations that leave no model of the
// cluster are errors that say which annotation is at fault. Unlike HAMi,
// a node whose model is not known serves only pods that accept any model.
func AcceptedModels(annotations map[string]string, clusterModels []string) (ModelSet, error) {
	exact, hasExact := annotations[GPUModelsAnnotation]
	use, hasUse := annotations[UseGPUTypeAnnotation]
	nouse, hasNoUse := annotations[NoUseGPUTypeAnnotation]
	if !hasExact && !hasUse && !hasNoUse {
		return "", nil
	}
	var names ModelSet
	if hasExact {
		var err error
		if names, err = ParseModelSet(exact); err != nil {
			return "", fmt.Errorf("annotation %s: %w", GPUModelsAnnotation, err)
		}
	}
	useTexts, err := modelTexts(UseGPUTypeAnnotation, use)
	if err != nil {
		return "", err
	}
	nouseTexts, err := modelTexts(NoUseGPUTypeAnnotation, nouse)
	if err != nil {
		return "", err
	}
	var accepted []string
	for _, m := range clusterModels {
		if m == "" || (names != "" && !names.Accepts(m)) {
			continue
		}
		upper := strings.ToUpper(m)
		if len(useTexts) > 0 && !slices.ContainsFunc(useTexts, func(t string) bool { return strings.Contains(upper, t) }) {
			continue
		}
		if slices.ContainsFunc(nouseTexts, func(t string) bool { return strings.Contains(upper, t) }) {
			continue
		}
		accepted = append(accepted, m)
	}
	if len(accepted) == 0 {
		if names != "" && len(useTexts) == 0 && len(nouseTexts) == 0 {
			// Only exact names: no node has them yet, and none can serve
			// the pod, which the set says as it is.
			return names, nil
		}
		return "", fmt.Errorf("annotations %s: no GPU model of the cluster (%s) is left", statedAnnotations(hasExact, hasUse, hasNoUse), strings.Join(DistinctModels(clusterModels), ", "))
	}
	slices.Sort(accepted)
	return ModelSet(strings.Join(slices.Compact(accepted), "|")), nil
}

// MaxModelTexts bounds the texts of one use-gputype or nouse-gputype
// annotation.
const MaxModelTexts = 64

// modelTexts reads a comma list of texts, upper-cased, blanks dropped.
func modelTexts(annotation, text string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(text, ",") {
		f = strings.ReplaceAll(strings.TrimSpace(f), " ", "-")
		if f == "" {
			continue
		}
		if len(out) == MaxModelTexts {
			return nil, fmt.Errorf("annotation %s: more than %d texts", annotation, MaxModelTexts)
		}
		if err := validateLocalName(f); err != nil {
			return nil, fmt.Errorf("annotation %s: %q: %s", annotation, f, err)
		}
		out = append(out, strings.ToUpper(f))
	}
	return out, nil
}

func statedAnnotations(exact, use, nouse bool) string {
	var keys []string
	for _, k := range []struct {
		on  bool
		key string
	}{{exact, GPUModelsAnnotation}, {use, UseGPUTypeAnnotation}, {nouse, NoUseGPUTypeAnnotation}} {
		if k.on {
			keys = append(keys, k.key)
		}
	}
	return strings.Join(keys, " and ")
}

// DistinctModels returns the models, "" dropped, sorted, each once: a
// cluster's models from its nodes' (NodeModel).
func DistinctModels(models []string) []string {
	out := slices.DeleteFunc(slices.Clone(models), func(m string) bool { return m == "" })
	slices.Sort(out)
	return slices.Compact(out)
}
