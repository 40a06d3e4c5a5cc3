package churn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gonum.org/v1/gonum/stat"
	"pgregory.net/rapid"

	"github.com/resfit/resfit/bench/replay/sim"
	"github.com/resfit/resfit/scoring/config"
	"github.com/resfit/resfit/scoring/lifetime"
)

// scripted gives the arrivals in order.
func scripted(as ...arrival) func() (arrival, bool) {
	return func() (arrival, bool) {
		if len(as) == 0 {
			return arrival{}, false
		}
		a := as[0]
		as = as[1:]
		return a, true
	}
}

// fataler is what the helpers need of a *testing.T or a *rapid.T.
type fataler interface {
	Helper()
	Fatal(args ...any)
}

func policy(t fataler, name string) sim.Policy {
	t.Helper()
	ps, err := sim.Select(sim.Policies(), name)
	if err != nil {
		t.Fatal(err)
	}
	return ps[0]
}

// handWorked is the replay TestChurnByHand works by hand, with a spec:
// one node of 2 GPUs, BestFit, and the arrivals of A, B and C.
func handWorked(t *testing.T, spec Spec) (*replay, []arrival) {
	t.Helper()
	gpu := func(name string, n int) sim.Pod {
		return sim.Pod{Name: name, MilliCPU: 1000, MemoryMiB: 1024, NumGPU: n, GPUMilli: 1000}
	}
	in := sim.Input{Nodes: []sim.Node{{Name: "n0", MilliCPU: 64000, MemoryMiB: 262144, GPUs: 2}}}
	in.Pods = []sim.Pod{gpu("A", 1), gpu("B", 2), gpu("C", 1)}
	in.Classes = sim.TypicalClasses(in.Pods, 1)
	r, err := newReplay(policy(t, "BestFit"), in, spec, AddOns{}, 42, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r, []arrival{{in.Pods[0], 0, 10}, {in.Pods[1], 1, 5}, {in.Pods[2], 2, 3}}
}

// One node of 2 GPUs, worked by hand over a window of 20 s: A (1 GPU)
// arrives at 0 for 10 s; B (2 GPUs) at 1 for 5 s, and waits; C (1 GPU) at
// 2 for 3 s, and fits beside A. C leaves at 5 (B still waits: A holds a
// GPU), A at 10, and B starts then, to leave at 15.
//
// Idle GPUs: 1 on [0, 2), 0 on [2, 5), 1 on [5, 10), 0 on [10, 15), 2 on
// [15, 20): 17 GPU-seconds, 42.5% of 2 GPUs × 20 s. B waits on [1, 10):
// 45% of the window, with 1 + 5 = 6 GPU-seconds idle, 15%. Waits: A and C
// 0, B 9 s.
func TestChurnByHand(t *testing.T) {
	r, arrivals := handWorked(t, Spec{Load: 1, Window: 20})
	if err := r.run(nil, scripted(arrivals...)); err != nil {
		t.Fatal(err)
	}
	res, idle := r.res, r.res.Idle()
	if idle.Idle != 42.5 || idle.WhileWaiting != 15 || idle.WaitingShare != 45 || res.Events != 6 || res.Arrivals != 3 {
		t.Errorf("idle %v, idle while waiting %v, waiting %v%%, %d events, %d arrivals; want 42.5, 15, 45, 6, 3",
			idle.Idle, idle.WhileWaiting, idle.WaitingShare, res.Events, res.Arrivals)
	}
	if len(idle.Hourly) != 1 || idle.Hourly[0] != 42.5 || len(idle.HourlyWhileWaiting) != 1 || idle.HourlyWhileWaiting[0] != 15 {
		t.Errorf("hourly %v, while waiting %v; want [42.5], [15] (the window is 20 s of one hour)", idle.Hourly, idle.HourlyWhileWaiting)
	}
	if w := res.Waits().BySize[Size1]; w != (WaitStats{Arrived: 2, Started: 2}) {
		t.Errorf("1-GPU waits %+v", w)
	}
	if w := res.Waits().BySize[Size2]; w != (WaitStats{Arrived: 1, Started: 1, Mean: 9, P50: 9, P95: 9, P99: 9}) {
		t.Errorf("2-GPU waits %+v", w)
	}
	if got := [3]float64{r.pods[0].started, r.pods[1].started, r.pods[2].started}; got != [3]float64{0, 10, 2} {
		t.Errorf("started %v", got)
	}
}

// Two nodes of 64 cores and 2 GPUs, a and b, BestFit, ties to the name
// that sorts first, worked by hand with and without a reservation (rounds
// every 600 s) over 40,000 s:
//   - p1 (60 cores, 1 GPU) arrives at 0 for 3,600 s and goes to a; p2 (the
//     same) at 1 for 36,000 s, to b (a has 4 cores left).
//   - B (2 cores, 2 GPUs) arrives at 10 for 1,000 s and waits.
//   - With a reservation, the round at 600 elects B and locks a (both
//     nodes have 1 GPU idle; a's name sorts first). s (2 cores, 1 GPU)
//     arrives at 700 for 50,000 s and goes to b. p1 leaves a at 3,600, B
//     starts there, which ends the reservation: 6 rounds held a lock, 1
//     node-hour. Idle GPUs while B waits: 2 on [10, 700), 1 on [700,
//     3,600): 4,280 GPU-seconds, 2.675% of 4 GPUs × 40,000 s.
//   - Without, s goes to a (the tie), p1's leaving frees 1 GPU there, and B
//     waits for p2 to leave b at 36,001.
func TestChurnReservationByHand(t *testing.T) {
	pod := func(name string, cores, gpus int) sim.Pod {
		return sim.Pod{Name: name, MilliCPU: int64(cores) * 1000, MemoryMiB: 1024, NumGPU: gpus, GPUMilli: 1000}
	}
	in := sim.Input{Nodes: []sim.Node{{Name: "a", MilliCPU: 64000, MemoryMiB: 262144, GPUs: 2}, {Name: "b", MilliCPU: 64000, MemoryMiB: 262144, GPUs: 2}}}
	in.Pods = []sim.Pod{pod("p1", 60, 1), pod("p2", 60, 1), pod("B", 2, 2), pod("s", 2, 1)}
	in.Classes = sim.TypicalClasses(in.Pods, 1)
	for _, reserve := range []bool{true, false} {
		var add AddOns
		if reserve {
			add.Reserve = Reservation{Every: 600}
		}
		r, err := newReplay(policy(t, "BestFit"), in, Spec{Load: 1, Window: 40000}, add, 42, sim.Options{Tiebreak: sim.TiebreakName})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.run(nil, scripted(arrival{in.Pods[0], 0, 3600}, arrival{in.Pods[1], 1, 36000},
			arrival{in.Pods[2], 10, 1000}, arrival{in.Pods[3], 700, 50000})); err != nil {
			t.Fatal(err)
		}
		nodeOf := func(k int) string {
			if row := r.pods[k].row; row >= 0 {
				return r.c.Table.Name(row)
			}
			return "-"
		}
		big, s, reserved := r.pods[2], r.pods[3], r.res.Reserved()
		if reserve {
			if big.started != 3600 || nodeOf(3) != "b" || reserved.Targets != 1 || reserved.Started != 1 ||
				math.Abs(reserved.NodeHours-1) > 1e-9 || math.Abs(r.res.Idle().WhileWaiting-2.675) > 1e-9 {
				t.Errorf("with a reservation: B started at %v, s on %s, %+v, idle while waiting %v; want 3600, b, 1 target started, 1 node-hour, 2.675",
					big.started, nodeOf(3), reserved, r.res.Idle().WhileWaiting)
			}
			continue
		}
		if big.started != 36001 || s.row < 0 || nodeOf(3) != "a" || reserved != (ReserveStats{}) {
			t.Errorf("without: B started at %v, s on %s, %+v; want 36001, a, nothing reserved", big.started, nodeOf(3), reserved)
		}
	}
}

// Drain, worked by hand: two nodes of 2 GPUs, four single-GPU pods on
// them (BestFit packs p1 and p2 on a, p3 and p4 on b), p1 and p3 leave,
// and a 2-GPU pod, B, arrives that fits neither. At the first round with a
// move in its allowance (3,600 s: two pods running, 100% of them an hour)
// the reservation locks a for B, the round moves p2 to b's free GPU, and B
// starts there and then; with the reservation alone B waits until p2
// leaves (36,001 s). The moved pod keeps its departure.
func TestChurnDrainByHand(t *testing.T) {
	pod := func(name string, gpus int) sim.Pod {
		return sim.Pod{Name: name, MilliCPU: 2000, MemoryMiB: 1024, NumGPU: gpus, GPUMilli: 1000}
	}
	in := sim.Input{Nodes: []sim.Node{{Name: "a", MilliCPU: 64000, MemoryMiB: 262144, GPUs: 2}, {Name: "b", MilliCPU: 64000, MemoryMiB: 262144, GPUs: 2}}}
	in.Pods = []sim.Pod{pod("p1", 1), pod("p2", 1), pod("p3", 1), pod("p4", 1), pod("B", 2)}
	in.Classes = sim.TypicalClasses(in.Pods, 1)
	for _, method := range []sim.DefragMethod{Drain, sim.NoMoves} {
		add := AddOns{Moves: Moves{Method: method, Every: 3600, PerHour: 1}, Reserve: Reservation{Every: 3600}}
		r, err := newReplay(policy(t, "BestFit"), in, Spec{Load: 1, Window: 40000}, add, 42, sim.Options{Tiebreak: sim.TiebreakName})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.run(nil, scripted(arrival{in.Pods[0], 0, 100}, arrival{in.Pods[1], 1, 36000}, arrival{in.Pods[2], 2, 198},
			arrival{in.Pods[3], 3, 36000}, arrival{in.Pods[4], 300, 1000})); err != nil {
			t.Fatal(err)
		}
		big := r.pods[4]
		want, moves := 36001.0, 0
		if method == Drain {
			want, moves = 3600, 1
		}
		moved, reserved := r.res.Moved(), r.res.Reserved()
		if big.started != want || moved.Moves != moves || moved.Placed != moves || reserved.Started != 1 {
			t.Errorf("%s: B started at %v after %d moves, %d placed by moves, %+v; want %v, %d moves and as many placed, 1 target started",
				method, big.started, moved.Moves, moved.Placed, reserved, want, moves)
		}
		if r.pods[1].ends != 36001 || r.pods[3].ends != 36003 {
			t.Errorf("%s: p2 and p4 end at %v and %v, not 36001 and 36003", method, r.pods[1].ends, r.pods[3].ends)
		}
	}
}

// Which nodes drain may lock, worked by hand: a 2-GPU pod B waits on
// three nodes of 2 GPUs, each with one GPU free or none. a (96 cores)
// holds a single-GPU pod of 60 cores that fits no other node (b has 56
// cores free, c no GPU); b holds one of 8 cores, which fits a (36 cores
// and a GPU free); c holds two of 2 cores, each of which fits a or b.
// IdleFirst ranks a first (one GPU free, like b; then by name), but only
// b and c can be drained for B: with drain the reservation locks b, with
// the reservation alone a. A 2-GPU pod of 90 cores, H, has waited longer
// than B and fits only a: the reservation alone elects H, drain B, for
// which a node can be drained.
func TestChurnDrainLocksWhatItCanDrain(t *testing.T) {
	pod := func(name string, cores int64) sim.Pod {
		return sim.Pod{Name: name, MilliCPU: cores * 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 1000}
	}
	in := sim.Input{Nodes: []sim.Node{{Name: "a", MilliCPU: 96000, MemoryMiB: 262144, GPUs: 2},
		{Name: "b", MilliCPU: 64000, MemoryMiB: 262144, GPUs: 2}, {Name: "c", MilliCPU: 64000, MemoryMiB: 262144, GPUs: 2}}}
	running := []struct {
		pod sim.Pod
		row int
	}{{pod("wide", 60), 0}, {pod("small", 8), 1}, {pod("c1", 2), 2}, {pod("c2", 2), 2}}
	for _, x := range running {
		in.Pods = append(in.Pods, x.pod)
	}
	in.Classes = sim.TypicalClasses(in.Pods, 1)
	big := sim.Pod{Name: "B", MilliCPU: 4000, MemoryMiB: 1024, NumGPU: 2, GPUMilli: 1000}
	for _, method := range []sim.DefragMethod{Drain, sim.NoMoves} {
		add := AddOns{Moves: Moves{Method: method, Every: 3600, PerHour: 1}, Reserve: Reservation{Every: 3600}}
		r, err := newReplay(policy(t, "BestFit"), in, Spec{Load: 1, Window: 1}, add, 42, sim.Options{Tiebreak: sim.TiebreakName})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range running {
			if err := r.start(r.add(arrival{pod: x.pod}), x.row, 0); err != nil {
				t.Fatal(err)
			}
		}
		resv := addOnOf[*reserving](r)
		if method == Drain {
			v := resv.drainView()
			var got []bool
			for row := range in.Nodes {
				got = append(got, v.usable(big, row))
			}
			if want := []bool{false, true, true}; !slices.Equal(got, want) {
				t.Errorf("drain may lock a, b, c: %v, want %v", got, want)
			}
		}
		huge := sim.Pod{Name: "H", MilliCPU: 90000, MemoryMiB: 1024, NumGPU: 2, GPUMilli: 1000}
		for i, p := range []sim.Pod{huge, big} {
			if err := r.wait(r.add(arrival{pod: p, at: float64(i)})); err != nil {
				t.Fatal(err)
			}
		}
		r.now = 3600
		if err := resv.reserve(); err != nil {
			t.Fatal(err)
		}
		target := r.pods[resv.target].pod.Name
		want := map[sim.DefragMethod][2]string{Drain: {"B", "b"}, sim.NoMoves: {"H", "a"}}[method]
		if locked := resv.state.Locked; target != want[0] || !slices.Equal(locked, []string{want[1]}) {
			t.Errorf("%s: the reservation is for %s and locks %v, want %s and %s", method, target, locked, want[0], want[1])
		}
	}
}

// The arrivals offer the load asked for: over a long run, the GPU time
// they ask for (GPUs × lifetime, summed) per unit of time is within 1% of
// load × capacity, on the trace's pods and lifetimes (or the synthetic
// workload's without the trace).
func TestChurnOffersTheLoad(t *testing.T) {
	skipUnderRace(t) // 40 million draws on one goroutine
	l, c := lifetimesOn(t, churnInput(t))
	for _, load := range []float64{0.9, 1.3} {
		_, next := poisson(l, load, c.CapacityMilliGPU, 7)
		var offered float64
		var a arrival
		for range 20_000_000 {
			a, _ = next()
			offered += float64(a.pod.TotalMilliGPU()) * a.life
		}
		got := offered / a.at / float64(c.CapacityMilliGPU)
		if math.Abs(got/load-1) > 0.01 {
			t.Errorf("load %v: the arrivals offer %.4f of the capacity", load, got)
		}
		t.Logf("load %v: offered %.4f over %.0f days", load, got, a.at/86400)
	}
}

// lifetimesOn is the input's lifetimes and its cluster, empty.
func lifetimesOn(t *testing.T, in sim.Input) (*Lifetimes, *sim.Cluster) {
	t.Helper()
	l, err := NewLifetimes(in.Pods)
	if err != nil {
		t.Fatal(err)
	}
	c, err := sim.NewCluster(sim.Schema(), in.Nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	return l, c
}

// The lifetimes drawn for each class follow the class's lifetimes in the
// list: two-sample Kolmogorov–Smirnov distance under the 1% critical
// value, 1.63 √((n + m)/(n m)).
func TestChurnLifetimesFollowTheList(t *testing.T) {
	in := churnInput(t)
	l, err := NewLifetimes(in.Pods)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	drawn := make([][]float64, len(l.byClass))
	for len(drawn[Size1]) < 20_000 || len(drawn[SizeCPU]) < 20_000 || len(drawn[SizeShare]) < 20_000 || len(drawn[Size2]) < 2_000 {
		p, life := l.draw(rng)
		drawn[lifetimeClass(p)] = append(drawn[lifetimeClass(p)], life)
	}
	for c, xs := range drawn {
		list := l.Class(c)
		if len(list) == 0 {
			continue
		}
		slices.Sort(xs)
		d := stat.KolmogorovSmirnov(xs, nil, list, nil)
		n, m := float64(len(xs)), float64(len(list))
		if limit := 1.63 * math.Sqrt((n+m)/(n*m)); d > limit {
			t.Errorf("%s: KS distance %.4f over %.4f", lifetimeClassName(c), d, limit)
		}
	}
}

// skipUnderRace skips a test that takes minutes on one goroutine under
// the race detector (.ci/run runs it without).
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("a long replay on one goroutine: run without -race (.ci/run does)")
	}
}

