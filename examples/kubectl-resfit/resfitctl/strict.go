package resfitctl

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	kres "k8s.io/apimachinery/pkg/api/resource"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// strictUnmarshal decodes JSON as the API server decodes what kubectl
// sends with strict field validation (sigs.k8s.io/json, as apimachinery's
// strict decoder): a field the type does not have, or one given twice, is
// an error naming the field by its path, prefixed by where (the first
// three, and how many more).
func strictUnmarshal(js []byte, v any, where string) error {
	strict, err := kjson.UnmarshalStrict(js, v, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		if path, value, ok := badQuantity(js, where); ok {
			return &strictFields{fmt.Sprintf("%s: %q is not a quantity (such as 500m, 2, 1.5Gi, 64Mi)", path, value)}
		}
		return errors.New(firstLine(err))
	}
	if len(strict) == 0 {
		return nil
	}
	var msgs []string
	for i, e := range strict {
		if i == 3 {
			msgs = append(msgs, fmt.Sprintf("and %d more", len(strict)-3))
			break
		}
		msg := e.Error()
		if where != "" {
			msg = strings.Replace(msg, `field "`, `field "`+where+".", 1)
		}
		msgs = append(msgs, msg)
	}
	return &strictFields{strings.Join(msgs, "; ")}
}

// yamlToJSON converts a YAML document to JSON as the API server reads YAML
// with strict field validation (kubectl's default): a key given twice in
// one mapping is an error naming its line, where a plain conversion keeps
// the last value (a pod with requests given twice would lose the first).
func yamlToJSON(data []byte) ([]byte, error) {
	js, err := yaml.YAMLToJSONStrict(data)
	if err == nil {
		return js, nil
	}
	rest, ok := strings.CutPrefix(err.Error(), "yaml: unmarshal errors:\n")
	if !ok {
		return nil, err
	}
	var msgs []string
	for _, line := range strings.Split(rest, "\n") {
		msgs = append(msgs, strings.Replace(strings.TrimSpace(line), "already set in map", "given twice in one mapping", 1))
	}
	return nil, errors.New(strings.Join(msgs, "; "))
}

// asWritten is an error about a pod's quantity (kubebridge.PodOf's: "pod
// ns/p: spec.containers[0].resources.requests[nvidia.com/gpu]: quantity
// "500m": ...") with the quantity as the document writes it ("0.5"), and
// without the pod's name, which the document's place says. A request the
// document does not write, defaulted from its limit
// (kubebridge.DefaultRequests), is named by that limit.
func asWritten(err error, js []byte) error {
	msg := err.Error()
	if _, rest, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, "pod ") {
		msg = rest
	}
	path, rest, ok := strings.Cut(msg, ": quantity ")
	if !ok {
		return errors.New(msg)
	}
	var doc any
	if json.Unmarshal(js, &doc) != nil {
		return errors.New(msg)
	}
	_, reason, ok := strings.Cut(rest, ": ")
	if !ok {
		return errors.New(msg)
	}
	if v := lookup(doc, path); v != nil {
		return fmt.Errorf("%s: quantity %q: %s", path, fmt.Sprint(v), reason)
	}
	limit := strings.Replace(path, ".requests[", ".limits[", 1)
	if v := lookup(doc, limit); v != nil && limit != path {
		return fmt.Errorf("%s: quantity %q: %s (a limit with no request is requested, as the API server defaults it)", limit, fmt.Sprint(v), reason)
	}
	return errors.New(msg)
}

// lookup is the value at a field path in a decoded JSON document, nil
// where there is none.
func lookup(doc any, path string) any {
	v := doc
	for _, part := range pathParts(path) {
		switch x := v.(type) {
		case map[string]any:
			v = x[part]
		case []any:
			var i int
			if _, err := fmt.Sscan(part, &i); err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// pathParts splits a field path (spec.containers[0].resources.requests[
// nvidia.com/gpu]) into its fields, indices and keys; a key in brackets
// may hold dots.
func pathParts(path string) []string {
	var parts []string
	for path != "" {
		switch path[0] {
		case '.':
			path = path[1:]
		case '[':
			key, rest, _ := strings.Cut(path[1:], "]")
			parts, path = append(parts, key), rest
		default:
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			parts, path = append(parts, path[:end]), path[end:]
		}
	}
	return parts
}

// badQuantity finds, in a document that did not decode, the first string
// under a field of quantities (resources' requests and limits, a node's
// capacity and allocatable, a pod's overhead) that is not a quantity: its
// path (from where) and what it holds, as written. apimachinery's message
// gives neither, only the regular expression.
func badQuantity(js []byte, where string) (path, value string, ok bool) {
	var doc any
	if json.Unmarshal(js, &doc) != nil {
		return "", "", false
	}
	quantities := map[string]bool{"requests": true, "limits": true, "capacity": true, "allocatable": true, "overhead": true}
	var walk func(v any, path string, inQuantities bool) bool
	walk = func(v any, at string, inQuantities bool) bool {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				sub := at + "." + k
				if inQuantities {
					sub = at + "[" + k + "]"
				}
				if s, isString := x[k].(string); inQuantities && isString {
					if _, err := kres.ParseQuantity(s); err != nil {
						path, value = strings.TrimPrefix(sub, "."), s
						return true
					}
					continue
				}
				if walk(x[k], sub, !inQuantities && quantities[k]) {
					return true
				}
			}
		case []any:
			for i, e := range x {
				if walk(e, fmt.Sprintf("%s[%d]", at, i), false) {
					return true
				}
			}
		}
		return false
	}
	start := ""
	if where != "" {
		start = "." + where
	}
	return path, value, walk(doc, start, false)
}

// strictFields is strictUnmarshal's error that names its fields by their
// paths: fields unknown or given twice (the value decoded otherwise), a
// value that is not a quantity.
type strictFields struct{ msg string }

func (e *strictFields) Error() string { return e.msg }
