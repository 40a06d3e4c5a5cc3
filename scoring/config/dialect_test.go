package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// What every dialect's table test and fuzz target share.

// loadCase is one row of a dialect's table: a document, the mode, and
// either what it loads to (filters by name, scoring plugins without their
// sources) and warnings it must give, or errors it must give.
type loadCase struct {
	name    string
	doc     string
	compat  bool
	profile string
	filters []string
	scorers []ScorerConfig
	warns   []string // substrings, each in some warning
	errs    []string // substrings, each in the error
}

func runLoadCases(t *testing.T, cases []loadCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load([]byte(tc.doc), Options{Compat: tc.compat, Profile: tc.profile})
			if tc.errs != nil {
				if err == nil {
					t.Fatalf("loaded:\n%s", c)
				}
				wantAll(t, err.Error(), tc.errs...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var filters []string
			for _, f := range c.Filters {
				filters = append(filters, f.Name)
			}
			if diff := cmp.Diff(tc.filters, filters); diff != "" {
				t.Errorf("filters (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.scorers, c.Scorers, cmpopts.IgnoreFields(ScorerConfig{}, "Sources"), cmpopts.IgnoreFields(FilterConfig{}, "Source"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("scorers (-want +got):\n%s", diff)
			}
			wantAll(t, strings.Join(c.Warnings, "\n"), tc.warns...)
			if tc.warns == nil && len(c.Warnings) > 0 {
				t.Errorf("unexpected warnings:\n%s", strings.Join(c.Warnings, "\n"))
			}
		})
	}
}

// kubeScorer is a plugin as a KubeSchedulerConfiguration's profile runs it:
// resfit's kube-scheduler plugin of its name, running it alone.
func kubeScorer(s ScorerConfig) ScorerConfig {
	inner := s
	inner.Weight = 1
	s.Args = KubePluginArgs{Plugin: s.Name, Config: &Config{Scorers: []ScorerConfig{inner}}}
	return s
}

// readsDevicesOf reports whether every fragmentation plugin of c reads the
// named device resource.
func readsDevicesOf(c *Config, device string) bool {
	for _, s := range c.Scorers {
		switch a := s.Args.(type) {
		case FGDArgs:
			if a.Device != device {
				return false
			}
		case ResfitFragArgs:
			if a.Device != device {
				return false
			}
		}
	}
	return true
}

// fuzzConfig is the fuzz target of one dialect, seeded with its documents
// in both modes. Whatever the input: an error is a *ConfigError whose
// every entry has a path; a configuration that loads builds, scores every
// node within [0, MaxScore], and written back by Canonical loads to the
// same filters and scorers.
func fuzzConfig(f *testing.F, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	schema, _ := resource.NewSchema("cpu", "memory", "nvidia.com/gpu")
	nodes := resource.NewTable(schema, 2)
	nodes.Add("a", resource.Vector{4000, 8 << 30, 2000}, resource.Vector{1000, 1 << 30, 1000})
	nodes.Add("b", resource.Vector{0, 0, 0}, nil)
	devices, _ := resource.NewDevices("nvidia.com/gpu", 1000)
	devices.AddNode(2)
	devices.AddNode(0)
	devices.Take(0, 0, 1000)
	f.Fuzz(func(t *testing.T, data []byte, compat bool) {
		opts := Options{Compat: compat}
		c, err := Load(data, opts)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) || len(ce.Errors) == 0 {
				t.Fatalf("not a ConfigError: %v", err)
			}
			for _, fe := range ce.Errors {
				if fe.Path == "" || fe.Detail == "" {
					t.Fatalf("an error without a path or detail: %q", fe.Error())
				}
			}
			return
		}
		host := Host{Devices: devices}
		if !readsDevicesOf(c, devices.Name()) {
			host = Host{} // a fragmentation plugin of another device needs its own view
		}
		p, err := c.BuildFor(schema, host)
		if err != nil && host.Devices != nil {
			t.Fatalf("loaded but did not build: %v\n%s", err, c)
		}
		if err != nil {
			return
		}
		b := p.NewBatch(nodes.Len())
		if err := p.Score(&scoring.Task{Requests: resource.Vector{500, 1 << 20, 1000}}, nodes, b); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < b.Len(); i++ {
			if tot := b.Total(i); !(tot >= 0 && tot <= p.MaxScore()) {
				t.Fatalf("total %v outside [0, %v]", tot, p.MaxScore())
			}
		}
		text := c.Canonical()
		back, err := Load(text, opts)
		if err != nil {
			t.Fatalf("written as\n%s\ndoes not load back: %v", text, err)
		}
		if diff := cmp.Diff(c.Scorers, back.Scorers, cmpopts.IgnoreFields(ScorerConfig{}, "Name", "Sources")); diff != "" {
			t.Fatalf("written as\n%s\nscorers (-loaded +loaded back):\n%s", text, diff)
		}
		if diff := cmp.Diff(filterViews(c), filterViews(back)); diff != "" {
			t.Fatalf("written as\n%s\nfilters (-loaded +loaded back):\n%s", text, diff)
		}
	})
}