// churnInput is the trace when it is there, else the synthetic workload
// with lifetimes.
func churnInput(t testing.TB) sim.Input {
	t.Helper()
	if dir := sim.FindTrace(); dir != "" {
		in, err := sim.ReadTrace(dir)
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	return sim.Synthetic(sim.SyntheticSpec{Seed: 1, Nodes: 60})
}

// Random small clusters and arrivals, with and without moves in the loop:
// at the end every node holds exactly what the pods on it ask for (cpu,
// memory, GPU, each GPU's share), no pod is on a node and waiting, each
// running pod leaves one lifetime after it started (a moved pod keeps
// what it had left), and the waiting pods fit nowhere (with a reservation,
// as its filter lets them); at every floor computed, the shares' waste is
// at least 0 and at most the moves' floor, and that at most the idle GPU.
func TestChurnKeepsTheBooks(t *testing.T) {
	skipUnderRace(t) // one goroutine, a minute under race
	t.Parallel()
	in := sim.Synthetic(sim.SyntheticSpec{Seed: 3, Nodes: 12})
	l, err := NewLifetimes(in.Pods)
	if err != nil {
		t.Fatal(err)
	}
	policies := []string{"BestFit", "FGD", "ResfitFrag", "Random"}
	sharesBound := 0 // floors at which the shares' waste was above 0
	rapid.Check(t, func(t *rapid.T) {
		name := rapid.SampledFrom(policies).Draw(t, "policy")
		load := rapid.Float64Range(0.3, 2).Draw(t, "load")
		seed := rapid.Uint64Range(0, 1000).Draw(t, "seed")
		spec := Spec{Load: load, WarmUp: 3600, Window: rapid.Float64Range(600, 6*3600).Draw(t, "window"),
			Declare: rapid.SampledFrom([]Declaration{DeclareNone, DeclareExact, DeclareNoisy, DeclareLearned, DeclareOracle}).Draw(t, "declare"),
			Sigma:   rapid.SampledFrom([]float64{0, 0.5, 2}).Draw(t, "sigma")}
		r, err := newReplay(policy(t, name), in, spec, drawAddOns(t), seed, sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		addOnOf[*floorMetric](r).seen = func(idle, floor, share float64) {
			if !(share >= 0 && share <= floor && floor <= idle) {
				t.Fatalf("at %.0f s: %.0f milli-GPU idle, floors %.0f (moves) and %.0f (shares)", r.now, idle, floor, share)
			}
			if share > 0 {
				sharesBound++
			}
		}
		r.addOns = append(r.addOns, &auditor{t: t, r: r})
		initial, next := poisson(l, load, r.c.CapacityMilliGPU, seed)
		if err := r.run(initial, next); err != nil {
			t.Fatal(err)
		}
		checkBooks(t, r)
	})
	if sharesBound == 0 {
		t.Error("no floor found the shares' waste above 0")
	}
}

// drawAddOns draws what runs beside the loop: any moves, a reservation
// or starvation control (one of them with drain), a floor.
func drawAddOns(t *rapid.T) AddOns {
	var add AddOns
	every := func(name string) float64 { return rapid.Float64Range(300, 3600).Draw(t, name) }
	method := rapid.SampledFrom([]sim.DefragMethod{sim.NoMoves, sim.MakeRoom, sim.GiveBack, sim.FragMultiPod, Drain}).Draw(t, "moves")
	if method != sim.NoMoves {
		add.Moves = Moves{Method: method, Every: every("moves every"), K: rapid.IntRange(1, 3).Draw(t, "k"),
			PerHour: rapid.Float64Range(0.01, 1).Draw(t, "per hour")}
	}
	switch holder := rapid.SampledFrom([]string{"none", "reserve", "starve"}).Draw(t, "holder"); {
	case holder == "reserve" || holder == "none" && method == Drain:
		add.Reserve = Reservation{Every: every("reserve every")}
	case holder == "starve":
		add.Starve = Starvation{Every: every("starve every"), After: rapid.Float64Range(0, 7200).Draw(t, "after"),
			Patience: rapid.Float64Range(0, 7200).Draw(t, "patience"), Holds: rapid.IntRange(0, 4).Draw(t, "holds")}
	}
	if rapid.Bool().Draw(t, "floors") {
		add.Floor = rapid.Float64Range(0, 0.1).Draw(t, "floor's moves")
	}
	return add
}

// addOnOf is the replay's add-on of type A.
func addOnOf[A addOn](r *replay) A {
	for _, x := range r.reporting {
		if a, ok := x.(A); ok {
			return a
		}
	}
	panic("no such add-on") // a programming error in a test
}

// auditor holds, after every event, what the add-ons count of the pods
// on each row to the loop's books (checkCounts).
type auditor struct {
	quiet
	t *rapid.T
	r *replay
}

func (a *auditor) on(event) error { checkCounts(a.t, a.r); return nil }
func (a *auditor) report() Report { return nil }

// checkBooks holds a replay's state to its pods.
func checkBooks(t *rapid.T, r *replay) {
	checkCounts(t, r)
	c := r.c
	used := make([][3]int64, c.Table.Len())
	free := make([][]int64, c.Table.Len())
	for i := range free {
		free[i] = slices.Repeat([]int64{1000}, c.Nodes[i].GPUs)
	}
	ends := map[int]float64{} // each pod's departure, the stale ones of evicted pods left out
	for _, d := range r.ends {
		if d.gen == r.pods[d.pod].gen {
			if _, dup := ends[d.pod]; dup {
				t.Fatalf("pod %d leaves twice", d.pod)
			}
			ends[d.pod] = d.at
		}
	}
	waiting := map[int]bool{}
	for _, q := range r.queues {
		for _, k := range q {
			waiting[k] = true
		}
	}
	for k, cp := range r.pods {
		// Waiting (not started, in a queue), running (on a row, its end
		// ahead) or gone (started, on no row, no end ahead): one of them.
		// An evicted pod waiting to run again started before, and keeps
		// what it had left of its lifetime.
		_, ending := ends[k]
		evicted := !math.IsNaN(cp.left)
		running, gone := cp.row >= 0 && ending, cp.row < 0 && !ending && !math.IsNaN(cp.started) && !evicted
		if waiting[k] != (math.IsNaN(cp.started) || evicted) || waiting[k] && (cp.row >= 0 || ending) || !waiting[k] && running == gone {
			t.Fatalf("pod %d: on row %d, waiting %v, started %v, leaving %v", k, cp.row, waiting[k], cp.started, ending)
		}
		if evicted && !(cp.left > 0 && cp.left <= cp.life) {
			t.Fatalf("evicted pod %d has %v of its %v left", k, cp.left, cp.life)
		}
		if !running {
			continue
		}
		if ends[k] != cp.ends || math.Abs(ends[k]-(cp.started+cp.life+cp.waited)) > 1e-6 {
			t.Fatalf("pod %d started at %v with %v to live (evicted, waited %v) leaves at %v", k, cp.started, cp.life, cp.waited, ends[k])
		}
		used[cp.row][0] += cp.pod.MilliCPU
		used[cp.row][1] += cp.pod.MemoryMiB << 20
		used[cp.row][2] += cp.pod.TotalMilliGPU()
		for _, j := range cp.holds {
			free[cp.row][j] -= cp.pod.GPUMilli
		}
	}
	for i := range c.Table.Len() {
		u := c.Table.Used(i)
		if fmt.Sprint(u) != fmt.Sprint(used[i][:]) || !slices.Equal(c.GPUs.Free(i), free[i]) {
			t.Fatalf("node %s: used %v, its pods %v; GPUs free %v, its pods leave %v", c.Table.Name(i), u, used[i], c.GPUs.Free(i), free[i])
		}
		for _, f := range free[i] {
			if f < 0 {
				t.Fatalf("node %s: GPUs over-committed: %v", c.Table.Name(i), free[i])
			}
		}
	}
	var asked int64
	for k := range waiting {
		asked += r.pods[k].pod.TotalMilliGPU()
	}
	if asked != r.waitMilli {
		t.Fatalf("the waiting pods ask for %d milli-GPU, the replay counts %d", asked, r.waitMilli)
	}
	// A held row admits a pod by when it says it ends, against its
	// target's shadow time, which changes as time passes: with starvation
	// control the waiting pods fit no row that is not held.
	best := r.best
	if slices.Contains(r.addOns, addOn(addOnOf[*starving](r))) {
		best = r.bestMove
	}
	for k := range waiting {
		if row, err := best(k); err != nil || row >= 0 {
			t.Fatalf("pod %d waits though it fits row %d (%v)", k, row, err)
		}
	}
}

// Starvation control, worked by hand: nodes a and b of 2 GPUs; BestFit
// (ties by name) puts p1 (1 GPU, 3,600 s) and p2 (36,000 s) on a, p3
// (7,200 s, from 2 s) on b; B (2 GPUs) arrives at 10 s and fits neither.
// At the round of 1,200 s it has waited over 600 s and is elected; with
// the pods' lifetimes declared, b frees first (7,202 s, a at 36,000 s), so
// b is held. s1 (1 GPU, 1,000 s from 1,300 s) ends before b frees and
// backfills b's free GPU; s2 (10,000 s from 2,400 s) would not, is kept
// off b, and starts on a when p1 leaves at 3,600 s; B starts on b at
// 7,202 s. With no lifetime declared the hold is the same (b has fewer
// pods in B's way), but nothing backfills it: s1 waits for p1 to leave a
// (3,600 s), and s2 for s1 (4,600 s), B starting on b at 7,202 s all the
// same. Either way the hold is seen by the rounds of 1,800 to 7,200 s:
// 10 rounds of 600 s, 10/6 node-hours.
// Without starvation control s2 takes b's free GPU at 2,400 s and B waits
// until s2 leaves, at 12,400 s.
func TestChurnStarvationByHand(t *testing.T) {
	pod := func(name string, gpus int) sim.Pod {
		return sim.Pod{Name: name, MilliCPU: 1000, MemoryMiB: 1024, NumGPU: gpus, GPUMilli: 1000}
	}
	in := sim.Input{Nodes: []sim.Node{{Name: "a", MilliCPU: 64000, MemoryMiB: 262144, GPUs: 2}, {Name: "b", MilliCPU: 64000, MemoryMiB: 262144, GPUs: 2}}}
	in.Pods = []sim.Pod{pod("p1", 1), pod("p2", 1), pod("p3", 1), pod("B", 2), pod("s1", 1), pod("s2", 1)}
	in.Classes = sim.TypicalClasses(in.Pods, 1)
	for _, c := range []struct {
		name             string
		starve           bool
		declare          Declaration
		started          [6]float64 // p1, p2, p3, B, s1, s2
		targets, backed  int
		nodeHours, waitB float64
	}{
		{"declared", true, DeclareExact, [6]float64{0, 1, 2, 7202, 1300, 3600}, 1, 1, 10.0 / 6, 7192},
		{"undeclared", true, DeclareNone, [6]float64{0, 1, 2, 7202, 3600, 4600}, 1, 0, 10.0 / 6, 7192},
		{"no control", false, DeclareExact, [6]float64{0, 1, 2, 12400, 1300, 2400}, 0, 0, 0, 12390},
	} {
		var add AddOns
		if c.starve {
			add.Starve = Starvation{Every: 600, After: 600}
		}
		r, err := newReplay(policy(t, "BestFit"), in, Spec{Load: 1, Window: 40000, Declare: c.declare}, add, 42, sim.Options{Tiebreak: sim.TiebreakName})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.run(nil, scripted(arrival{in.Pods[0], 0, 3600}, arrival{in.Pods[1], 1, 36000}, arrival{in.Pods[2], 2, 7200},
			arrival{in.Pods[3], 10, 1000}, arrival{in.Pods[4], 1300, 1000}, arrival{in.Pods[5], 2400, 10000})); err != nil {
			t.Fatal(err)
		}
		var started [6]float64
		for k := range started {
			started[k] = r.pods[k].started
		}
		st, waitB := r.res.Starved(), r.res.Waits().BySize[Size2].Mean
		if started != c.started || st.Targets != c.targets || st.Started != c.targets || st.Backfilled != c.backed ||
			math.Abs(st.NodeHours-c.nodeHours) > 1e-9 || waitB != c.waitB {
			t.Errorf("%s: started %v, %+v, B waited %v; want %v, %d targets started, %d backfilled, B waiting %v",
				c.name, started, st, waitB, c.started, c.targets, c.backed, c.waitB)
		}
	}
}

// The same replay as TestChurnByHand with the first 5 s a warm-up: the
// window [5, 20) sees 1 GPU idle on [5, 10), none on [10, 15), 2 on
// [15, 20): 15 GPU-seconds of 30, 50%; B waits on [5, 10), a third of the
// window, with 5 GPU-seconds idle (16.67%). No pod arrived in the window,
// so no wait is counted; B's 2 GPUs wait as the window starts, none as it
// ends.
func TestChurnWarmUpByHand(t *testing.T) {
	r, arrivals := handWorked(t, Spec{Load: 1, WarmUp: 5, Window: 15})
	if err := r.run(nil, scripted(arrivals...)); err != nil {
		t.Fatal(err)
	}
	idle, waits := r.res.Idle(), r.res.Waits()
	if idle.Idle != 50 || math.Abs(idle.WhileWaiting-50.0/3) > 1e-12 || math.Abs(idle.WaitingShare-100.0/3) > 1e-12 || r.res.Arrivals != 0 ||
		waits != (WaitsReport{AtStart: 2000}) {
		t.Errorf("idle %v, idle while waiting %v, waiting %v%%, %d arrivals, waits %+v",
			idle.Idle, idle.WhileWaiting, idle.WaitingShare, r.res.Arrivals, waits)
	}
}

// A percentile is the smallest value at least that share of the values
// are no greater than.
func TestPercentile(t *testing.T) {
	xs := make([]float64, 200)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	for _, c := range []struct{ q, want float64 }{{0.5, 100}, {0.95, 190}, {0.99, 198}, {1, 200}, {0, 1}} {
		if got := percentile(xs, c.q); got != c.want {
			t.Errorf("q %v of 1..200: %v, want %v", c.q, got, c.want)
		}
	}
	if got := percentile([]float64{7}, 0.99); got != 7 {
		t.Errorf("one value: %v", got)
	}
}

// TestLifetimesResample: a bootstrap resample replaces only the
// multi-GPU lifetimes, by as many drawn from them, the same for the same
// seed, and another for another seed.
func TestLifetimesResample(t *testing.T) {
	pods := churnInput(t).Pods
	base, err := NewLifetimes(pods)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := newLifetimes(pods, 1)
	b, _ := newLifetimes(pods, 1)
	c, _ := newLifetimes(pods, 2)
	for class := range Size2 {
		if !slices.Equal(a.Class(class), base.Class(class)) {
			t.Errorf("class %d changed", class)
		}
	}
	multi := base.Class(Size2)
	if len(a.Class(Size2)) != len(multi) || !slices.Equal(a.Class(Size2), b.Class(Size2)) || slices.Equal(a.Class(Size2), c.Class(Size2)) {
		t.Errorf("resamples: %d of %d; same seed alike %v; other seed alike %v", len(a.Class(Size2)), len(multi),
			slices.Equal(a.Class(Size2), b.Class(Size2)), slices.Equal(a.Class(Size2), c.Class(Size2)))
	}
	for _, x := range a.Class(Size2) {
		if _, found := slices.BinarySearch(multi, x); !found {
			t.Errorf("resampled lifetime %v is not one of the list's", x)
		}
	}
}

// checkCounts holds what the add-ons count of the pods on each row to the
// loop's lists: the empty 8-GPU nodes, the pods whose ends are followed.
func checkCounts(t *rapid.T, r *replay) {
	c := r.c
	empty := addOnOf[*emptyMetric](r)
	n := 0
	for row := range c.Table.Len() {
		if empty.eight[row] && len(r.onRow[row]) == 0 {
			n++
		}
	}
	if n != empty.empty {
		t.Fatalf("%d 8-GPU nodes are empty, the metric counts %d", n, empty.empty)
	}
	for _, x := range r.addOns {
		if v, ok := x.(*endsView); ok {
			for row := range c.Table.Len() {
				if e := v.tracker.Nodes().Row(row); e.Pods != len(r.onRow[row]) {
					t.Fatalf("row %d runs %d pods, the lifetime view follows %d", row, len(r.onRow[row]), e.Pods)
				}
			}
		}
	}
}

// TestEmptyMetricByHand: two 8-GPU nodes and a 2-GPU one; the metric
// counts an 8-GPU node empty when its last pod leaves by any way (ends,
// is evicted, moves off) and no longer when one comes, and averages the
// count over the window only.
func TestEmptyMetricByHand(t *testing.T) {
	in := sim.Input{Nodes: []sim.Node{{Name: "a", MilliCPU: 64000, MemoryMiB: 262144, GPUs: 8},
		{Name: "b", MilliCPU: 64000, MemoryMiB: 262144, GPUs: 8}, {Name: "c", MilliCPU: 64000, MemoryMiB: 262144, GPUs: 2}}}
	in.Pods = []sim.Pod{{Name: "p", MilliCPU: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 1000}}
	in.Classes = sim.TypicalClasses(in.Pods, 1)
	r, err := newReplay(policy(t, "BestFit"), in, Spec{Load: 1, WarmUp: 10, Window: 100}, AddOns{}, 42, sim.Options{Tiebreak: sim.TiebreakName})
	if err != nil {
		t.Fatal(err)
	}
	x := addOnOf[*emptyMetric](r)
	row := func(name string) int {
		for i, n := range r.c.Nodes {
			if n.Name == name {
				return i
			}
		}
		t.Fatalf("no node %s", name)
		return -1
	}
	a, b, c := row("a"), row("b"), row("c")
	step := func(kind eventKind, to, from int, pods map[int][]int, want int) {
		t.Helper()
		for i := range r.onRow {
			r.onRow[i] = pods[i]
		}
		if err := x.on(event{kind: kind, row: to, from: from}); err != nil {
			t.Fatal(err)
		}
		if x.empty != want {
			t.Fatalf("after %v on row %d: %d empty, want %d", kind, to, x.empty, want)
		}
	}
	if x.nodes != 2 || x.empty != 2 {
		t.Fatalf("%d 8-GPU nodes, %d empty; want 2, 2", x.nodes, x.empty)
	}
	step(podStarted, a, -1, map[int][]int{a: {1}}, 1)
	step(podStarted, c, -1, map[int][]int{a: {1}, c: {2}}, 1) // not an 8-GPU node
	x.advance(0, 30)                                          // 20 s of the window with one empty
	step(podMoved, b, a, map[int][]int{b: {1}, c: {2}}, 1)
	step(podStarted, a, -1, map[int][]int{a: {3}, b: {1}, c: {2}}, 0)
	x.advance(30, 50) // 20 s with none
	step(podEvicted, a, -1, map[int][]int{b: {1}, c: {2}}, 1)
	step(podEnded, b, -1, map[int][]int{c: {2}}, 2)
	x.advance(50, 110) // 60 s with both
	// (20 × 1 + 20 × 0 + 60 × 2) / 100 s / 2 nodes = 70%
	if got := x.report().(EmptyReport); got.Empty8 != 70 || got.Nodes8 != 2 {
		t.Errorf("report %+v, want 70%% of 2 nodes", got)
	}
}

// TestLifetimeWeightReachesResfitFrag: where the replay follows ends,
// ResfitFrag weighs them at its defaults (declared ends 30, learned 1000,
// a scorer each), or at the spec's one weight for both; where it follows
// none, there is no lifetime term.
func TestLifetimeWeightReachesResfitFrag(t *testing.T) {
	in := sim.Synthetic(sim.SyntheticSpec{Seed: 3, Nodes: 12})
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Load: 1, Window: 60, Declare: DeclareExact}, fmt.Sprintf("Lifetime ×%d, LearnedLifetime ×%d", config.DefaultLifetimeWeight, config.DefaultLearnedLifetimeWeight)},
		{Spec{Load: 1, Window: 60, Declare: DeclareLearned, LifetimeWeight: 300}, "Lifetime ×300"},
		{Spec{Load: 1, Window: 60, LifetimeWeight: 30}, ""},
	} {
		r, err := newReplay(policy(t, sim.ResfitFrag), in, c.spec, AddOns{}, 42, sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range r.pipe.Scorers() {
			if strings.HasSuffix(s.Scorer.Name(), "Lifetime") {
				got = append(got, fmt.Sprintf("%s ×%g", s.Scorer.Name(), s.Weight))
			}
		}
		if strings.Join(got, ", ") != c.want {
			t.Errorf("%+v: the lifetime scorers %v, want %s", c.spec, got, c.want)
		}
	}
}

