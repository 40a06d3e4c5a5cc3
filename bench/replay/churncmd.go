package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/resfit/resfit/bench/replay/churn"
	"github.com/resfit/resfit/bench/replay/sim"
)

// churnRuns are what -churn runs: the loop's spec, and the add-ons of
// each of -moves, with -reserve or -starve and -floor.
func churnRuns(f *flags) (churn.Spec, []churn.AddOns, error) {
	spec := churn.Spec{WarmUp: f.warmUp.Seconds(), Window: f.window.Seconds(), Declare: churn.Declaration(strings.TrimSpace(strings.Split(f.declare, ",")[0])), Sigma: f.sigma, Resample: f.resample, LifetimeWeight: f.lifetimeWeight, Start: f.start}
	if spec.Start != "" {
		if _, err := spec.StartPolicy(); err != nil {
			return spec, nil, fmt.Errorf("-start: %w", err)
		}
	}
	if (f.reserve || f.starve) && f.every <= 0 {
		return spec, nil, fmt.Errorf("-every: rounds must be a duration above 0 apart, got %v", f.every)
	}
	var adds []churn.AddOns
	for _, name := range strings.Split(f.moves, ",") {
		a := churn.AddOns{Moves: churn.Moves{Method: sim.DefragMethod(strings.TrimSpace(name))}, Floor: f.floor}
		if a.Moves.Method != sim.NoMoves {
			a.Moves.Every, a.Moves.K, a.Moves.PerHour = f.every.Seconds(), f.k, f.perHour
		}
		if f.reserve {
			a.Reserve = churn.Reservation{Every: f.every.Seconds()}
		}
		if f.starve {
			a.Starve = churn.Starvation{Every: f.every.Seconds(), After: f.starveAfter.Seconds(), Patience: f.patience.Seconds(), Holds: f.holds}
		}
		if err := a.Check(); err != nil {
			return spec, nil, fmt.Errorf("-moves: %w", err)
		}
		adds = append(adds, a)
	}
	return spec, adds, nil
}

// runChurn is -churn: every policy (or those of -policies) with
// departures, at every load, with each of the add-ons' settings.
func runChurn(in sim.Input, f *flags, stdout, stderr io.Writer) error {
	spec, adds, err := churnRuns(f)
	if err != nil {
		return err
	}
	if f.sustain != "" {
		return runSustainable(in, f, spec, adds, stdout, stderr)
	}
	policies, err := sim.Select(sim.Policies(), f.only)
	if err != nil {
		return err
	}
	out := f.out
	var loads []float64
	for _, text := range strings.Split(f.loads, ",") {
		l, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil {
			return fmt.Errorf("-loads: %q is not a number", text)
		}
		loads = append(loads, l)
	}
	start := time.Now()
	var results []*churn.Result
	for _, d := range strings.Split(f.declare, ",") {
		spec.Declare = churn.Declaration(strings.TrimSpace(d))
		rs, err := churn.RunAll(in, policies, adds, sim.Seeds(42, f.seeds), loads, spec, f.options(), f.workers,
			func(done, total int, r *churn.Result) {
				fmt.Fprintf(stderr, "[%3d/%d] %-18s %s, load %.1f seed %d: idle while GPU pods wait %5.2f%%, %d arrivals, %d moves (%.1fs)\n",
					done, total, r.Policy, r.Setting, r.Load, r.Seed, r.Idle().WhileWaiting, r.Arrivals, r.Moved().Moves, time.Since(start).Seconds())
			})
		if err != nil {
			return err
		}
		results = append(results, rs...)
	}
	fmt.Fprintf(stderr, "%d replays in %.1fs\n", len(results), time.Since(start).Seconds())
	sums := churn.Summarize(results)
	fmt.Fprint(stdout, churn.Markdown(sums))
	if out == "" {
		return nil
	}
	if err := churn.WriteFiles(out, results, sums); err != nil {
		return err
	}
	written := []string{out + "/churn.csv", out + "/churn-summary.csv"}
	exts := []string{".svg"}
	if f.png {
		exts = append(exts, ".png")
	}
	for _, load := range loads {
		for _, ext := range exts {
			path := fmt.Sprintf("%s/churn-load-%g%s", out, load, ext)
			if err := churn.Plot(path, results, load); err != nil {
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
func runSustainable(in sim.Input, f *flags, spec churn.Spec, adds []churn.AddOns, stdout, stderr io.Writer) error {
	seeds, search := f.seeds, f.sustain
	policies, err := sim.Select(sim.Policies(), f.only)
	if err != nil {
		return err
	}
	var s churn.SustainSpec
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
	for _, a := range adds {
		found, err := churn.SustainableLoads(in, policies, sim.Seeds(42, seeds), spec, a, s, f.options(), f.workers,
			func(done, total int, r churn.Sustainable) {
				fmt.Fprintf(stderr, "[%3d/%d] %-18s %s, seed %d: sustains %s (%d replays, %.1fs)\n",
					done, total, r.Policy, r.Setting, r.Seed, r, r.Replays, time.Since(start).Seconds())
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
			fmt.Fprintf(stdout, "| %s | %s | %s (%.2f–%.2f) | %s |\n", policies[p].Name, a.Name(), churn.IntervalOf(loads), slices.Min(loads), slices.Max(loads), strings.Join(by, " "))
		}
	}
	return nil
}
