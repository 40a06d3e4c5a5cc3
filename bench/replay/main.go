// Command replay replays a GPU cluster trace under every scheduling policy
// and reports how much GPU each leaves unallocated, by the method of the
// ATC'23 FGD paper: pods drawn to 130% of GPU capacity, shuffled with
// seeds 42…51, placed one at a time with no departures.
//
//	go run .                         # the openb trace when ../shared/traces/openb exists, else synthetic
//	go run . -trace DIR -out results # CSV and SVG into results/
//	go run . -pods openb_pod_list_gpuspec20.csv  # another pod list (in the trace directory, or a path)
//	go run . -synthetic              # the built-in synthetic cluster and workload
//
// It prints per policy the mean over the seeds (± the standard deviation)
// of the allocation at 100% and 130% arrived load, the unallocated and
// fragmented GPU at 130%, and the pending pods; it writes replay.csv (every
// seed and load point), summary.csv and allocation.svg into -out (by
// default resfit-replay in the system's temporary directory, not the
// source tree).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/resfit/resfit/bench/replay/sim"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "replay:", err)
		os.Exit(1)
	}
}

// input is the synthetic workload when asked for; else the trace: the one
// given (whose files must be there), or the one found beside the
// repository; else, with nothing found and no pod list asked for, the
// synthetic workload.
func input(synthetic bool, trace, podList string) (sim.Input, error) {
	if synthetic {
		if trace != "" || podList != "" {
			return sim.Input{}, fmt.Errorf("-synthetic replays the built-in workload; it takes no -trace or -pods")
		}
		return sim.Synthetic(sim.SyntheticSpec{Nodes: 400, Seed: 1}), nil
	}
	if trace == "" {
		trace = sim.FindTrace()
	}
	if trace == "" {
		if podList != "" {
			return sim.Input{}, fmt.Errorf("-pods %s: the node list comes from the trace directory; give -trace DIR", podList)
		}
		return sim.Synthetic(sim.SyntheticSpec{Nodes: 400, Seed: 1}), nil
	}
	if podList == "" {
		return sim.ReadTrace(trace)
	}
	if !strings.ContainsRune(podList, os.PathSeparator) {
		podList = filepath.Join(trace, podList)
	}
	return sim.ReadTraceFiles(filepath.Join(trace, sim.NodeListFile), podList)
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	trace := fs.String("trace", "", "directory with "+sim.NodeListFile+" and "+sim.PodListFile+" (default ../shared/traces/openb seen from the repository root, when present)")
	podList := fs.String("pods", "", "pod list to replay instead of "+sim.PodListFile+": a file name in the trace directory, or a path")
	synthetic := fs.Bool("synthetic", false, "use the built-in synthetic cluster and workload instead of a trace")
	seeds := fs.Int("seeds", 10, "number of seeds, from 42 up")
	ratio := fs.Float64("load", 1.3, "workload total GPU request as a multiple of cluster GPU capacity")
	only := fs.String("policies", "", "comma-separated policy names to run (default all)")
	tiebreak := fs.String("tiebreak", string(sim.TiebreakPermutation), "how equal top scores are broken: permutation, name or fresh")
	out := fs.String("out", filepath.Join(os.TempDir(), "resfit-replay"), "directory for replay.csv, summary.csv and allocation.svg (empty: write none)")
	workers := fs.Int("workers", 0, "replays run in parallel (0: GOMAXPROCS)")
	defrags := fs.Bool("defrag", false, "after the arrivals, one pass of pod moves per seed: none, make-room k=1,2,4, and reclaim, give-back and fragMultiPod at 0.5%, 1%, 2%, 5% of the placed pods, for one policy (-policies, default "+sim.ResfitFrag+")")
	churn := fs.Bool("churn", false, "replay with departures: pods arrive as a Poisson process and leave when their lifetime (drawn from the trace's) is over, at each offered load of -loads")
	loads := fs.String("loads", "0.9,1.0,1.1,1.3", "with -churn: offered GPU loads, as multiples of the cluster's GPU capacity")
	warmUp := fs.Duration("warmup", 24*time.Hour, "with -churn: simulated time discarded before the window")
	window := fs.Duration("window", 7*24*time.Hour, "with -churn: simulated time measured")
	moves := fs.String("moves", "none", "with -churn: comma-separated moves made as the replay goes, each run beside the others: none, make-room, give-back, fragMultiPod, drain (with -reserve: the locked nodes give up the pods that keep the target out)")
	every := fs.Duration("every", 10*time.Minute, "with -churn: simulated time between rounds of moves")
	moveK := fs.Int("k", 2, "with -churn and make-room moves: the most moves for one waiting pod")
	perHour := fs.Float64("per-hour", 0.01, "with -churn: the most moves an hour, as a share of the running pods")
	reserve := fs.Bool("reserve", false, "with -churn: every -every, lock nodes for the GPU pod that has waited longest, after Volcano's job reservation (scoring/reservation); no other pod goes to them until it starts")
	starve := fs.Bool("starve", false, "with -churn: starvation control (scoring/starvation) every -every: hold for the GPU pod that has waited longer than -starve-after, the largest first, the node it fits first, with backfill; with -moves drain, drain the held node when waiting will not free it within -patience")
	starveAfter := fs.Duration("starve-after", time.Hour, "with -starve: how long a GPU pod waits before it may be elected")
	holds := fs.Int("holds", 1, "with -starve: the most nodes held at once, each for one pod (1: EASY's one reservation)")
	patience := fs.Duration("patience", 2*time.Hour, "with -starve and -moves drain: how long a hold waits for its node to free before it drains it")
	sustain := fs.String("sustainable", "", "with -churn: instead of -loads, search each policy's sustainable load on each seed, FROM:TO:STEP (such as 0.8:1.3:0.01): the highest load at which the waiting GPU demand ends the window no higher than it starts it")
	declare := fs.String("declare", string(sim.DeclareNone), "with -churn: what the pods declare of their lifetimes: none, exact, or noisy (× e^N(0,1))")
	png := fs.Bool("png", false, "write each plot as a PNG too, beside its SVG")
	floor := fs.Float64("floor", 0, "with -churn: every 10 minutes, bound what any plan of this share of the running pods in moves could leave idle, and what the shares leave unused on the GPUs they share after any plan (0: none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *seeds < 1 || *seeds > 1000 {
		return fmt.Errorf("-seeds: must be in [1, 1000], got %d", *seeds)
	}
	if !(*ratio > 0 && *ratio <= 10) {
		return fmt.Errorf("-load: must be in (0, 10], got %v", *ratio)
	}
	in, err := input(*synthetic, *trace, *podList)
	if err != nil {
		return err
	}
	fmt.Fprintln(stderr, "input:", in.Name)
	if *defrags {
		return runDefrags(in, *only, *seeds, *ratio, sim.Tiebreak(*tiebreak), *workers, *out, *png, stdout, stderr)
	}
	if *churn {
		spec := sim.ChurnSpec{WarmUp: warmUp.Seconds(), Window: window.Seconds(), Floor: *floor, Declare: sim.Declaration(*declare)}
		var ms []sim.ChurnMoves
		for _, name := range strings.Split(*moves, ",") {
			m := sim.ChurnMoves{Method: sim.DefragMethod(strings.TrimSpace(name))}
			if m.Method != sim.NoMoves {
				m.Every, m.K, m.PerHour = every.Seconds(), *moveK, *perHour
			}
			if *reserve {
				m.Every, m.Reserve = every.Seconds(), true
			}
			if *starve {
				m.Every, m.Starve, m.After, m.Patience, m.Holds = every.Seconds(), true, starveAfter.Seconds(), patience.Seconds(), *holds
			}
			if err := m.Check(); err != nil {
				return fmt.Errorf("-moves: %w", err)
			}
			ms = append(ms, m)
		}
		if *sustain != "" {
			return runSustainable(in, *only, ms, *seeds, *sustain, spec, sim.Tiebreak(*tiebreak), *workers, stdout, stderr)
		}
		return runChurn(in, *only, ms, *seeds, *loads, spec, sim.Tiebreak(*tiebreak), *workers, *out, *png, stdout, stderr)
	}
	policies, err := sim.Select(sim.Policies(), *only)
	if err != nil {
		return err
	}
	start := time.Now()
	results, err := sim.RunAll(in, policies, sim.Seeds(42, *seeds), *ratio,
		sim.Options{Tiebreak: sim.Tiebreak(*tiebreak)}, *workers,
		func(done, total int, r *sim.Result) {
			fmt.Fprintf(stderr, "[%3d/%d] %-18s seed %d: unallocated %5.2f%%, %d pending (%.1fs)\n",
				done, total, r.Policy, r.Seed, r.Unallocated(), r.Pending, time.Since(start).Seconds())
		})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "%d replays in %.1fs\n", len(results), time.Since(start).Seconds())
	summary := sim.Summarize(policies, results)
	fmt.Fprint(stdout, sim.Table(in, summary))
	if *out == "" {
		return nil
	}
	if err := sim.WriteFiles(*out, results, summary); err != nil {
		return err
	}
	written := []string{*out + "/replay.csv", *out + "/summary.csv", *out + "/allocation.svg"}
	if *png {
		if err := sim.Plot(*out+"/allocation.png", summary); err != nil {
			return err
		}
		written = append(written, *out+"/allocation.png")
	}
	fmt.Fprintf(stderr, "wrote %s\n", strings.Join(written, ", "))
	return nil
}