// TestSpecNamesWhatPodsDeclare: the setting a spec adds to the tables'
// (nothing for none), and the specs that cannot run.
func TestSpecNamesWhatPodsDeclare(t *testing.T) {
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{}, ""}, {Spec{Declare: DeclareNone}, ""}, {Spec{Declare: DeclareExact}, "ends exact"},
		{Spec{Declare: DeclareNoisy}, "ends noisy σ=1"}, {Spec{Declare: DeclareNoisy, Sigma: 2}, "ends noisy σ=2"},
		{Spec{Declare: DeclareLearned, Resample: 3}, "ends learned, resample 3"},
		{Spec{Declare: DeclareOracle}, "ends oracle"},
		{Spec{Declare: DeclareNoisy, LifetimeWeight: 30}, "ends noisy σ=1, lifetime weight 30"},
		{Spec{LifetimeWeight: 30}, ""}, // no ends followed: no term to weigh
		{Spec{Declare: DeclareNoisy, Start: "FGD"}, "ends noisy σ=1, start FGD"},
	} {
		if got := c.spec.Name(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.spec, got, c.want)
		}
	}
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Load: 1, Window: 1, Declare: "guessed"}, `churn: declared lifetimes must be "none", "exact", "noisy", "learned" or "oracle", got "guessed"`},
		{Spec{Load: 1, Window: 1, Sigma: -1}, "churn: the noise's σ must be in [0, 10], got -1"},
		{Spec{Load: 1, Window: 1, Sigma: math.NaN()}, "churn: the noise's σ must be in [0, 10], got NaN"},
		{Spec{Load: 1, Window: 1, LifetimeWeight: -1}, "churn: the lifetime weight must be in [0, 1000000], got -1"},
		{Spec{Load: 1, Window: 1, Start: "FGD,BestFit"}, `churn: the start's policy must be one, got "FGD,BestFit"`},
	} {
		if err := c.spec.Check(); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.spec, err, c.want)
		}
	}
}

