// Command quickstart scores a CPU pod and a GPU pod on a small mixed
// GPU/CPU cluster with the AI-scenario configuration of Volcano's
// resource-strategy-fit (GPU MostAllocated weight 2, cpu LeastAllocated
// weight 1), and prints the explain table for each.
//
//	go run ./examples/quickstart
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/resfit/resfit/examples/internal/demo"
)

// config is the plugin configuration from the resource-strategy-fit design,
// in Volcano's own volcano-scheduler.conf form.
const config = `
actions: "enqueue, allocate, backfill, reclaim, preempt"
tiers:
- plugins:
  - name: resource-strategy-fit
    arguments:
      resourceStrategyFitWeight: 10
      resources:
        nvidia.com/gpu:
          type: MostAllocated
          weight: 2
        cpu:
          type: LeastAllocated
          weight: 1
`

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	if err := demo.Run(w, config, demo.Resources, demo.MixedCluster, demo.Pods); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "The GPU pod packs onto the fullest GPU node. Spreading cpu alone sends the CPU pod to\n"+
		"the emptiest node, here a GPU node: scarce-resource avoidance (sra) is what keeps it off;\n"+
		"see go run ./examples/aiscenario.")
	return err
}