// runDefrags is -defrag: the passes of moves after the arrivals, for one
// policy.
func runDefrags(in sim.Input, only string, seeds int, ratio float64, tiebreak sim.Tiebreak, workers int, out string, png bool, stdout, stderr io.Writer) error {
	if only == "" {
		only = sim.ResfitFrag
	}
	policies, err := sim.Select(sim.Policies(), only)
	if err != nil {
		return err
	}
	if len(policies) != 1 {
		return fmt.Errorf("-defrag: give one policy with -policies, got %d", len(policies))
	}
	passes := sim.DefragPasses()
	start := time.Now()
	results, err := sim.RunDefrags(in, policies[0], passes, sim.Seeds(42, seeds), ratio, sim.Options{Tiebreak: tiebreak}, workers,
		func(done, total int, r *sim.Result) {
			x := r.Defrag
			fmt.Fprintf(stderr, "[%3d/%d] %-18s seed %d: unallocated %5.2f%% → %5.2f%%, %d moves, %d placed (%.1fs)\n",
				done, total, x.Name, r.Seed, r.Unallocated(), x.Unallocated, x.Moves, x.Placed, time.Since(start).Seconds())
		})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "%d replays in %.1fs\n", len(results), time.Since(start).Seconds())
	gpus := 0
	for _, n := range in.Nodes {
		gpus += n.GPUs
	}
	sums := sim.SummarizeDefrags(passes, results, float64(gpus))
	fmt.Fprint(stdout, sim.DefragTable(policies[0].Name, sums))
	if out == "" {
		return nil
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := sim.WriteDefragFiles(out, results, sums); err != nil {
		return err
	}
	if png {
		if err := sim.PlotDefrags(out+"/defrag.png", sums); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s/defrag.csv, %s/defrag.svg, %s/defrag.png\n", out, out, out)
		return nil
	}
	fmt.Fprintf(stderr, "wrote %s/defrag.csv, %s/defrag.svg\n", out, out)
	return nil
}

