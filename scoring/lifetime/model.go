package lifetime

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
)

// ModelOptions bound and shape what a Model learns.
type ModelOptions struct {
	// Window is how many lifetimes a key keeps, the most recent: 512 by
	// default. In the churn replay with learned ends (bench/replay), a
	// key that kept 2,048 or 8,192 left more GPU idle while GPU pods wait
	// at load 0.9 than 512 did, on 7 and 8 of 10 seeds.
	Window int
	// MinSamples is how many lifetimes longer than a pod's age a key must
	// have seen to predict for it: 256 by default. A key with fewer passes
	// the question to the next key, and past every key a pod that has run
	// is expected to run as long again (the Lindy rule). A quantile of a
	// few heavy-tailed lifetimes says little: 8 place the true median only
	// between the 2nd and the 7th of them (93% of the time), 256 between
	// the 44th and the 56th percentile of them (95%); and for an old pod
	// the few that ran longer are mostly those that ended soonest after
	// its age, the longer ones running still. In the churn replay with
	// learned ends (bench/replay), 256 left less GPU idle while GPU pods
	// wait at load 0.9 than 8 did, on 18 of 20 seeds.
	MinSamples int
	// Quantile is the quantile of those lifetimes that is predicted, in
	// (0, 1): 0.5 (the median) by default.
	Quantile float64
}

// Default model options.
const (
	DefaultWindow     = 512
	DefaultMinSamples = 256
	DefaultQuantile   = 0.5
)

// withDefaults fills the unset options.
func (o ModelOptions) withDefaults() ModelOptions {
	if o.Window == 0 {
		o.Window = DefaultWindow
	}
	if o.MinSamples == 0 {
		o.MinSamples = DefaultMinSamples
	}
	if o.Quantile == 0 {
		o.Quantile = DefaultQuantile
	}
	return o
}

// Resolved is the options with every unset one (0) at its default.
func (o ModelOptions) Resolved() ModelOptions { return o.withDefaults() }

// Check reports options a Model cannot use, as an *OptionError naming the
// field.
func (o ModelOptions) Check() error {
	o = o.withDefaults()
	switch {
	case o.Window < 1:
		return &OptionError{Field: "window", Value: o.Window, Detail: "must be at least 1"}
	case o.MinSamples < 1 || o.MinSamples > o.Window:
		return &OptionError{Field: "minSamples", Value: o.MinSamples, Detail: fmt.Sprintf("must be in [1, window = %d]", o.Window)}
	case !(o.Quantile > 0 && o.Quantile < 1):
		return &OptionError{Field: "quantile", Value: o.Quantile, Detail: "must be in (0, 1)"}
	}
	return nil
}

// OptionError is an option a Model cannot use: the field, by its name in
// a configuration (window, minSamples, quantile), its value, and what it
// must be.
type OptionError struct {
	Field  string
	Value  any
	Detail string
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("%s: %s, got %v", e.Field, e.Detail, e.Value)
}

// Merge is the options o and p ask for together, field by field: a field
// set (not 0) in one and unset in the other takes the one set. Two that
// set a field to different values cannot share one Model: the error names
// the field and both values.
func (o ModelOptions) Merge(p ModelOptions) (ModelOptions, error) {
	var err error
	out := ModelOptions{
		Window:     mergeOption("window", o.Window, p.Window, &err),
		MinSamples: mergeOption("minSamples", o.MinSamples, p.MinSamples, &err),
		Quantile:   mergeOption("quantile", o.Quantile, p.Quantile, &err),
	}
	if err != nil {
		return ModelOptions{}, err
	}
	return out, nil
}

// mergeOption is the one of a and b that is set, or both where equal; two
// set apart record an error naming the field, the first only.
func mergeOption[T int | float64](field string, a, b T, err *error) T {
	switch {
	case a == 0:
		return b
	case b == 0 || a == b:
		return a
	}
	if *err == nil {
		*err = fmt.Errorf("%s: %v and %v: one model learns with one %s", field, a, b, field)
	}
	return a
}

// Options is the options the model learns with, every one set.
func (m *Model) Options() ModelOptions { return m.opts }

// Source is where an expected end comes from.
type Source uint8

