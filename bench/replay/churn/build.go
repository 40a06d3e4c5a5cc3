package churn

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/resfit/resfit/bench/replay/sim"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/lifetime"
)

// AddOns are what a replay runs beside its loop, each with its own
// options; the zero value runs the metrics alone.
type AddOns struct {
	// Moves are the moves made as the replay goes (none by default).
	Moves Moves
	// Reserve is Volcano's job reservation, Starve starvation control
	// (off by default; one at most).
	Reserve Reservation
	Starve  Starvation
	// Floor, when above 0, has the replay compute every FloorEvery the
	// floor no plan of moves can go below (Result.Floor), for plans of
	// Floor × the running pods moves (a share: 0.01 is an hour's worth at
	// 1% of the running pods an hour).
	Floor float64
}

// Name is the add-ons as the tables' moves column names them: "none",
// "make-room k=2 1%/h every 10m", "make-room k=8 1%/h every 10m,
// reserve", "none, reserve every 10m", "drain 1%/h every 10m, starve
// after 1h, 8 holds (patience 2h)". A holder's rounds are said where
// no moves say them, or where they differ.
func (a AddOns) Name() string {
	moving := a.Moves.moving()
	var b strings.Builder
	b.WriteString(a.Moves.name())
	every := func(s float64) {
		if !moving || s != a.Moves.Every {
			fmt.Fprintf(&b, " every %gm", s/60)
		}
	}
	if a.Reserve.on() {
		b.WriteString(", reserve")
		every(a.Reserve.Every)
	}
	if s := a.Starve; s.on() {
		fmt.Fprintf(&b, ", starve after %s", shortDuration(s.After))
		if s.Holds > 1 {
			fmt.Fprintf(&b, ", %d holds", s.Holds)
		}
		if a.Moves.Method == Drain {
			fmt.Fprintf(&b, " (patience %s)", shortDuration(s.Patience))
		}
		every(s.Every)
	}
	return b.String()
}

// hours writes seconds as a duration in hours or minutes: "2h", "30m".
func shortDuration(s float64) string {
	return strings.TrimSuffix(strings.TrimSuffix(time.Duration(s*float64(time.Second)).String(), "0s"), "0m")
}

// Check reports add-ons that cannot run.
func (a AddOns) Check() error {
	for _, err := range []error{a.Moves.Check(), a.Reserve.Check(), a.Starve.Check()} {
		if err != nil {
			return err
		}
	}
	switch {
	case a.Reserve.on() && a.Starve.on():
		return errors.New("churn moves: a reservation (Reserve) and starvation control (Starve) both hold nodes; take one")
	case a.Moves.Method == Drain && !a.Reserve.on() && !a.Starve.on():
		return fmt.Errorf("churn moves: %q moves pods off the nodes a reservation locks or starvation control holds, and needs one of them (Reserve, Starve)", Drain)
	case !(a.Floor >= 0 && a.Floor <= 1):
		return fmt.Errorf("churn: the floor's moves must be a share of the running pods in [0, 1], got %v", a.Floor)
	}
	return nil
}

// Run replays a policy with departures on the input's nodes, with the
// add-ons beside the loop: the pods alive at time 0, then arrivals until
// the warm-up and window are over (the arrivals function, nil for the
// Poisson process of the lifetimes at the spec's load, gives them in time
// order, ok false when there are no more). The seed fixes the node
// priority, the draws and the Random policy's.
func Run(policy sim.Policy, in sim.Input, l *Lifetimes, spec Spec, add AddOns, seed uint64, opts sim.Options, arrivals func() (arrival, bool)) (*Result, error) {
	r, err := newReplay(policy, in, spec, add, seed, opts)
	if err != nil {
		return nil, err
	}
	if spec.Declare == DeclareOracle {
		if l == nil {
			return nil, errors.New("churn: the oracle's model needs the lifetimes arrivals are drawn from")
		}
		if err := r.seedOracle(l); err != nil {
			return nil, err
		}
	}
	var initial []arrival
	if arrivals == nil {
		if l == nil {
			return nil, errors.New("churn: no lifetimes to draw arrivals from")
		}
		initial, arrivals = poisson(l, spec.Load, r.c.CapacityMilliGPU, seed)
	}
	if err := r.run(initial, arrivals); err != nil {
		return nil, err
	}
	return r.res, nil
}

// settingOf names what ran beside the loop and what the pods declared.
func settingOf(add AddOns, spec Spec) string {
	if s := spec.Name(); s != "" {
		return add.Name() + ", " + s
	}
	return add.Name()
}

