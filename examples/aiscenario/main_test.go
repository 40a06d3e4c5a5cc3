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
		"| # | Pod | Node | Score | resource-strategy-fit | sra.retention |",
		"| 0 | cpu-pod | cpu-1 | 1750 | 750 | 1000 |",
		"| 2 | cpu-pod | gpu-2 | 916.6666666666666 | 916.6666666666666 | 0 |",
		"| 0 | gpu-pod | gpu-0 | 777.7777777777778 | 777.7777777777778 | 0 |",
	} {
		if !strings.Contains(out.String(), line+"\n") {
			t.Errorf("output lacks %q:\n%s", line, out.String())
		}
	}
}
