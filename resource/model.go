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

// Names returns the set's models, sorted (nil for the empty set).
func (s ModelSet) Names() []string {
	if s == "" {
		return nil
	}
	return strings.Split(string(s), "|")
}