// runChurn is -churn: every policy (or those of -policies) with
// departures, at every load.
func runChurn(in sim.Input, only string, moves []sim.ChurnMoves, seeds int, loadList string, spec sim.ChurnSpec, tiebreak sim.Tiebreak, workers int, out string, png bool, stdout, stderr io.Writer) error {
	policies, err := sim.Select(sim.Policies(), only)
	if err != nil {
		return err
	}
	var loads []float64
	for _, text := range strings.Split(loadList, ",") {
		l, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil {
			return fmt.Errorf("-loads: %q is not a number", text)
		}
		loads = append(loads, l)
	}
	start := time.Now()
	results, err := sim.RunChurns(in, policies, moves, sim.Seeds(42, seeds), loads, spec, sim.Options{Tiebreak: tiebreak}, workers,
		func(done, total int, r *sim.ChurnResult) {
			fmt.Fprintf(stderr, "[%3d/%d] %-18s %s, load %.1f seed %d: idle while GPU pods wait %5.2f%%, %d arrivals, %d moves (%.1fs)\n",
				done, total, r.Policy, r.Moves, r.Load, r.Seed, r.IdleWhileWaiting, r.Arrivals, r.Moved.Moves, time.Since(start).Seconds())
		})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "%d replays in %.1fs\n", len(results), time.Since(start).Seconds())
	sums := sim.SummarizeChurn(results)
	fmt.Fprint(stdout, sim.ChurnTable(sums))
	if out == "" {
		return nil
	}
	if err := sim.WriteChurnFiles(out, results, sums); err != nil {
		return err
	}
	written := []string{out + "/churn.csv", out + "/churn-summary.csv"}
	exts := []string{".svg"}
	if png {
		exts = append(exts, ".png")
	}
	for _, load := range loads {
		for _, ext := range exts {
			path := fmt.Sprintf("%s/churn-load-%g%s", out, load, ext)
			if err := sim.PlotChurn(path, results, load); err != nil {
				return err
			}
			written = append(written, path)
		}
	}
	fmt.Fprintf(stderr, "wrote %s\n", strings.Join(written, ", "))
	return nil
}

