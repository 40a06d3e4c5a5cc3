package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	// The YAML engine behind sigs.k8s.io/yaml, through that module's own
	// re-export: decoding into a MapSlice keeps each mapping's keys in order
	// and twice if they appear twice, which a conversion to JSON loses.
	yaml "sigs.k8s.io/yaml/goyaml.v2"

	"github.com/resfit/resfit/resource"
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
		return fmt.Sprintf("%s: %s", clip(e.Path), e.Detail)
	}
	return fmt.Sprintf("%s: %s, got %s", clip(e.Path), e.Detail, formatValue(e.Value))
}

// maxEcho is the most of a value or a path a message repeats: a
// configuration is untrusted, and a value of megabytes under a wrong key
// would be echoed whole.
const maxEcho = 200

// clip is s, or its first maxEcho bytes (whole runes) and how long it is.
func clip(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	return fmt.Sprintf("%s… (%d bytes)", runeCut(s), len(s))
}

// runeCut is the longest start of s of at most maxEcho bytes that ends
// between runes.
func runeCut(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	cut := maxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// maxErrors is the most errors ConfigError.Error lists; it says how many
// more there are.
const maxErrors = 100

// ConfigError lists every bad value found in one configuration.
type ConfigError struct {
	Errors []*FieldError
}

func (e *ConfigError) Error() string {
	return strings.Join(e.Lines(), "\n")
}

// Lines are the errors' messages, one a line, at most maxErrors of them
// and a last line saying how many more there are.
func (e *ConfigError) Lines() []string {
	msgs := make([]string, 0, min(len(e.Errors), maxErrors+1))
	for _, fe := range e.Errors[:min(len(e.Errors), maxErrors)] {
		msgs = append(msgs, fe.Error())
	}
	if n := len(e.Errors) - maxErrors; n > 0 {
		msgs = append(msgs, fmt.Sprintf("and %d more", n))
	}
	return msgs
}

func formatValue(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > maxEcho {
			return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(runeCut(x)), len(x))
		}
		return strconv.Quote(x)
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case nil:
		return "null"
	case map[string]any, yaml.MapSlice:
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
	// root is the path of the document's root: empty, or where the
	// configuration sits in the file (a ConfigMap's data key).
	root string
	// yamlInts is set when the document was decoded from YAML text, where
	// 2 and 2.0 decode to different types, as in Volcano's own decoder.
	yamlInts bool
	// notes collects, while one plugin's arguments are decoded, where each
	// value was read (see note).
	notes map[string]string
	errs  []*FieldError
	warns []string
}

// at is the path of a top-level field.
func (d *decoder) at(field string) string { return join(d.root, field) }

// rootPath names the document's root in a message.
func (d *decoder) rootPath() string {
	if d.root == "" {
		return "(root)"
	}
	return d.root
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

// under is a path below parent: rel as child built it from parent "".
func under(parent, rel string) string {
	switch {
	case rel == "":
		return parent
	case strings.HasPrefix(rel, "["):
		return parent + rel
	}
	return join(parent, rel)
}

// note records where the value at rel (a path below the plugin's
// arguments, built with child and index as Canonical builds it) was read.
func (d *decoder) note(rel, source string) {
	if d.notes != nil {
		d.notes[under("args", rel)] = d.displayPath(source)
	}
}

// displayPath is a path as a message shows it.
func (d *decoder) displayPath(path string) string {
	if path == "" {
		return d.rootPath()
	}
	return path
}

// child is the path of a mapping's key when the decoder does not yet know
// whether the key is a field (joined with a dot) or a name (quoted).
func child(path, k string) string {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return key(path, k)
		}
	}
	if k == "" {
		return key(path, k)
	}
	return join(path, k)
}

// document reads a YAML or JSON document (YAML 1.1, as Kubernetes' and
// Volcano's own readers do) into plain values: map[string]any, []any,
// string, bool, nil and the numbers int, int64, uint64 and float64. It
// checks what a conversion to JSON used to hide, each with its path: a key
// that is not a string is an error (scalar keys become strings, as
// sigs.k8s.io/yaml makes them); a key that appears twice in one mapping is
// an error in strict mode, and in compatibility mode the last value wins,
// as in every YAML decoder Volcano and Kubernetes use, with a warning;
// .nan and .inf stay numbers, for the field that reads them to refuse.
func (d *decoder) document(data []byte) (map[string]any, bool) {
	var root yaml.MapSlice
	if err := yaml.Unmarshal(data, &root); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			d.missing(d.rootPath(), "the document must be an object (a mapping of fields)")
		} else {
			d.missing(d.rootPath(), "not YAML or JSON: "+err.Error())
		}
		return nil, false
	}
	d.yamlInts = true
	return d.plainMap(d.root, root), true
}

