// Command aiscenario runs the "Best Practices / AI scenario" configuration
// of Volcano's resource-strategy-fit design: GPU MostAllocated and cpu
// LeastAllocated, plus scarce-resource avoidance (retention) for
// nvidia.com/gpu. On the quickstart's cluster the CPU pod now lands on a CPU
// node and the GPU pod still packs onto the partly used GPU node.
//
//	go run ./examples/aiscenario
package main

import (
	"fmt"
	"os"

	"github.com/resfit/resfit/examples/internal/demo"
)

// config is the design document's AI-scenario example, verbatim.
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
        sra:
          policy: retention
          resources: nvidia.com/gpu
          retention:
            weight: 10
            nvidia.com/gpu: 1
`

func main() {
	if err := demo.Run(os.Stdout, config, demo.Resources, demo.MixedCluster, demo.Pods); err != nil {
		fmt.Fprintln(os.Stderr, "aiscenario:", err)
		os.Exit(1)
	}
}