// runSustainable is -churn -sustainable: each policy's sustainable load
// on each seed, with each of the moves.
func runSustainable(in sim.Input, only string, moves []sim.ChurnMoves, seeds int, search string, spec sim.ChurnSpec, tiebreak sim.Tiebreak, workers int, stdout, stderr io.Writer) error {
	policies, err := sim.Select(sim.Policies(), only)
	if err != nil {
		return err
	}
	var s sim.SustainSpec
	parts := strings.Split(search, ":")
	if len(parts) != 3 {
		return fmt.Errorf("-sustainable: want FROM:TO:STEP, got %q", search)
	}
	for i, dst := range []*float64{&s.From, &s.To, &s.Step} {
		if *dst, err = strconv.ParseFloat(strings.TrimSpace(parts[i]), 64); err != nil {
			return fmt.Errorf("-sustainable: %q is not a number", parts[i])
		}
	}
	if err := s.Check(); err != nil {
		return fmt.Errorf("-sustainable: %w", err)
	}
	start := time.Now()
	fmt.Fprintln(stdout, "| policy | moves | sustainable load (mean ± 95%, min–max) | by seed |\n|---|---|---|---|")
	for _, m := range moves {
		run := spec
		run.Moves = m
		found, err := sim.SustainableLoads(in, policies, sim.Seeds(42, seeds), run, s, sim.Options{Tiebreak: tiebreak}, workers,
			func(done, total int, r sim.Sustainable) {
				fmt.Fprintf(stderr, "[%3d/%d] %-18s %s, seed %d: sustains %s (%d replays, %.1fs)\n",
					done, total, r.Policy, r.Moves, r.Seed, r, r.Replays, time.Since(start).Seconds())
			})
		if err != nil {
			return err
		}
		for p := range policies {
			loads := make([]float64, seeds)
			by := make([]string, seeds)
			for i := range seeds {
				loads[i] = found[p*seeds+i].Load
				by[i] = found[p*seeds+i].String() // <From or ≥To where a bound of the search is the answer
			}
			fmt.Fprintf(stdout, "| %s | %s | %s (%.2f–%.2f) | %s |\n", policies[p].Name, m.Name(), sim.IntervalOf(loads), slices.Min(loads), slices.Max(loads), strings.Join(by, " "))
		}
	}
	return nil
}
