package churn

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/resfit/resfit/bench/replay/sim"
	"github.com/resfit/resfit/resource"
)

// Spec is what the loop of a replay with departures needs: the offered
// load, the warm-up and the window measured, and what the pods declare of
// how long they run. What runs beside the loop has its own options
// (AddOns).
type Spec struct {
	// Load is the offered GPU load over the cluster's GPU capacity.
	Load float64
	// WarmUp is discarded; Window is measured after it (seconds).
	WarmUp, Window float64
	// Declare is what the pods say of their lifetimes: nothing (the
	// default), their lifetime exactly, or with noise (DeclareNoisy); or
	// nothing, the replay learning from the pods that end
	// (DeclareLearned).
	Declare Declaration
	// Sigma is the noise's σ with DeclareNoisy: 1 when 0.
	Sigma float64
	// Resample, when not 0, replaces the multi-GPU pods' lifetimes (74
	// pods pooled on the openb trace) by a bootstrap resample of them,
	// drawn with this seed: how much the figures owe to those few.
	Resample uint64
	// LifetimeWeight is ResfitFrag's lifetime weight (lifetime: {weight:
	// W}: declared and learned ends alike) where the replay follows ends;
	// 0 is the configuration's default (config.DefaultLifetimeWeight for
	// declared ends, config.DefaultLearnedLifetimeWeight for learned ones).
	LifetimeWeight float64
	// Start names the policy that places the pods alive at time 0 (as
	// -policies names it, sim.Select); "" is the policy replayed. A
	// cluster another scheduler filled, then switched to this one: the
	// pods alive at the start run long (their lifetimes are
	// length-biased), so where they go decides much of a window of
	// weeks, and with one Start every policy starts from the same layout
	// and differs only in what it does as pods come and go.
	Start string
}

// Declaration is what a replay's pods declare of how long they run, as a
// Job's activeDeadlineSeconds or resfit.io/runs-for would.
type Declaration string

const (
	// DeclareNone: no pod says how long it runs.
	DeclareNone Declaration = "none"
	// DeclareExact: every pod says its lifetime.
	DeclareExact Declaration = "exact"
	// DeclareNoisy: every pod says its lifetime × e^N(0,σ), drawn for it
	// once (the median estimate right, half of them short).
	DeclareNoisy Declaration = "noisy"
	// DeclareLearned: no pod says how long it runs, and the replay
	// follows when they are expected to end by what it learned of the
	// pods that ended before (scoring/lifetime).
	DeclareLearned Declaration = "learned"
	// DeclareOracle: no pod says how long it runs, and the replay follows
	// when they are expected to end by a model that knows from the start
	// the distribution every lifetime is drawn from (each lifetime class's,
	// which is every shape's in it) and learns nothing more: the most a
	// model of pods by their kind can know, a bound on DeclareLearned
	// (the same term, the same model's prediction, no learning).
	DeclareOracle Declaration = "oracle"
)

// follows reports whether the replay follows when pods are expected to
// end, for the policy's lifetime term: whenever something is declared or
// learned.
func (s Spec) follows() bool { return s.Declare != "" && s.Declare != DeclareNone }

// Name says what the pods declare, when anything (the tables' setting
// after the add-ons'): "ends exact", "ends noisy σ=1", "ends learned";
// a resample of the multi-GPU lifetimes; a lifetime weight that is not
// the default; and the start's policy ("start FGD"). "" for none of these.
func (s Spec) Name() string {
	var parts []string
	switch s.Declare {
	case DeclareExact, DeclareLearned, DeclareOracle:
		parts = append(parts, "ends "+string(s.Declare))
	case DeclareNoisy:
		parts = append(parts, fmt.Sprintf("ends noisy σ=%g", s.sigma()))
	}
	if s.Resample != 0 {
		parts = append(parts, fmt.Sprintf("resample %d", s.Resample))
	}
	if s.LifetimeWeight != 0 && s.follows() {
		parts = append(parts, fmt.Sprintf("lifetime weight %g", s.LifetimeWeight))
	}
	if s.Start != "" {
		parts = append(parts, "start "+s.Start)
	}
	return strings.Join(parts, ", ")
}

// sigma is the noise's σ.
func (s Spec) sigma() float64 {
	if s.Sigma == 0 {
		return 1
	}
	return s.Sigma
}

// Check reports a spec that cannot run.
func (s Spec) Check() error {
	switch {
	case !(s.Load > 0 && s.Load <= 100):
		return fmt.Errorf("churn: load must be in (0, 100], got %v", s.Load)
	case !(s.WarmUp >= 0) || math.IsInf(s.WarmUp, 0):
		return fmt.Errorf("churn: warm-up must be a duration ≥ 0, got %v s", s.WarmUp)
	case !(s.Window > 0) || math.IsInf(s.Window, 0):
		return fmt.Errorf("churn: window must be a duration above 0, got %v s", s.Window)
	case s.Declare != "" && !slices.Contains([]Declaration{DeclareNone, DeclareExact, DeclareNoisy, DeclareLearned, DeclareOracle}, s.Declare):
		return fmt.Errorf("churn: declared lifetimes must be %q, %q, %q, %q or %q, got %q", DeclareNone, DeclareExact, DeclareNoisy, DeclareLearned, DeclareOracle, s.Declare)
	case !(s.Sigma >= 0 && s.Sigma <= 10):
		return fmt.Errorf("churn: the noise's σ must be in [0, 10], got %v", s.Sigma)
	case !(s.LifetimeWeight >= 0 && s.LifetimeWeight <= resource.MaxWeight):
		return fmt.Errorf("churn: the lifetime weight must be in [0, %d], got %v", resource.MaxWeight, s.LifetimeWeight)
	}
	if s.Start != "" {
		if _, err := s.StartPolicy(); err != nil {
			return err
		}
	}
	return nil
}

// StartPolicy is the policy Start names.
func (s Spec) StartPolicy() (sim.Policy, error) {
	ps, err := sim.Select(sim.Policies(), s.Start)
	switch {
	case err != nil:
		return sim.Policy{}, fmt.Errorf("churn: the start's policy: %w", err)
	case len(ps) != 1:
		return sim.Policy{}, fmt.Errorf("churn: the start's policy must be one, got %q", s.Start)
	}
	return ps[0], nil
}