func (d *decoder) plainMap(path string, ms yaml.MapSlice) map[string]any {
	m := make(map[string]any, len(ms))
	for _, item := range ms {
		k, ok := d.mapKey(path, item.Key)
		if !ok {
			continue
		}
		kpath := child(path, k)
		if first, dup := m[k]; dup {
			detail := fmt.Sprintf("the key appears twice in one mapping (first %s, then %s)", formatValue(first), formatValue(item.Value))
			if !d.compat {
				d.missing(kpath, detail)
				continue
			}
			d.warn("%s: %s; using the last, as YAML decoders do", kpath, detail)
		}
		m[k] = d.plain(kpath, item.Value)
	}
	return m
}

func (d *decoder) plain(path string, v any) any {
	switch x := v.(type) {
	case yaml.MapSlice:
		return d.plainMap(path, x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = d.plain(index(path, i), e)
		}
		return out
	}
	return v
}

// mapKey turns a mapping key into a string as sigs.k8s.io/yaml does for
// scalars; null, a list or a mapping as a key is an error.
func (d *decoder) mapKey(path string, k any) (string, bool) {
	switch x := k.(type) {
	case string:
		return x, true
	case int, int64, uint64, bool:
		return fmt.Sprint(x), true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	}
	where := path
	if where == "" {
		where = d.rootPath()
	}
	d.fail(where, "a mapping key must be a string", k)
	return "", false
}

// floatText shows a YAML float as written: 2.0 stays 2.0.
type floatText float64

func (f floatText) String() string {
	s := strconv.FormatFloat(float64(f), 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") { // not a fraction, exponent, NaN or Inf
		s += ".0"
	}
	return s
}

// number is a decoded number: exactly, as an int64, when it is a whole
// number that fits; otherwise as a float64 (a fraction, NaN, ±Inf, or a
// whole number beyond int64).
type number struct {
	i     int64
	f     float64
	isInt bool
}

// numberOf reads the numbers decoding produces: YAML's int, int64, uint64
// and float64, encoding/json's float64 and json.Number.
func numberOf(v any) (number, bool) {
	switch x := v.(type) {
	case int:
		return number{i: int64(x), isInt: true}, true
	case int32:
		return number{i: int64(x), isInt: true}, true
	case int64:
		return number{i: x, isInt: true}, true
	case uint64:
		if x <= math.MaxInt64 {
			return number{i: int64(x), isInt: true}, true
		}
		return number{f: float64(x)}, true
	case float64:
		if x == math.Trunc(x) && x >= -(1<<63) && x < 1<<63 {
			return number{i: int64(x), isInt: true}, true
		}
		return number{f: x}, true
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return number{i: i, isInt: true}, true
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return number{}, false
		}
		return numberOf(f) // ±Inf when out of float64's range
	}
	return number{}, false
}

// intRule is how Volcano reads an integer argument, which compatibility
// mode reproduces for a number with a fraction.
type intRule uint8

const (
	// strictInt: kube-scheduler's and Koordinator's decoders, and resfit's
	// own forms, refuse a fraction in both modes.
	strictInt intRule = iota
	// truncatedInt: Volcano's framework.Get decodes with mapstructure,
	// which truncates a float toward zero (7.9 → 7).
	truncatedInt
	// ignoredInt: Volcano's Arguments.GetInt ignores a value that is not an
	// int, keeping the default.
	ignoredInt
)

