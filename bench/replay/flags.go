package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/resfit/resfit/bench/replay/churn"
	"github.com/resfit/resfit/bench/replay/sim"
	"github.com/resfit/resfit/scoring/config"
	"github.com/resfit/resfit/scoring/lifetime"
)

// flags are the command's flags, parsed.
type flags struct {
	trace, podList, only, tiebreak, out, loads, moves, sustain, declare, start string
	synthetic, defrag, churn, reserve, starve, png                             bool
	seeds, workers, k, holds                                                   int
	resample                                                                   uint64
	ratio, perHour, floor, sigma, lifetimeWeight, nodeSize                     float64
	warmUp, window, every, starveAfter, patience                               time.Duration
}

// parseFlags reads the command line.
func parseFlags(args []string, stderr io.Writer) (*flags, error) {
	var f flags
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.trace, "trace", "", "directory with "+sim.NodeListFile+" and "+sim.PodListFile+" (default ../shared/traces/openb seen from the repository root, when present)")
	fs.StringVar(&f.podList, "pods", "", "pod list to replay instead of "+sim.PodListFile+": a file name in the trace directory, or a path")
	fs.BoolVar(&f.synthetic, "synthetic", false, "use the built-in synthetic cluster and workload instead of a trace")
	fs.IntVar(&f.seeds, "seeds", 10, "number of seeds, from 42 up")
	fs.Float64Var(&f.ratio, "load", 1.3, "workload total GPU request as a multiple of cluster GPU capacity")
	fs.StringVar(&f.only, "policies", "", "comma-separated policy names to run (default all)")
	fs.StringVar(&f.tiebreak, "tiebreak", string(sim.TiebreakPermutation), "how equal top scores are broken: permutation, name or fresh")
	fs.StringVar(&f.out, "out", filepath.Join(os.TempDir(), "resfit-replay"), "directory for replay.csv, summary.csv and allocation.svg (empty: write none)")
	fs.IntVar(&f.workers, "workers", 0, "replays run in parallel (0: GOMAXPROCS)")
	fs.BoolVar(&f.defrag, "defrag", false, "after the arrivals, one pass of pod moves per seed: none, make-room k=1,2,4, and reclaim, give-back and fragMultiPod at 0.5%, 1%, 2%, 5% of the placed pods, for one policy (-policies, default "+sim.ResfitFrag+")")
	fs.BoolVar(&f.churn, "churn", false, "replay with departures: pods arrive as a Poisson process and leave when their lifetime (drawn from the trace's) is over, at each offered load of -loads")
	fs.StringVar(&f.loads, "loads", "0.9,1.0,1.1,1.3", "with -churn: offered GPU loads, as multiples of the cluster's GPU capacity")
	fs.DurationVar(&f.warmUp, "warmup", 24*time.Hour, "with -churn: simulated time discarded before the window")
	fs.DurationVar(&f.window, "window", 7*24*time.Hour, "with -churn: simulated time measured")
	fs.StringVar(&f.moves, "moves", "none", "with -churn: comma-separated moves made as the replay goes, each run beside the others: none, make-room, give-back, fragMultiPod, drain (with -reserve: the locked nodes give up the pods that keep the target out)")
	fs.DurationVar(&f.every, "every", 10*time.Minute, "with -churn: simulated time between rounds of moves")
	fs.IntVar(&f.k, "k", 2, "with -churn and make-room moves: the most moves for one waiting pod")
	fs.Float64Var(&f.perHour, "per-hour", 0.01, "with -churn: the most moves an hour, as a share of the running pods")
	fs.BoolVar(&f.reserve, "reserve", false, "with -churn: Volcano's job reservation (scoring/reservation; not resfit's starvation control, -starve): every -every, lock nodes for the GPU pod that has waited longest; no other pod goes to them until it starts")
	fs.BoolVar(&f.starve, "starve", false, "with -churn: resfit's starvation control (scoring/starvation, as the descheduler's reserve mode runs it; not Volcano's reservation, -reserve) every -every: hold for the GPU pod that has waited longer than -starve-after, the largest first, the node it fits first, with backfill; with -moves drain, drain the held node when waiting will not free it within -patience")
	fs.DurationVar(&f.starveAfter, "starve-after", time.Hour, "with -starve: how long a GPU pod waits before it may be elected")
	fs.IntVar(&f.holds, "holds", 1, "with -starve: the most nodes held at once, each for one pod (1: EASY's one reservation)")
	fs.DurationVar(&f.patience, "patience", 2*time.Hour, "with -starve and -moves drain: how long a hold waits for its node to free before it drains it")
	fs.StringVar(&f.sustain, "sustainable", "", "with -churn: instead of -loads, search each policy's sustainable load on each seed, FROM:TO:STEP (such as 0.8:1.3:0.01): the highest load at which the waiting GPU demand ends the window no higher than it starts it")
	fs.StringVar(&f.declare, "declare", string(churn.DeclareNone), "with -churn: comma-separated, what the pods declare of their lifetimes, each run in turn: none, exact, noisy (× e^N(0,σ), σ -sigma), learned (nothing: the replay learns from the pods that end, scoring/lifetime), or oracle (nothing: the model knows each lifetime class's distribution from the start and learns nothing, a bound on learned); all but none give ResfitFrag's lifetime term the ends (-sustainable: the first)")
	fs.StringVar(&f.start, "start", "", "with -churn: the policy that places the pods alive at time 0 (default: each policy replayed places its own): a cluster that policy filled, then switched to the one replayed; the pods alive at the start run long, and with one -start every policy starts from the same layout")
	fs.Float64Var(&f.sigma, "sigma", 1, "with -declare noisy: the noise's σ")
	fs.Float64Var(&f.nodeSize, "node-size", config.DefaultNodeSizeWeight, fmt.Sprintf("ResfitFrag's node-size weight (nodeSize: {weight}, sra.Size: the smaller node first, beside the cluster's largest node; it counts once an end is known and, while no pod has ended, %.0f%% of the GPUs are in use, where the replay follows ends); 0 leaves it out, as ResfitFrag did before 2026-12-05", 100*lifetime.OnceKnownFillShare))
	fs.Float64Var(&f.lifetimeWeight, "lifetime-weight", 0, "with -declare other than none: ResfitFrag's lifetime weight, declared and learned ends alike (lifetime: {weight}); 0: its defaults, 10 for declared ends, 1000 for learned")
	fs.Uint64Var(&f.resample, "resample", 0, "with -churn: replace the multi-GPU pods' lifetimes (74 pods pooled on openb) by a bootstrap resample drawn with this seed (0: none)")
	fs.BoolVar(&f.png, "png", false, "write each plot as a PNG too, beside its SVG")
	fs.Float64Var(&f.floor, "floor", 0, "with -churn: every 10 minutes, bound what any plan of this share of the running pods in moves could leave idle, and what the shares leave unused on the GPUs they share after any plan (0: none)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if f.seeds < 1 || f.seeds > 1000 {
		return nil, fmt.Errorf("-seeds: must be in [1, 1000], got %d", f.seeds)
	}
	if !(f.ratio > 0 && f.ratio <= 10) {
		return nil, fmt.Errorf("-load: must be in (0, 10], got %v", f.ratio)
	}
	return &f, nil
}

// options are the replay's options the flags set: the tie-break, and
// ResfitFrag's node-size weight (0 leaves the part out).
func (f *flags) options() sim.Options {
	return sim.Options{Tiebreak: sim.Tiebreak(f.tiebreak), NodeSize: f.nodeSize, NoNodeSize: f.nodeSize == 0}
}
