package config

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// What resfit understood: a Config written back in resfit's own form, every
// default filled in, each value commented with where it was read.

// Canonical writes the configuration in resfit's own form (YAML): the
// filters, then each scoring plugin by the name resfit's form knows it
// (a legacy Policy's MostRequestedPriority is NodeResourcesFit with
// MostAllocated, for example) with its weight and every argument, defaults
// included. A comment after each value says where it came from: its field
// path in the document Load read, or "default". Load reads the result back
// to an equal configuration; one that compatibility mode changed may need
// Compat again (a weight 0 Volcano accepts, for example).
func (c *Config) Canonical() []byte {
	var b bytes.Buffer
	b.WriteString("# resfit configuration")
	if c.Source != "" {
		b.WriteString(", read from " + c.Source)
	}
	b.WriteString("\n")
	emit(&b, c.nodes(), 0)
	return b.Bytes()
}

// nodes is the configuration in resfit's own form, commented.
func (c *Config) nodes() []yamlNode {
	var filters []yamlNode
	for _, f := range c.Filters {
		args, _ := f.Args.(NodeResourcesFitArgs)
		if len(args.IgnoredResources) == 0 && len(args.IgnoredResourceGroups) == 0 {
			filters = append(filters, yamlNode{scalar: f.Name, comment: f.Source})
			continue
		}
		filters = append(filters, yamlNode{comment: f.Source, items: []yamlNode{
			{key: "name", scalar: f.Name},
			{key: "args", items: ignoredNodes(args)},
		}})
	}
	top := []yamlNode{{key: "filters", seq: true, items: filters}}
	if c.NoHostDeviceShare {
		top = append(top, yamlNode{key: "hostDeviceShare", scalar: false, comment: "only the plugins filter, as in a kube-scheduler profile"})
	}
	var plugins []yamlNode
	for _, s := range c.Scorers {
		src := func(field string) string {
			if v, ok := s.Sources[field]; ok {
				return v
			}
			return "default"
		}
		p := []yamlNode{
			{key: "name", scalar: s.Args.plugin(), comment: s.Sources[""]},
			{key: "weight", scalar: s.Weight, comment: src("weight")},
		}
		if s.ScoresOff {
			p = append(p, yamlNode{key: "scores", scalar: false, comment: src("scores")})
		}
		if s.FiltersOff {
			p = append(p, yamlNode{key: "filters", scalar: false, comment: src("filters")})
		}
		args := s.Args.canonical()
		if _, nested := s.Args.(KubePluginArgs); nested {
			p = append(p, yamlNode{key: "kubeScheduler", scalar: true, comment: "scored 0-100 as resfit's kube-scheduler plugin " + s.Args.plugin()})
		} else {
			comment(args, "args", s.Sources, false)
		}
		p = append(p, yamlNode{key: "args", items: args})
		plugins = append(plugins, yamlNode{items: p})
	}
	return append(top, yamlNode{key: "plugins", seq: true, items: plugins})
}

// String is Canonical as text.
func (c *Config) String() string { return string(c.Canonical()) }

// yamlNode is a YAML value with an optional trailing comment: a scalar, or
// a mapping (items with keys) or a sequence (seq; items without keys).
type yamlNode struct {
	key     string
	scalar  any // nil for a collection
	items   []yamlNode
	seq     bool
	comment string
}

// mapping is a collection node.
func mapping(key string, items ...yamlNode) yamlNode { return yamlNode{key: key, items: items} }

// sequence is a sequence node of scalars.
func sequence[T any](key string, values []T) yamlNode {
	n := yamlNode{key: key, seq: true, items: []yamlNode{}}
	for _, v := range values {
		n.items = append(n.items, yamlNode{scalar: v})
	}
	return n
}

// comment sets each node's comment from sources, by the node's path (built
// as the decoders build the paths they note): the source when noted,
// nothing inside a collection whose source is noted as a whole or that is a
// default as a whole, "default" otherwise.
func comment(nodes []yamlNode, path string, sources map[string]string, inNoted bool) {
	for i := range nodes {
		n := &nodes[i]
		p := path
		if n.key != "" {
			p = child(path, n.key)
		} else {
			p = index(path, i)
		}
		src, noted := sources[p]
		switch {
		case noted:
			n.comment = src
		case !inNoted && (n.scalar != nil || n.seq || len(n.items) == 0):
			n.comment = "default"
			noted = true // a default list's items are defaults too
		}
		if n.items != nil {
			comment(n.items, p, sources, inNoted || noted)
		}
	}
}

// emit writes nodes as block YAML at the given indentation.
func emit(b *bytes.Buffer, nodes []yamlNode, indent int) {
	pad := strings.Repeat(" ", indent)
	for _, n := range nodes {
		line := pad
		if n.key != "" {
			line += yamlString(n.key) + ":"
		} else {
			line += "-"
		}
		switch {
		case n.scalar != nil:
			writeLine(b, line+" "+yamlScalar(n.scalar), n.comment)
		case len(n.items) == 0 && n.seq:
			writeLine(b, line+" []", n.comment)
		case len(n.items) == 0:
			writeLine(b, line+" {}", n.comment)
		case n.key == "" && !n.seq:
			// A mapping in a sequence: its first field on the dash's line.
			var first bytes.Buffer
			emit(&first, n.items[:1], 0)
			text := strings.TrimSuffix(first.String(), "\n")
			if n.comment != "" && !strings.Contains(text, "\n") && !strings.Contains(text, " # ") {
				text += "  # " + n.comment
			}
			b.WriteString(line + " " + text + "\n")
			emit(b, n.items[1:], indent+2)
		default:
			writeLine(b, line, n.comment)
			next := indent + 2
			if n.seq && n.key != "" {
				next = indent // a sequence under a key sits at the key's column
			}
			emit(b, n.items, next)
		}
	}
}

func writeLine(b *bytes.Buffer, line, comment string) {
	b.WriteString(line)
	if comment != "" {
		b.WriteString("  # " + comment)
	}
	b.WriteString("\n")
}

// plainYAML is a string YAML reads back as the same string without quotes.
var plainYAML = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_./-]*$`)

// yamlString writes a string plain when YAML reads it back as that string,
// double-quoted otherwise.
func yamlString(s string) string {
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf":
		return strconv.Quote(s)
	}
	if plainYAML.MatchString(s) {
		return s
	}
	return strconv.Quote(s)
}

func yamlScalar(v any) string {
	switch x := v.(type) {
	case string:
		return yamlString(x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

func ignoredNodes(a NodeResourcesFitArgs) []yamlNode {
	var out []yamlNode
	if len(a.IgnoredResources) > 0 {
		out = append(out, sequence("ignoredResources", a.IgnoredResources))
	}
	if len(a.IgnoredResourceGroups) > 0 {
		out = append(out, sequence("ignoredResourceGroups", a.IgnoredResourceGroups))
	}
	return out
}
