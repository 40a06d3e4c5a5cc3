package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/resfit/resfit/bench/replay/sim"
)

// runArrivals is the paper's protocol: every policy (or those of
// -policies) as the workload arrives, with no departures.
func runArrivals(in sim.Input, f *flags, stdout, stderr io.Writer) error {
	policies, err := sim.Select(sim.Policies(), f.only)
	if err != nil {
		return err
	}
	start := time.Now()
	results, err := sim.RunAll(in, policies, sim.Seeds(42, f.seeds), f.ratio,
		f.options(), f.workers,
		func(done, total int, r *sim.Result) {
			fmt.Fprintf(stderr, "[%3d/%d] %-18s seed %d: unallocated %5.2f%%, %d pending (%.1fs)\n",
				done, total, r.Policy, r.Seed, r.Unallocated(), r.Pending, time.Since(start).Seconds())
		})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "%d replays in %.1fs\n", len(results), time.Since(start).Seconds())
	summary := sim.Summarize(policies, results)
	fmt.Fprint(stdout, sim.Markdown(in, summary))
	if f.out == "" {
		return nil
	}
	if err := sim.WriteFiles(f.out, results, summary); err != nil {
		return err
	}
	written := []string{f.out + "/replay.csv", f.out + "/summary.csv", f.out + "/allocation.svg"}
	if f.png {
		if err := sim.Plot(f.out+"/allocation.png", summary); err != nil {
			return err
		}
		written = append(written, f.out+"/allocation.png")
	}
	fmt.Fprintf(stderr, "wrote %s\n", strings.Join(written, ", "))
	return nil
}

// runDefrags is -defrag: the passes of moves after the arrivals, for one
// policy.
func runDefrags(in sim.Input, f *flags, stdout, stderr io.Writer) error {
	only, out := f.only, f.out
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
	results, err := sim.RunDefrags(in, policies[0], passes, sim.Seeds(42, f.seeds), f.ratio, f.options(), f.workers,
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
	if f.png {
		if err := sim.PlotDefrags(out+"/defrag.png", sums); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s/defrag.csv, %s/defrag.svg, %s/defrag.png\n", out, out, out)
		return nil
	}
	fmt.Fprintf(stderr, "wrote %s/defrag.csv, %s/defrag.svg\n", out, out)
	return nil
}
