package churn

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resfit/resfit/bench/replay/sim"
)

// startInput is a small synthetic cluster, its lifetimes, and the pods
// alive at time 0 at load 1.2, so that some of them wait.
func startInput(t *testing.T) (sim.Input, *Lifetimes, []arrival, func() (arrival, bool)) {
	t.Helper()
	in := sim.Synthetic(sim.SyntheticSpec{Seed: 5, Nodes: 16})
	l, c := lifetimesOn(t, in)
	initial, next := poisson(l, 1.2, c.CapacityMilliGPU, 7)
	return in, l, initial, next
}

// opened is where each pod alive at time 0 is once the replay of policy
// under spec has placed them (-1: waiting), and the replay.
func opened(t *testing.T, in sim.Input, name string, spec Spec, initial []arrival) ([]int, *replay) {
	t.Helper()
	r, err := newReplay(policy(t, name), in, spec, AddOns{}, 7, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	placer, device := r.placer, r.device
	if err := r.open(initial); err != nil {
		t.Fatal(err)
	}
	if r.placer != placer || r.observing != nil || (device == nil) != (r.device == nil) {
		t.Fatalf("%s: after the start the replay does not place by its own policy again", name)
	}
	rows := make([]int, len(r.pods))
	for k, cp := range r.pods {
		rows[k] = cp.row
	}
	return rows, r
}

// With Spec.Start, the start's policy places the pods alive at time 0
// exactly where it places them as the policy replayed, and the policy
// replayed places the rest: BestFit started by FGD opens as FGD does
// (and the two open differently on their own, so the test can tell).
func TestChurnStartPlacesTheAlivePods(t *testing.T) {
	in, _, initial, _ := startInput(t)
	base := Spec{Load: 1.2, WarmUp: 3600, Window: 3600}
	fgd, _ := opened(t, in, "FGD", base, initial)
	bestFit, _ := opened(t, in, "BestFit", base, initial)
	if slices.Equal(fgd, bestFit) {
		t.Fatal("FGD and BestFit open the same: the test cannot tell who placed the start")
	}
	spec := base
	spec.Start = "FGD"
	started, r := opened(t, in, "BestFit", spec, initial)
	if diff := cmp.Diff(fgd, started); diff != "" {
		t.Errorf("BestFit started by FGD does not open as FGD (-FGD +started):\n%s", diff)
	}
	if r.opening == nil || r.opening.placer == r.placer {
		t.Error("the start's placer is the replayed policy's")
	}
}

// A start by the policy replayed is the replay without one, to the
// digit, but for the setting's name.
func TestChurnStartBySelfIsNoStart(t *testing.T) {
	in, l, _, _ := startInput(t)
	run := func(start string) *Result {
		spec := Spec{Load: 1.2, WarmUp: 3600, Window: 6 * 3600, Declare: DeclareNoisy, Start: start}
		r, err := newReplay(policy(t, "ResfitFrag"), in, spec, AddOns{}, 7, sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.opening != nil {
			t.Fatalf("start %q: a start's placer beside the policy's own", start)
		}
		initial, next := poisson(l, spec.Load, r.c.CapacityMilliGPU, 7)
		if err := r.run(initial, next); err != nil {
			t.Fatal(err)
		}
		return r.res
	}
	without, self := run(""), run("resfitfrag")
	if self.Setting != "none, ends noisy σ=1, start resfitfrag" {
		t.Errorf("setting %q", self.Setting)
	}
	self.Setting = without.Setting
	if diff := cmp.Diff(without, self); diff != "" {
		t.Errorf("started by itself (-without +self):\n%s", diff)
	}
}

// A start's policy that is not one is named in the error.
func TestChurnStartNamesAnUnknownPolicy(t *testing.T) {
	err := Spec{Load: 1, Window: 1, Start: "Tetris"}.Check()
	if err == nil || !strings.HasPrefix(err.Error(), `churn: the start's policy: unknown policy "Tetris"; known: Random,`) {
		t.Errorf("got %v", err)
	}
}
