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
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/resfit/resfit/bench/replay/sim"
)

func main() {
	if err := execute(os.Args[1:], os.Stdout, os.Stderr); err != nil {
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

func execute(args []string, stdout, stderr io.Writer) error {
	f, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil // -h: the usage is written, and asking for it is no error
	}
	if err != nil {
		return err
	}
	in, err := input(f.synthetic, f.trace, f.podList)
	if err != nil {
		return err
	}
	fmt.Fprintln(stderr, "input:", in.Name)
	switch {
	case f.defrag:
		return runDefrags(in, f, stdout, stderr)
	case f.churn:
		return runChurn(in, f, stdout, stderr)
	}
	return runArrivals(in, f, stdout, stderr)
}
