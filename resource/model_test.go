package resource

import (
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
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
	if why := s.Rejection("nvidia.com/gpu", "P100"); why != "nvidia.com/gpu model P100 is not one the task accepts (V100M16, V100M32)" {
		t.Errorf("rejection %q", why)
	}
	if why := s.Rejection("nvidia.com/gpu", ""); why != "nvidia.com/gpu model unknown; the task accepts only V100M16, V100M32" {
		t.Errorf("rejection %q", why)
	}
	if s.Rejection("nvidia.com/gpu", "V100M32") != "" || ModelSet("").Rejection("x", "") != "" {
		t.Error("an accepted model rejected")
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

func TestNodeModel(t *testing.T) {
	for _, c := range []struct {
		labels map[string]string
		want   string
	}{
		{nil, ""},
		{map[string]string{GPUProductLabel: "NVIDIA-A100-SXM4-80GB"}, "NVIDIA-A100-SXM4-80GB"},
		{map[string]string{KoordinatorGPUModelLabel: "NVIDIA-H20"}, "NVIDIA-H20"},
		{map[string]string{GPUProductLabel: "Tesla-T4", KoordinatorGPUModelLabel: "T4"}, "Tesla-T4"},
		{map[string]string{GPUProductLabel: "Tesla T4"}, ""}, // not a label value: unknown
	} {
		if got := NodeModel(c.labels); got != c.want {
			t.Errorf("NodeModel(%v) = %q, want %q", c.labels, got, c.want)
		}
	}
}

func TestAcceptedModels(t *testing.T) {
	cluster := []string{"NVIDIA-A100-SXM4-80GB", "Tesla-V100-SXM2-16GB", "Tesla-V100-SXM2-32GB", "Tesla-T4", "", "Tesla-T4"}
	for _, c := range []struct {
		annotations map[string]string
		want        ModelSet
	}{
		{nil, ""},
		{map[string]string{"other": "x"}, ""},
		{map[string]string{GPUModelsAnnotation: "Tesla-T4, NVIDIA-A100-SXM4-80GB"}, "NVIDIA-A100-SXM4-80GB|Tesla-T4"},
		{map[string]string{GPUModelsAnnotation: "H100"}, "H100"}, // on no node yet: no node serves it
		{map[string]string{UseGPUTypeAnnotation: "v100"}, "Tesla-V100-SXM2-16GB|Tesla-V100-SXM2-32GB"},
		{map[string]string{UseGPUTypeAnnotation: "A100, t4"}, "NVIDIA-A100-SXM4-80GB|Tesla-T4"},
		{map[string]string{UseGPUTypeAnnotation: "SXM2 32GB"}, "Tesla-V100-SXM2-32GB"},
		{map[string]string{NoUseGPUTypeAnnotation: "V100"}, "NVIDIA-A100-SXM4-80GB|Tesla-T4"},
		{map[string]string{UseGPUTypeAnnotation: "Tesla", NoUseGPUTypeAnnotation: "16GB,T4"}, "Tesla-V100-SXM2-32GB"},
		{map[string]string{GPUModelsAnnotation: "Tesla-T4|Tesla-V100-SXM2-16GB", NoUseGPUTypeAnnotation: "t4"}, "Tesla-V100-SXM2-16GB"},
		{map[string]string{UseGPUTypeAnnotation: " , "}, "NVIDIA-A100-SXM4-80GB|Tesla-T4|Tesla-V100-SXM2-16GB|Tesla-V100-SXM2-32GB"},
	} {
		got, err := AcceptedModels(c.annotations, cluster)
		if err != nil || got != c.want {
			t.Errorf("AcceptedModels(%v) = %q, %v; want %q", c.annotations, got, err, c.want)
		}
	}
	for _, c := range []struct {
		annotations map[string]string
		msg         string
	}{
		{map[string]string{GPUModelsAnnotation: "A 100|T4"}, `annotation resfit.io/gpu-models: device models "A 100|T4": model "A 100"`},
		{map[string]string{UseGPUTypeAnnotation: "A100/x"}, `annotation nvidia.com/use-gputype: "A100/x"`},
		{map[string]string{UseGPUTypeAnnotation: strings.Repeat("a,", MaxModelTexts+1)}, "annotation nvidia.com/use-gputype: more than 64 texts"},
		{map[string]string{UseGPUTypeAnnotation: "H100"}, "annotations nvidia.com/use-gputype: no GPU model of the cluster (NVIDIA-A100-SXM4-80GB, Tesla-T4, Tesla-V100-SXM2-16GB, Tesla-V100-SXM2-32GB) is left"},
		{map[string]string{GPUModelsAnnotation: "Tesla-T4", NoUseGPUTypeAnnotation: "T4"}, "annotations resfit.io/gpu-models and nvidia.com/nouse-gputype: no GPU model"},
	} {
		if _, err := AcceptedModels(c.annotations, cluster); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("AcceptedModels(%v): %v, want an error with %q", c.annotations, err, c.msg)
		}
	}
}

// AcceptedModels agrees with a slow reference that tries every model of
// the cluster against every annotation one character position at a time.
func TestAcceptedModelsAgreesWithReference(t *testing.T) {
	words := []string{"A100", "a100", "V100", "T4", "SXM2", "16GB", "Tesla", "NVIDIA", "x"}
	rapid.Check(t, func(t *rapid.T) {
		var cluster []string
		for range rapid.IntRange(0, 5).Draw(t, "models") {
			m := strings.Join(rapid.SliceOfN(rapid.SampledFrom(words), 1, 3).Draw(t, "model"), "-")
			cluster = append(cluster, m)
		}
		annotations := map[string]string{}
		list := func(label string) string {
			return strings.Join(rapid.SliceOfN(rapid.SampledFrom(append(words, "")), 0, 3).Draw(t, label), ",")
		}
		if rapid.Bool().Draw(t, "exact") {
			var names []string
			for _, m := range rapid.SliceOfN(rapid.SampledFrom(append(cluster, "H100")), 0, 3).Draw(t, "exact names") {
				names = append(names, m)
			}
			annotations[GPUModelsAnnotation] = strings.Join(names, "|")
		}
		if rapid.Bool().Draw(t, "use") {
			annotations[UseGPUTypeAnnotation] = list("use")
		}
		if rapid.Bool().Draw(t, "nouse") {
			annotations[NoUseGPUTypeAnnotation] = list("nouse")
		}
		got, err := AcceptedModels(annotations, cluster)
		want, wantErr := acceptedReference(annotations, cluster)
		if (err != nil) != wantErr || got != want {
			t.Fatalf("AcceptedModels(%v, %v) = %q, %v; the reference %q, error %v", annotations, cluster, got, err, want, wantErr)
		}
	})
}

// acceptedReference is AcceptedModels written plainly: each model of the
// cluster, each rule in turn, substrings found by comparing at every
// offset without regard to case.
func acceptedReference(annotations map[string]string, cluster []string) (ModelSet, bool) {
	contains := func(model, text string) bool {
		for i := 0; i+len(text) <= len(model); i++ {
			if strings.EqualFold(model[i:i+len(text)], text) {
				return true
			}
		}
		return false
	}
	texts := func(key string) ([]string, bool) {
		v, ok := annotations[key]
		var out []string
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
		return out, ok
	}
	exactText, hasExact := annotations[GPUModelsAnnotation]
	var exact []string
	for _, f := range strings.FieldsFunc(exactText, func(r rune) bool { return r == '|' || r == ',' }) {
		exact = append(exact, strings.TrimSpace(f))
	}
	use, hasUse := texts(UseGPUTypeAnnotation)
	nouse, hasNoUse := texts(NoUseGPUTypeAnnotation)
	if !hasExact && !hasUse && !hasNoUse {
		return "", false
	}
	accepted := map[string]bool{}
	for _, m := range cluster {
		ok := m != ""
		if len(exact) > 0 {
			ok = ok && slices.Contains(exact, m)
		}
		if len(use) > 0 {
			found := false
			for _, u := range use {
				found = found || contains(m, u)
			}
			ok = ok && found
		}
		for _, u := range nouse {
			ok = ok && !contains(m, u)
		}
		if ok {
			accepted[m] = true
		}
	}
	if len(accepted) == 0 {
		if len(exact) > 0 && len(use) == 0 && len(nouse) == 0 {
			set, _ := ParseModelSet(exactText)
			return set, false
		}
		return "", true
	}
	names := make([]string, 0, len(accepted))
	for m := range accepted {
		names = append(names, m)
	}
	slices.Sort(names)
	return ModelSet(strings.Join(names, "|")), false
}

// Whatever the annotations, AcceptedModels gives an error or a canonical
// set; a set found among the cluster's models holds only those.
func FuzzAcceptedModels(f *testing.F) {
	f.Add("", "v100", "", "Tesla-V100-SXM2-16GB")
	f.Add("A10|T4", "", "t4", "A10")
	f.Add("", " , ,", "x", "")
	f.Fuzz(func(t *testing.T, exact, use, nouse, model string) {
		annotations := map[string]string{}
		for key, v := range map[string]string{GPUModelsAnnotation: exact, UseGPUTypeAnnotation: use, NoUseGPUTypeAnnotation: nouse} {
			if v != "" {
				annotations[key] = v
			}
		}
		cluster := []string{"Tesla-T4", "NVIDIA-A100-SXM4-80GB"}
		if ValidateModel(model) == nil {
			cluster = append(cluster, model)
		}
		set, err := AcceptedModels(annotations, cluster)
		if err != nil {
			return
		}
		if again, err := ParseModelSet(string(set)); err != nil || again != set {
			t.Fatalf("%v → %q, not canonical (%q, %v)", annotations, set, again, err)
		}
		if _, hasExact := annotations[GPUModelsAnnotation]; !hasExact {
			for _, m := range set.Names() {
				if !slices.Contains(cluster, m) {
					t.Fatalf("%v → %q holds %q, not a model of the cluster", annotations, set, m)
				}
			}
		}
	})
}