// newReplay is a replay with departures on an empty cluster, with its
// add-ons: the metrics (idle GPU, floor, waits), the reservation,
// starvation control and the moves. A round's holders come before its
// moves (drain moves pods off what they hold); the reports are in the
// order of churn.csv's columns.
func newReplay(policy sim.Policy, in sim.Input, spec Spec, add AddOns, seed uint64, opts sim.Options) (*replay, error) {
	if err := spec.Check(); err != nil {
		return nil, err
	}
	if err := add.Check(); err != nil {
		return nil, err
	}
	order, err := sim.NodeOrder(in.Nodes, seed, opts.Tiebreak)
	if err != nil {
		return nil, err
	}
	c, err := sim.NewCluster(sim.Schema(), in.Nodes, order)
	if err != nil {
		return nil, err
	}
	env := sim.Env{Seed: seed, Classes: in.Classes, FromScratch: opts.FromScratch, CoresPerGPU: in.CoresPerGPU(), LifetimeWeight: spec.LifetimeWeight, NodeSize: opts.NodeSize, NoNodeSize: opts.NoNodeSize}
	var ends *endsView
	if spec.follows() {
		opts := lifetime.ModelOptions{}
		if spec.Declare == DeclareOracle {
			opts.Window, opts.MinSamples = oracleWindow, oracleMinSamples
		}
		model, err := lifetime.NewModel(opts)
		if err != nil {
			return nil, err
		}
		ends = newEndsView(c.Table.Len(), model)
		env.Lifetimes = ends.tracker.Nodes()
	}
	pipe, device, err := policy.Build(c, env)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", policy.Name, err)
	}
	m, err := sim.Measure(in.Classes)
	if err != nil {
		return nil, err
	}
	r := &replay{c: c, device: device, spec: spec, shapeIDs: map[queueKey]int{}, onRow: make([][]int, c.Table.Len()), placing: -1,
		noise: rand.New(rand.NewPCG(seed, 0x6e6f697365)), res: &Result{Policy: policy.Name, Seed: seed, Load: spec.Load, Setting: settingOf(add, spec)}}
	idle, floor, waits, empty := newIdleMetric(r, m), newFloorMetric(r, add.Floor), &waitsMetric{r: r}, newEmptyMetric(r)
	resv, starve := newReserving(r, add.Reserve, add.Moves.Method == Drain), newStarving(r, add.Starve)
	var holder drainer = resv
	var filters []scoring.Filter
	if add.Reserve.on() {
		filters = append(filters, &resv.filter)
	}
	if add.Starve.on() {
		holder = starve
		filters = append(filters, &starve.filter)
	}
	moves := newMoving(r, add.Moves, m, holder)
	if len(filters) > 0 {
		if pipe, err = pipe.WithFilters(filters...); err != nil {
			return nil, err
		}
	}
	if r.placer, err = scoring.NewPlacer(pipe, c.Table, scoring.PlacerOptions{MaxClasses: sim.PlacerClasses}); err != nil {
		return nil, err
	}
	r.pipe = pipe
	if spec.Start != "" && !strings.EqualFold(spec.Start, policy.Name) {
		if r.opening, err = newOpening(spec, c, env, filters); err != nil {
			return nil, err
		}
	}
	r.addOns = []addOn{idle, floor, waits, empty}
	if ends != nil {
		ends.r = r
		r.addOns = append([]addOn{ends}, r.addOns...)
	}
	for _, x := range []struct {
		on bool
		addOn
	}{{add.Reserve.on(), resv}, {add.Starve.on(), starve}, {add.Moves.moving(), moves}} {
		if x.on {
			r.addOns = append(r.addOns, x.addOn)
		}
	}
	r.reporting = []addOn{idle, floor, waits, moves, resv, starve, empty}
	return r, nil
}

// opening is the policy that places the pods alive at time 0 when it is
// not the one replayed (Spec.Start): its pipeline, with the add-ons'
// filters, its placer on the same table, and its GPU choice.
type opening struct {
	pipe   *scoring.Pipeline
	placer *scoring.Placer
	device sim.DeviceChoice
}

// newOpening builds the start's policy on c, as newReplay builds the
// policy replayed.
func newOpening(spec Spec, c *sim.Cluster, env sim.Env, filters []scoring.Filter) (*opening, error) {
	policy, err := spec.StartPolicy()
	if err != nil {
		return nil, err
	}
	pipe, device, err := policy.Build(c, env)
	if err != nil {
		return nil, fmt.Errorf("the start's policy %s: %w", policy.Name, err)
	}
	if len(filters) > 0 {
		if pipe, err = pipe.WithFilters(filters...); err != nil {
			return nil, err
		}
	}
	placer, err := scoring.NewPlacer(pipe, c.Table, scoring.PlacerOptions{MaxClasses: sim.PlacerClasses})
	if err != nil {
		return nil, err
	}
	return &opening{pipe: pipe, placer: placer, device: device}, nil
}

// oracleWindow is the window of DeclareOracle's model: larger than any
// lifetime class's pool of lifetimes, so that it keeps every one.
const oracleWindow = 1 << 16

// oracleMinSamples is how many lifetimes longer than a pod's age
// DeclareOracle's model needs to predict: it keeps each class's whole
// pool, so a few past the age are all the class has there, not a small
// sample of more (the multi-GPU pool holds 74, fewer than the default
// asks for); 8, the default the bound was first measured with.
const oracleMinSamples = 8

// seedOracle has the model of a DeclareOracle replay see, under each
// lifetime class's key, every lifetime the class draws from.
func (r *replay) seedOracle(l *Lifetimes) error {
	for _, a := range r.addOns {
		x, ok := a.(*endsView)
		if !ok {
			continue
		}
		for c, pool := range l.byClass {
			if len(pool) > oracleWindow {
				return fmt.Errorf("churn: %d lifetimes of class %s, more than the oracle keeps (%d)", len(pool), lifetimeClassName(c), oracleWindow)
			}
			keys := []string{classKey(c)}
			for _, life := range pool {
				x.tracker.Model().Observe(keys, life)
			}
		}
	}
	return nil
}
