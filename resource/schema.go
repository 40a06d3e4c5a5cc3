package resource

import (
	"fmt"
	"maps"
	"slices"
)

// MaxResources is the most resource names one Schema holds. It lets scorers
// keep per-task state in fixed-size arrays and bit masks on the stack.
const MaxResources = 64

// Schema fixes the order of resource names once, so that every amount is a
// slot in a dense vector and no scoring loop looks up a string. A Schema is
// immutable and safe for concurrent use.
type Schema struct {
	names []string
	slots map[string]int
}

// NewSchema returns a schema with the given names in the given order. Names
// must be valid qualified names, distinct, and at most MaxResources.
func NewSchema(names ...string) (*Schema, error) {
	if len(names) > MaxResources {
		return nil, fmt.Errorf("schema: %d resource names, at most %d are supported", len(names), MaxResources)
	}
	s := &Schema{names: append([]string(nil), names...), slots: make(map[string]int, len(names))}
	for i, n := range names {
		if err := ValidateName(n); err != nil {
			return nil, fmt.Errorf("schema: %w", err)
		}
		if _, dup := s.slots[n]; dup {
			return nil, fmt.Errorf("schema: resource name %q appears twice", n)
		}
		s.slots[n] = i
	}
	return s, nil
}

// Len is the number of slots.
func (s *Schema) Len() int { return len(s.names) }

// Name returns the name in slot i.
func (s *Schema) Name(i int) string { return s.names[i] }

// Names returns a copy of the names in slot order.
func (s *Schema) Names() []string { return append([]string(nil), s.names...) }

// Slot returns the slot of name.
func (s *Schema) Slot(name string) (int, bool) {
	i, ok := s.slots[name]
	return i, ok
}

// Parse builds a vector from quantities by name ("cpu": "500m",
// "nvidia.com/gpu": "2"), in canonical units. Names missing from the list are
// 0; a name missing from the schema is an error.
func (s *Schema) Parse(quantities map[string]string) (Vector, error) {
	v := make(Vector, len(s.names))
	for _, name := range slices.Sorted(maps.Keys(quantities)) {
		i, ok := s.slots[name]
		if !ok {
			return nil, fmt.Errorf("resource %q is not in the schema %v", name, s.names)
		}
		amount, err := ParseAmount(name, quantities[name])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		v[i] = amount
	}
	return v, nil
}

// Vector builds a vector from amounts by name, already in canonical units.
func (s *Schema) Vector(amounts map[string]int64) (Vector, error) {
	v := make(Vector, len(s.names))
	for _, name := range slices.Sorted(maps.Keys(amounts)) {
		i, ok := s.slots[name]
		if !ok {
			return nil, fmt.Errorf("resource %q is not in the schema %v", name, s.names)
		}
		v[i] = amounts[name]
	}
	return v, s.Check(v)
}

// Check reports whether v fits this schema: one amount per slot, each in
// [0, MaxAmount].
func (s *Schema) Check(v Vector) error {
	if len(v) != len(s.names) {
		return fmt.Errorf("vector has %d amounts, the schema has %d resources", len(v), len(s.names))
	}
	for i, a := range v {
		if a < 0 || a > MaxAmount {
			return fmt.Errorf("%s: amount %d is outside [0, 2^53]", s.names[i], a)
		}
	}
	return nil
}

// Vector holds one amount per schema slot, in canonical units.
type Vector []int64

// MustLen panics unless every vector has n amounts. It is for per-node
// kernels whose godoc states that vectors of the wrong length are a
// programming error; fn names the kernel in the message.
func MustLen(fn string, n int, vectors ...[]int64) {
	for _, v := range vectors {
		if len(v) != n {
			lens := make([]int, len(vectors))
			for i, v := range vectors {
				lens[i] = len(v)
			}
			panic(fmt.Sprintf("%s: vectors of lengths %v for a schema of %d resources", fn, lens, n))
		}
	}
}