// whole reads a whole number. A whole number beyond int64 saturates, so
// that the caller's range check reports it with its value. ok is false when
// there is nothing to use: an error was recorded, or compatibility mode
// keeps the default as Volcano does.
func (d *decoder) whole(path string, v any, rule intRule) (int64, bool) {
	if f, isFloat := v.(float64); isFloat && f == math.Trunc(f) && rule == ignoredInt && d.yamlInts {
		// Arguments.GetInt takes only what YAML decodes as an int: 2.0 is
		// a float, ignored even though it is whole.
		if d.compat {
			d.warn("%s: %s is not written as an integer; Volcano ignores it and keeps the default", path, floatText(v.(float64)))
		} else {
			d.fail(path, "must be written as an integer (Volcano ignores any other number and keeps the default)", floatText(v.(float64)))
		}
		return 0, false
	}
	n, isNum := numberOf(v)
	switch {
	case !isNum || math.IsNaN(n.f) || math.IsInf(n.f, 0):
		d.fail(path, "must be a whole number", v)
		return 0, false
	case n.isInt:
		return n.i, true
	case n.f == math.Trunc(n.f):
		if n.f > 0 {
			return math.MaxInt64, true
		}
		return math.MinInt64, true
	}
	if d.compat && rule == truncatedInt {
		t := int64(n.f) // |n.f| < 2^63 here: larger floats are whole
		d.warn("%s: %s is not a whole number; using %d, as Volcano's argument decoder truncates it", path, formatValue(v), t)
		return t, true
	}
	if d.compat && rule == ignoredInt {
		d.warn("%s: %s is not a whole number; Volcano ignores it and keeps the default", path, formatValue(v))
		return 0, false
	}
	d.fail(path, "must be a whole number", v)
	return 0, false
}

// weight reads a whole-number weight and holds it to resource.MaxWeight:
// above it is an error, or in compatibility mode the bound with a warning.
// The lower bound, which differs from field to field, is the caller's.
func (d *decoder) weight(path string, v any, rule intRule) (int64, bool) {
	w, ok := d.whole(path, v, rule)
	if !ok || w <= resource.MaxWeight {
		return w, ok
	}
	if !d.compat {
		d.fail(path, fmt.Sprintf("must be at most %d, the bound on every weight (it keeps sums exact)", resource.MaxWeight), v)
		return 0, false
	}
	d.warn("%s: %s is above %d, the bound on every weight; using %d", path, formatValue(v), resource.MaxWeight, resource.MaxWeight)
	return resource.MaxWeight, true
}

// boolean reads true or false, or a string strconv.ParseBool reads.
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

// number reads a finite number.
func (d *decoder) number(path string, v any) (float64, bool) {
	n, ok := numberOf(v)
	if !ok {
		d.fail(path, "must be a number", v)
		return 0, false
	}
	if n.isInt {
		return float64(n.i), true
	}
	if math.IsNaN(n.f) || math.IsInf(n.f, 0) {
		d.fail(path, "must be a finite number", v)
		return 0, false
	}
	return n.f, true
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

// fieldRule is how Volcano matches an object's keys to the fields it reads,
// which compatibility mode reproduces.
type fieldRule uint8

const (
	// strictFields: an unknown key is an error in both modes
	// (kube-scheduler's and Koordinator's decoders are strict, and so are
	// resfit's own forms).
	strictFields fieldRule = iota
	// volcanoKeys: Volcano looks its keys up by exact name and ignores the
	// rest (a plugin's top-level arguments).
	volcanoKeys
	// volcanoStruct: Volcano decodes the object with mapstructure, which
	// ignores unknown keys and matches a field's name in any case.
	volcanoStruct
)

// only checks m's keys against the known fields (apiVersion and kind,
// which upstream args carry, are always allowed) and returns the object to
// read. An unknown key is an error, except in compatibility mode under a
// Volcano rule, where it is dropped (or, under volcanoStruct, renamed to
// the field it matches but for case), with a warning.
func (d *decoder) only(path string, m map[string]any, rule fieldRule, known ...string) map[string]any {
	lenient := d.compat && rule != strictFields
	out, copied := m, false
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k == "apiVersion" || k == "kind" || slices.Contains(known, k) {
			continue
		}
		if !lenient {
			d.fail(key(path, k), "unknown field; known are "+strings.Join(known, ", "), m[k])
			continue
		}
		if !copied { // the caller's map stays as it was
			out, copied = maps.Clone(m), true
		}
		delete(out, k)
		if rule == volcanoStruct {
			if i := slices.IndexFunc(known, func(f string) bool { return strings.EqualFold(f, k) }); i >= 0 {
				if _, taken := m[known[i]]; !taken {
					out[known[i]] = m[k]
					d.warn("%s: read as %s, as Volcano matches field names in any case", key(path, k), known[i])
					continue
				}
			}
		}
		d.warn("%s: unknown field, ignored as Volcano ignores it (known are %s)", key(path, k), strings.Join(known, ", "))
	}
	return out
}
