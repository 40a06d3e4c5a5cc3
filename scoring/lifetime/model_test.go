package lifetime

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// slowModel is the Model's reference: every key's lifetimes in arrival
// order, the last window of them counted, worked out from scratch.
type slowModel struct {
	opts ModelOptions
	seen map[string][]float64
}

func (m *slowModel) observe(keys []string, lived float64) {
	if !(lived >= 0) || math.IsInf(lived, 1) {
		return
	}
	for _, k := range keys {
		if k != "" {
			m.seen[k] = append(m.seen[k], lived)
		}
	}
}

func (m *slowModel) remaining(keys []string, age float64) (float64, Source) {
	if !(age >= 0) || math.IsInf(age, 1) {
		return 0, Unknown
	}
	for _, k := range keys {
		all := m.seen[k]
		all = all[max(0, len(all)-m.opts.Window):]
		var longer []float64
		for _, x := range all {
			if x > age {
				longer = append(longer, x)
			}
		}
		if len(longer) < m.opts.MinSamples {
			continue
		}
		slices.Sort(longer)
		// The smallest x with at least a share q of them ≤ x.
		for i, x := range longer {
			if float64(i+1) >= m.opts.Quantile*float64(len(longer)) {
				return x - age, Learned
			}
		}
	}
	if age > 0 {
		return age, Lindy
	}
	return 0, Unknown
}

var testKeys = []string{"a", "b", "c", ""}

func drawKeys(t *rapid.T, label string) []string {
	return rapid.SliceOfNDistinct(rapid.SampledFrom(testKeys), 0, 3, rapid.ID[string]).Draw(t, label)
}

// drawLifetime draws from a few values (so that ages meet lifetimes
// exactly) and a range, with the odd value a Model must ignore.
func drawLifetime(t *rapid.T, label string) float64 {
	return rapid.OneOf(
		rapid.SampledFrom([]float64{0, 1, 2, 3, 10, 100}),
		rapid.Float64Range(0, 1e6),
		rapid.SampledFrom([]float64{-1, math.NaN(), math.Inf(1), math.Inf(-1)}),
	).Draw(t, label)
}

func drawOptions(t *rapid.T) ModelOptions {
	w := rapid.IntRange(1, 12).Draw(t, "window")
	return ModelOptions{Window: w, MinSamples: rapid.IntRange(1, w).Draw(t, "minSamples"),
		Quantile: rapid.SampledFrom([]float64{0.1, 0.25, 0.5, 0.75, 0.9, 0.999}).Draw(t, "quantile")}
}

// TestModelAgreesWithSlowReference: after any observations, what a Model
// predicts for any keys and age is what the reference works out from all
// it saw.
func TestModelAgreesWithSlowReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := drawOptions(t)
		m, err := NewModel(opts)
		if err != nil {
			t.Fatal(err)
		}
		ref := &slowModel{opts: opts, seen: map[string][]float64{}}
		for range rapid.IntRange(0, 60).Draw(t, "steps") {
			if rapid.Bool().Draw(t, "observe") {
				keys, lived := drawKeys(t, "keys"), drawLifetime(t, "lived")
				m.Observe(keys, lived)
				ref.observe(keys, lived)
				continue
			}
			keys, age := drawKeys(t, "keys"), drawLifetime(t, "age")
			got, gotSrc := m.Remaining(keys, age)
			want, wantSrc := ref.remaining(keys, age)
			if got != want || gotSrc != wantSrc {
				t.Fatalf("Remaining(%q, %v) = %v (%v), the reference %v (%v)", keys, age, got, gotSrc, want, wantSrc)
			}
			if gotSrc != Unknown && !(got > 0) {
				t.Fatalf("Remaining(%q, %v) = %v from %v: a pod that runs on has more than 0 left", keys, age, got, gotSrc)
			}
		}
	})
}