// An Interval prints its half-width from MinSeedsForInterval seeds on,
// the mean alone over fewer: over two seeds Student's t is 12.7.
func TestIntervalPrintsWhatTheSeedsSupport(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want string
	}{
		{[]float64{4}, "4.00"},
		{[]float64{4, 6}, "5.00"},
		{[]float64{4, 6, 5}, "5.00 ± 2.48"},
	} {
		if got := IntervalOf(c.xs).String(); got != c.want {
			t.Errorf("%v: %q, want %q", c.xs, got, c.want)
		}
	}
}

// The oracle's model knows, from the start, every lifetime each class
// draws from, and learns nothing from the pods that end; the learned
// replay's, the same run, learns from every one.
func TestOracleKnowsAndLearnsNothing(t *testing.T) {
	pod := func(name string, gpus int, life int64) sim.Pod {
		return sim.Pod{Name: name, MilliCPU: 1000, MemoryMiB: 1024, NumGPU: gpus, GPUMilli: 1000, Lifetime: life}
	}
	in := sim.Input{Nodes: []sim.Node{{Name: "a", MilliCPU: 64000, MemoryMiB: 262144, GPUs: 8}}}
	in.Pods = []sim.Pod{pod("p1", 1, 100), pod("p2", 1, 300), pod("p3", 1, 200), pod("B", 2, 5000), pod("c", 0, 50)}
	in.Classes = sim.TypicalClasses(in.Pods, 1)
	l, err := NewLifetimes(in.Pods)
	if err != nil {
		t.Fatal(err)
	}
	arrivals := []arrival{{in.Pods[0], 0, 100}, {in.Pods[1], 1, 300}, {in.Pods[3], 2, 5000}, {in.Pods[4], 3, 50}}
	for _, declare := range []Declaration{DeclareOracle, DeclareLearned} {
		r, err := newReplay(policy(t, sim.ResfitFrag), in, Spec{Load: 1, Window: 40000, Declare: declare}, AddOns{}, 42, sim.Options{Tiebreak: sim.TiebreakName})
		if err != nil {
			t.Fatal(err)
		}
		var model *lifetime.Model
		for _, a := range r.addOns {
			if x, ok := a.(*endsView); ok {
				model = x.tracker.Model()
			}
		}
		seen := func() map[string]int {
			out := map[string]int{}
			for c := range l.byClass {
				out[classKey(c)] = model.Seen(classKey(c))
			}
			return out
		}
		want := map[string]int{}
		for c, pool := range l.byClass {
			want[classKey(c)] = len(pool)
		}
		if declare == DeclareOracle {
			if err := r.seedOracle(l); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, seen()); diff != "" {
				t.Errorf("the oracle's model before the run (-want +got):\n%s", diff)
			}
		} else {
			for k := range want {
				want[k] = 0
			}
			want[classKey(Size1)], want[classKey(Size2)], want[classKey(SizeCPU)] = 2, 1, 1 // the pods that ended
		}
		if err := r.run(nil, scripted(arrivals...)); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, seen()); diff != "" {
			t.Errorf("%s: the model after the run (-want +got):\n%s", declare, diff)
		}
	}
}
