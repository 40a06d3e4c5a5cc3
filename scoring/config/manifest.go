package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	yaml "sigs.k8s.io/yaml/goyaml.v2"
)

// Files as users keep them: a configuration inside a ConfigMap (Volcano's
// volcano-scheduler-configmap, a KubeSchedulerConfiguration mounted into a
// scheduler's Deployment), or among other manifests in a multi-document
// YAML file.

// found is a scheduler configuration located in a file: where its root is
// (the root of every field path), a description for Config.Source, and its
// decoded body.
type found struct {
	root, source string
	body         yaml.MapSlice
}

// configKeys are the top-level fields that make a document a configuration
// resfit reads (see decode).
var configKeys = []string{"plugins", "tiers", "profiles", "priorities"}

// file locates the configuration in a YAML or JSON file: the document
// itself, the data key of a ConfigMap that holds one, or, in a file of
// several documents, the one document or ConfigMap data key that does. It
// sets d.root to the configuration's place and returns it as plain values.
func (d *decoder) file(data []byte) (map[string]any, string, bool) {
	docs, err := documents(data)
	if err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			d.missing(d.rootPath(), "the document must be an object (a mapping of fields)")
		} else {
			d.missing(d.rootPath(), "not YAML or JSON: "+err.Error())
		}
		return nil, "", false
	}
	var nonEmpty []int
	for i, doc := range docs {
		if doc != nil {
			nonEmpty = append(nonEmpty, i)
		}
	}
	var f found
	switch {
	case len(nonEmpty) <= 1:
		var doc yaml.MapSlice
		if len(nonEmpty) == 1 {
			doc = docs[nonEmpty[0]]
		}
		if kind, _ := field(doc, "kind").(string); kind != "ConfigMap" {
			f = found{body: doc}
			break
		}
		inner := configMapConfigs(doc, "")
		switch len(inner) {
		case 0:
			d.missing(d.at("data"), "no key of this ConfigMap holds a scheduler configuration (a document with "+strings.Join(configKeys, ", ")+"); its keys are "+dataKeys(doc))
			return nil, "", false
		case 1:
			f = inner[0]
		default:
			d.missing(d.at("data"), "several keys of this ConfigMap hold a scheduler configuration ("+roots(inner)+"); keep one")
			return nil, "", false
		}
	default:
		var all []found
		for _, i := range nonEmpty {
			doc, where := docs[i], fmt.Sprintf("(document %d)", i+1)
			if kind, _ := field(doc, "kind").(string); kind == "ConfigMap" {
				all = append(all, configMapConfigs(doc, where)...)
			} else if isConfig(doc) {
				all = append(all, found{root: where, source: where + " " + describe(doc), body: doc})
			}
		}
		switch len(all) {
		case 0:
			var seen []string
			for _, i := range nonEmpty {
				seen = append(seen, describe(docs[i]))
			}
			d.missing(d.rootPath(), fmt.Sprintf("none of the %d documents is a scheduler configuration or a ConfigMap holding one; found %s", len(nonEmpty), strings.Join(seen, ", ")))
			return nil, "", false
		case 1:
			f = all[0]
		default:
			d.missing(d.rootPath(), "several documents hold a scheduler configuration ("+roots(all)+"); keep one")
			return nil, "", false
		}
	}
	d.root, d.yamlInts = f.root, true
	return d.plainMap(d.root, f.body), f.source, true
}

// documents splits a YAML stream into its documents; an empty document is
// nil.
func documents(data []byte) ([]yaml.MapSlice, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []yaml.MapSlice
	for {
		var doc yaml.MapSlice
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			if len(docs) > 0 {
				err = fmt.Errorf("document %d: %w", len(docs)+1, err)
			}
			return nil, err
		}
		docs = append(docs, doc)
	}
}

// configMapConfigs returns the data keys of a ConfigMap that hold a
// configuration, each decoded; where places the ConfigMap in its file.
func configMapConfigs(cm yaml.MapSlice, where string) []found {
	data, _ := field(cm, "data").(yaml.MapSlice)
	var out []found
	for _, item := range data {
		k, ok1 := item.Key.(string)
		text, ok2 := item.Value.(string)
		if !ok1 || !ok2 {
			continue
		}
		var body yaml.MapSlice
		if yaml.Unmarshal([]byte(text), &body) != nil || !isConfig(body) {
			continue
		}
		root := key(join(where, "data"), k)
		source := fmt.Sprintf("%s, data[%q]", describe(cm), k)
		if where != "" {
			source = where + " " + source
		}
		out = append(out, found{root: root, source: source, body: body})
	}
	return out
}

// isConfig reports whether a document is a configuration resfit reads.
func isConfig(doc yaml.MapSlice) bool {
	if kind, _ := field(doc, "kind").(string); kind == "KubeSchedulerConfiguration" {
		return true
	}
	return slices.ContainsFunc(configKeys, func(k string) bool { return field(doc, k) != nil })
}

// field is a top-level field of a document (the first, if it repeats).
func field(doc yaml.MapSlice, k string) any {
	for _, item := range doc {
		if item.Key == k {
			return item.Value
		}
	}
	return nil
}

// describe names a manifest by kind, namespace and name.
func describe(doc yaml.MapSlice) string {
	kind, _ := field(doc, "kind").(string)
	if kind == "" {
		kind = "a document without kind"
	}
	meta, _ := field(doc, "metadata").(yaml.MapSlice)
	name, _ := field(meta, "name").(string)
	if ns, _ := field(meta, "namespace").(string); ns != "" && name != "" {
		name = ns + "/" + name
	}
	if name == "" {
		return kind
	}
	return kind + " " + name
}

func dataKeys(cm yaml.MapSlice) string {
	data, _ := field(cm, "data").(yaml.MapSlice)
	var keys []string
	for _, item := range data {
		keys = append(keys, fmt.Sprint(item.Key))
	}
	if keys == nil {
		return "none"
	}
	return strings.Join(keys, ", ")
}

func roots(fs []found) string {
	var rs []string
	for _, f := range fs {
		rs = append(rs, f.root)
	}
	return strings.Join(rs, ", ")
}
