package resource

import (
	"strings"
	"testing"
)

func TestParseModelSet(t *testing.T) {
	for text, want := range map[string]ModelSet{
		"":                      "",
		"  ":                    "",
		"V100M32|V100M16":       "V100M16|V100M32",
		"A10, T4 ,A10":          "A10|T4",
		"|G2||":                 "G2",
		"NVIDIA-A100-SXM4-80GB": "NVIDIA-A100-SXM4-80GB",
	} {
		got, err := ParseModelSet(text)
		if err != nil || got != want {
			t.Errorf("ParseModelSet(%q) = %q, %v; want %q", text, got, err, want)
		}
	}
	for text, msg := range map[string]string{
		"V100 M32":              `model "V100 M32": name part has ' '`,
		"-A10":                  `model "-A10"`,
		"A10|T4/x":              `model "T4/x"`,
		strings.Repeat("a", 64): "at most 63 characters",
	} {
		if _, err := ParseModelSet(text); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseModelSet(%q): %v, want an error with %q", text, err, msg)
		}
	}
}

func TestModelSetAccepts(t *testing.T) {
	s, _ := ParseModelSet("V100M16|V100M32")
	for model, want := range map[string]bool{"V100M16": true, "V100M32": true, "V100M3": false, "V100": false, "": false, "P100": false} {
		if got := s.Accepts(model); got != want {
			t.Errorf("%q accepts %q: %v, want %v", s, model, got, want)
		}
	}
	if !ModelSet("").Accepts("") || !ModelSet("").Accepts("T4") {
		t.Error("the empty set does not accept every model")
	}
	if names := s.Names(); len(names) != 2 || names[0] != "V100M16" || ModelSet("").Names() != nil {
		t.Errorf("names %v", names)
	}
}

func TestDevicesModel(t *testing.T) {
	d, _ := NewDevices("nvidia.com/gpu", 1000)
	d.AddNode(2)
	if d.Model(0) != "" {
		t.Errorf("a new node's model is %q", d.Model(0))
	}
	v := d.Version(0)
	if err := d.SetModel(0, "A10"); err != nil || d.Model(0) != "A10" || d.Version(0) == v {
		t.Errorf("SetModel: %v, model %q", err, d.Model(0))
	}
	if err := d.SetModel(0, "A 10"); err == nil || !strings.Contains(err.Error(), `node row 0: device model "A 10"`) {
		t.Errorf("bad model: %v", err)
	}
	if err := d.SetModel(1, "A10"); err == nil {
		t.Error("a row outside accepted")
	}
}

// Whatever the text, ParseModelSet gives an error or a canonical set that
// parses to itself and accepts each of its names.
func FuzzParseModelSet(f *testing.F) {
	for _, s := range []string{"", "V100M16|V100M32", "A10, T4", "|||", "a|a|b", "-x", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseModelSet(text)
		if err != nil {
			return
		}
		again, err := ParseModelSet(string(s))
		if err != nil || again != s {
			t.Fatalf("%q → %q → %q, %v", text, s, again, err)
		}
		for _, name := range s.Names() {
			if !s.Accepts(name) || ValidateModel(name) != nil {
				t.Fatalf("%q does not accept its own %q", s, name)
			}
		}
	})
}
