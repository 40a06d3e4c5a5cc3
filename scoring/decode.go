package scoring

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// FieldError is one bad configuration value: where it is, what is wrong and
// what was found, as in
//
//	resources["nvidia.com/gpu"].weight: must be > 0, got -1
type FieldError struct {
	Path   string
	Detail string
	Value  any // nil when the value is missing
	hasVal bool
}

func (e *FieldError) Error() string {
	if !e.hasVal {
		return fmt.Sprintf("%s: %s", e.Path, e.Detail)
	}
	return fmt.Sprintf("%s: %s, got %s", e.Path, e.Detail, formatValue(e.Value))
}

// ConfigError lists every bad value found in one configuration.
type ConfigError struct {
	Errors []*FieldError
}

func (e *ConfigError) Error() string {
	msgs := make([]string, len(e.Errors))
	for i, fe := range e.Errors {
		msgs[i] = fe.Error()
	}
	return strings.Join(msgs, "\n")
}

func formatValue(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return fmt.Sprint(v)
}

// decoder walks decoded YAML/JSON, collecting errors (never stopping at the
// first) and, in compatibility mode, warnings for each value it changed.
type decoder struct {
	compat bool
	errs   []*FieldError
	warns  []string
}

func (d *decoder) fail(path, detail string, v any) {
	d.errs = append(d.errs, &FieldError{Path: path, Detail: detail, Value: v, hasVal: true})
}

func (d *decoder) missing(path, detail string) {
	d.errs = append(d.errs, &FieldError{Path: path, Detail: detail})
}

func (d *decoder) warn(format string, args ...any) {
	d.warns = append(d.warns, fmt.Sprintf(format, args...))
}

// lenient reports a bad value: an error in strict mode, a warning with the
// replacement in compatibility mode. It returns whether to go on with the
// replacement.
func (d *decoder) lenient(path, detail string, v any, replacement string) bool {
	if !d.compat {
		d.fail(path, detail, v)
		return false
	}
	d.warn("%s: %s, got %s; using %s as Volcano does", path, detail, formatValue(v), replacement)
	return true
}

func (d *decoder) err() error {
	if len(d.errs) == 0 {
		return nil
	}
	return &ConfigError{Errors: d.errs}
}

func join(path, child string) string {
	if path == "" {
		return child
	}
	return path + "." + child
}

func key(path, k string) string {
	return fmt.Sprintf("%s[%q]", path, k)
}

func index(path string, i int) string {
	return fmt.Sprintf("%s[%d]", path, i)
}

// object reads a JSON object; a missing (nil) value is an empty one.
func (d *decoder) object(path string, v any) (map[string]any, bool) {
	switch m := v.(type) {
	case nil:
		return map[string]any{}, true
	case map[string]any:
		return m, true
	}
	d.fail(path, "must be an object", v)
	return nil, false
}

func (d *decoder) list(path string, v any) ([]any, bool) {
	switch l := v.(type) {
	case nil:
		return nil, true
	case []any:
		return l, true
	}
	d.fail(path, "must be a list", v)
	return nil, false
}

func (d *decoder) str(path string, v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		d.fail(path, "must be a string", v)
	}
	return s, ok
}

// integer reads a whole number from any numeric form decoding produces.
func (d *decoder) integer(path string, v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, true
		}
		if f, err := x.Float64(); err == nil {
			return d.integer(path, f)
		}
	case float64:
		if x == math.Trunc(x) && math.Abs(x) <= 1<<53 {
			return int64(x), true
		}
		d.fail(path, "must be a whole number", v)
		return 0, false
	}
	d.fail(path, "must be a whole number", v)
	return 0, false
}

func (d *decoder) boolean(path string, v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		if b, err := strconv.ParseBool(x); err == nil {
			return b, true
		}
	}
	d.fail(path, "must be true or false", v)
	return false, false
}

// only reports keys of m not in allowed (after apiVersion and kind, which
// upstream args carry).
func (d *decoder) only(path string, m map[string]any, allowed ...string) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k == "apiVersion" || k == "kind" || contains(allowed, k) {
			continue
		}
		d.fail(key(path, k), "unknown field; known are "+strings.Join(allowed, ", "), m[k])
	}
}