const (
	// Unknown: nothing is known of the end.
	Unknown Source = iota
	// Declared: the pod declares it (a deadline, an estimate).
	Declared
	// Learned: the lifetimes of pods of one of its keys that ended.
	Learned
	// Lindy: it has outlived what is known of its keys, and is expected to
	// run as long again as it has run.
	Lindy
)

// IsLearned reports whether an end of this source was learned of pods
// like it or guessed from how long it has run (Learned, Lindy), not
// declared: what scoring.Task.EndsLearned says.
func (s Source) IsLearned() bool { return s == Learned || s == Lindy }

func (s Source) String() string {
	switch s {
	case Declared:
		return "declared"
	case Learned:
		return "learned"
	case Lindy:
		return "lindy"
	}
	return "unknown"
}

// Model learns how long pods run, by key, from the pods that ended, and
// predicts what a running pod has left. It is safe for concurrent use.
type Model struct {
	opts ModelOptions
	mu   sync.RWMutex
	keys map[string]*lifetimes
	// ended says it has learned a lifetime (Ended).
	ended atomic.Bool
}

// lifetimes are a key's most recent lifetimes: in arrival order (a ring,
// next the oldest once full) and sorted.
type lifetimes struct {
	ring   []float64
	next   int
	sorted []float64
}

// NewModel is a Model that has seen nothing; the options are checked.
func NewModel(opts ModelOptions) (*Model, error) {
	if err := opts.Check(); err != nil {
		return nil, err
	}
	return &Model{opts: opts.withDefaults(), keys: map[string]*lifetimes{}}, nil
}

// Observe records that a pod of the given keys ran for lived seconds. A
// lifetime that is not finite and ≥ 0 is ignored, and so is an empty key.
func (m *Model) Observe(keys []string, lived float64) {
	if !(lived >= 0) || math.IsInf(lived, 1) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range keys {
		if k == "" {
			continue
		}
		l := m.keys[k]
		if l == nil {
			l = &lifetimes{}
			m.keys[k] = l
		}
		l.add(lived, m.opts.Window)
		m.ended.Store(true)
	}
}

// Ended reports whether the Model has learned any pod's lifetime: whether
// some pod has been seen to end, as a cluster that has run for a while
// has and one filling from empty has not.
func (m *Model) Ended() bool { return m.ended.Load() }

// add keeps x, dropping the oldest lifetime when window are kept.
func (l *lifetimes) add(x float64, window int) {
	if len(l.ring) == window {
		old := l.ring[l.next]
		i, _ := slices.BinarySearch(l.sorted, old)
		l.sorted = slices.Delete(l.sorted, i, i+1)
		l.ring[l.next] = x
		l.next = (l.next + 1) % window
	} else {
		l.ring = append(l.ring, x)
	}
	i, _ := slices.BinarySearch(l.sorted, x)
	l.sorted = slices.Insert(l.sorted, i, x)
}

// Seen is how many lifetimes the key keeps.
func (m *Model) Seen(key string) int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if l := m.keys[key]; l != nil {
		return len(l.sorted)
	}
	return 0
}

// Remaining is what a pod of the given keys (most specific first) that
// has run for age seconds is expected to have left, and from what:
//
//   - Learned: from the first key that has seen at least MinSamples
//     lifetimes longer than age, the Quantile of those lifetimes less the
//     age (the lower of the two middle ones where the quantile falls
//     between: the ⌈q·n⌉-th smallest of the n), always above 0;
//   - Lindy: where no key has, and age > 0, age again;
//   - Unknown (0): where no key has and age is 0, or age is not a finite
//     number ≥ 0.
func (m *Model) Remaining(keys []string, age float64) (float64, Source) {
	if !(age >= 0) || math.IsInf(age, 1) {
		return 0, Unknown
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, k := range keys {
		l := m.keys[k]
		if l == nil {
			continue
		}
		// The lifetimes longer than age are sorted[i:].
		i, found := slices.BinarySearch(l.sorted, age)
		for found && i < len(l.sorted) && l.sorted[i] == age {
			i++
		}
		n := len(l.sorted) - i
		if n < m.opts.MinSamples {
			continue
		}
		rank := int(math.Ceil(m.opts.Quantile * float64(n))) // 1..n
		return l.sorted[i+max(rank, 1)-1] - age, Learned
	}
	if age > 0 {
		return age, Lindy
	}
	return 0, Unknown
}
