package dra

import (
	"maps"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// Layered maps made one from another, each changed by sets and deletes,
// read as plain maps changed the same way would: every one of them, the
// older ones unchanged by what the newer ones did, whether next copied a
// top or flattened; eachDifference names the keys two of them differ in.
func TestLayeredMatchesMaps(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		key := rapid.IntRange(0, 80)
		versions := []layered[int, string]{{}}
		models := []map[int]string{{}}
		for range rapid.IntRange(8, 40).Draw(t, "versions") {
			from := rapid.IntRange(0, len(versions)-1).Draw(t, "from")
			m, model := versions[from].next(), maps.Clone(models[from])
			for range rapid.IntRange(10, 60).Draw(t, "changes") {
				k := key.Draw(t, "key")
				if rapid.Bool().Draw(t, "delete") {
					m.del(k)
					delete(model, k)
					continue
				}
				v := rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "value")
				m.set(k, v)
				model[k] = v
			}
			versions, models = append(versions, m), append(models, model)
		}
		for i := range versions {
			m, model := &versions[i], models[i]
			if m.len() != len(model) {
				t.Fatalf("version %d: len %d, want %d", i, m.len(), len(model))
			}
			if got := maps.Collect(m.all()); !maps.Equal(got, model) {
				t.Fatalf("version %d: %v, want %v", i, got, model)
			}
			for k := range 81 {
				v, ok := m.get(k)
				if w, wok := model[k]; v != w || ok != wok {
					t.Fatalf("version %d: key %d is %q %v, want %q %v", i, k, v, ok, w, wok)
				}
			}
		}
		a := rapid.IntRange(0, len(versions)-1).Draw(t, "a")
		b := rapid.IntRange(0, len(versions)-1).Draw(t, "b")
		var got, want []int
		eachDifference(&versions[a], &versions[b], func(k int) { got = append(got, k) })
		for k := range 81 {
			va, oka := models[a][k]
			vb, okb := models[b][k]
			if va != vb || oka != okb {
				want = append(want, k)
			}
		}
		if slices.Sort(got); !slices.Equal(got, want) {
			t.Fatalf("versions %d and %d differ in %v, want %v", a, b, got, want)
		}
	})
}

// A top grown past the square root of its base is flattened; a small
// one is copied over the same base.
func TestLayeredFlattens(t *testing.T) {
	big := map[int]string{}
	for k := range 10000 {
		big[k] = "x"
	}
	m := layeredOf(big)
	for k := range 100 {
		m.set(k, "y")
	}
	if n := m.next(); n.base != m.base || len(n.top) != 100 {
		t.Errorf("a top of 100 over 10,000: base shared %v, top %d", n.base == m.base, len(n.top))
	}
	m.set(100, "y")
	if n := m.next(); n.base == m.base || len(n.top) != 0 || n.len() != 10000 {
		t.Errorf("a top of 101 over 10,000: base shared %v, top %d, len %d", n.base == m.base, len(n.top), n.len())
	}
}

// A list of the same objects, in any order, is the same; one with an
// object left out, another in, or one twice is not.
func TestListedSame(t *testing.T) {
	a, b, c := new(int), new(int), new(int)
	var l listed[int]
	if l.same(nil) {
		t.Error("nothing kept, yet the same")
	}
	l.keep([]*int{a, b})
	for _, list := range [][]*int{{a}, {a, c}, {a, a}, {a, nil}, {a, b, c}} {
		if l.same(list) {
			t.Errorf("%v is the same as [a b]", list)
		}
	}
	if !l.same([]*int{b, a}) || !l.same([]*int{a, b}) {
		t.Error("[a b] in either order is not the same")
	}
}
