package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/resfit/resfit/examples/internal/demo"
)

// With sra retention (weight 10, nvidia.com/gpu 1) the CPU pod lands on a
// CPU node — retention adds 100 × 10 on nodes without a GPU — and the GPU
// pod still packs onto the partly used GPU node.
func TestAIScenario(t *testing.T) {
	var out bytes.Buffer
	if err := demo.Run(&out, config, demo.Resources, demo.MixedCluster, demo.Pods); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"| # | node | score | resource-strategy-fit | sra.retention |",
		"| 0 | cpu-1 | 1750 | 750 | 1000 |",
		"| 2 | gpu-2 | 916.67 | 916.67 | 0 |",
		"| 0 | gpu-0 | 777.78 | 777.78 | 0 |",
		"Scores run from 0 to 2000, the most this configuration gives.",
	} {
		if !strings.Contains(out.String(), line+"\n") {
			t.Errorf("output lacks %q:\n%s", line, out.String())
		}
	}
}