// TestModelPredictsLongerForOlderPods: with heavy tails a pod that has
// run longer is expected to end later (age + remaining does not fall as
// the age grows).
func TestModelPredictsLongerForOlderPods(t *testing.T) {
	m, err := NewModel(ModelOptions{MinSamples: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []float64{60, 60, 120, 600, 3600, 3600 * 24, 3600 * 24 * 3} {
		m.Observe([]string{"job"}, x)
	}
	last := 0.0
	for _, age := range []float64{0, 30, 60, 100, 600, 3600, 86400, 86400 * 3, 86400 * 10} {
		rest, src := m.Remaining([]string{"job"}, age)
		if src == Unknown || age+rest < last {
			t.Fatalf("at age %v: %v left (%v), ending before %v", age, rest, src, last)
		}
		last = age + rest
	}
	// At 0 the median of 7; at 1000 s of the three longer (3600, 86400,
	// 259200), two of them being enough.
	for _, c := range []struct {
		age, want float64
		src       Source
	}{{0, 600, Learned}, {1000, 86400 - 1000, Learned}, {86400, 86400, Lindy}} {
		if got, src := m.Remaining([]string{"job"}, c.age); got != c.want || src != c.src {
			t.Errorf("Remaining at %v = %v (%v), want %v (%v)", c.age, got, src, c.want, c.src)
		}
	}
}

func TestModelOptionsNameTheField(t *testing.T) {
	for _, c := range []struct {
		opts ModelOptions
		want string
	}{
		{ModelOptions{Window: -1}, "window: must be at least 1, got -1"},
		{ModelOptions{Window: 4, MinSamples: 5}, "minSamples: must be in [1, window = 4], got 5"},
		{ModelOptions{Quantile: 1}, "quantile: must be in (0, 1), got 1"},
		{ModelOptions{Quantile: math.NaN()}, "quantile: must be in (0, 1), got NaN"},
	} {
		if _, err := NewModel(c.opts); err == nil || err.Error() != c.want {
			t.Errorf("NewModel(%+v) = %v, want %q", c.opts, err, c.want)
		}
	}
}

// Merging two options is field by field: a field set in one only takes
// that one, equal fields stay, and two set apart are an error naming the
// field; it does not depend on the order, and merging nothing changes
// nothing.
func TestModelOptionsMergeFieldByField(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		draw := func(label string) ModelOptions {
			return ModelOptions{
				Window:     rapid.SampledFrom([]int{0, 8, 512}).Draw(t, label+".window"),
				MinSamples: rapid.SampledFrom([]int{0, 1, 256}).Draw(t, label+".minSamples"),
				Quantile:   rapid.SampledFrom([]float64{0, 0.5, 0.9}).Draw(t, label+".quantile"),
			}
		}
		o, p := draw("o"), draw("p")
		got, err := o.Merge(p)
		back, errBack := p.Merge(o)
		if (err == nil) != (errBack == nil) || got != back {
			t.Fatalf("%+v and %+v merge to %+v (%v) one way, %+v (%v) the other", o, p, got, err, back, errBack)
		}
		if same, _ := o.Merge(ModelOptions{}); same != o {
			t.Fatalf("%+v merged with nothing is %+v", o, same)
		}
		clash := ""
		field := func(name string, a, b float64, out *float64) {
			switch {
			case a == 0:
				*out = b
			case b == 0 || a == b:
				*out = a
			case clash == "":
				clash = name
			}
		}
		var w, m, q float64
		field("window", float64(o.Window), float64(p.Window), &w)
		field("minSamples", float64(o.MinSamples), float64(p.MinSamples), &m)
		field("quantile", o.Quantile, p.Quantile, &q)
		if clash != "" {
			if err == nil || !strings.HasPrefix(err.Error(), clash+": ") {
				t.Fatalf("%+v and %+v: %v, want an error naming %s", o, p, err, clash)
			}
			return
		}
		want := ModelOptions{Window: int(w), MinSamples: int(m), Quantile: q}
		if err != nil || got != want {
			t.Fatalf("%+v and %+v merge to %+v (%v), want %+v", o, p, got, err, want)
		}
	})
}

// A Model learns with the options it was given, every unset one at its
// default, and an option it cannot use is an *OptionError.
func TestModelOptionsResolved(t *testing.T) {
	m, err := NewModel(ModelOptions{MinSamples: 4})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Options(), (ModelOptions{Window: DefaultWindow, MinSamples: 4, Quantile: DefaultQuantile}); got != want {
		t.Errorf("options %+v, want %+v", got, want)
	}
	var oe *OptionError
	if err := (ModelOptions{Window: 2, MinSamples: 3}).Check(); !errors.As(err, &oe) || oe.Field != "minSamples" || oe.Value != 3 {
		t.Errorf("Check: %#v, want an OptionError for minSamples 3", err)
	}
}

// TestModelDefaultsWaitForManyLifetimes: by default a key predicts once it
// has seen DefaultMinSamples (256) lifetimes longer than the pod's age;
// with one fewer, a pod that has run is expected to run as long again.
func TestModelDefaultsWaitForManyLifetimes(t *testing.T) {
	m, err := NewModel(ModelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{"job"}
	for i := range 255 {
		m.Observe(keys, float64(100+i))
	}
	if rest, src := m.Remaining(keys, 50); rest != 50 || src != Lindy {
		t.Errorf("255 lifetimes seen: %v left (%v), want 50 (lindy)", rest, src)
	}
	if rest, src := m.Remaining(keys, 0); rest != 0 || src != Unknown {
		t.Errorf("255 lifetimes seen, age 0: %v left (%v), want unknown", rest, src)
	}
	m.Observe(keys, 355)
	// 256 lifetimes 100 … 355: the 128th smallest is 227.
	if rest, src := m.Remaining(keys, 50); rest != 227-50 || src != Learned {
		t.Errorf("256 lifetimes seen: %v left (%v), want %v (learned)", rest, src, 227-50)
	}
}
