package churn

import (
	"fmt"
	"math"
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
	// default), their lifetime exactly, or with noise (DeclareNoisy).
	Declare Declaration
}

// Declaration is what a replay's pods declare of how long they run, as a
// Job's activeDeadlineSeconds or resfit.io/runs-for would.
type Declaration string

const (
	// DeclareNone: no pod says how long it runs.
	DeclareNone Declaration = "none"
	// DeclareExact: every pod says its lifetime.
	DeclareExact Declaration = "exact"
	// DeclareNoisy: every pod says its lifetime × e^N(0,1), drawn for it
	// once (the median estimate right, half of them short).
	DeclareNoisy Declaration = "noisy"
)

// Check reports a spec that cannot run.
func (s Spec) Check() error {
	switch {
	case !(s.Load > 0 && s.Load <= 100):
		return fmt.Errorf("churn: load must be in (0, 100], got %v", s.Load)
	case !(s.WarmUp >= 0) || math.IsInf(s.WarmUp, 0):
		return fmt.Errorf("churn: warm-up must be a duration ≥ 0, got %v s", s.WarmUp)
	case !(s.Window > 0) || math.IsInf(s.Window, 0):
		return fmt.Errorf("churn: window must be a duration above 0, got %v s", s.Window)
	case s.Declare != "" && s.Declare != DeclareNone && s.Declare != DeclareExact && s.Declare != DeclareNoisy:
		return fmt.Errorf("churn: declared lifetimes must be %q, %q or %q, got %q", DeclareNone, DeclareExact, DeclareNoisy, s.Declare)
	}
	return nil
}
