package main

import (
	"bytes"
	"strings"
	"testing"
)

// The quickstart prints what a reader needs to check its numbers by hand:
// the configuration with its defaults, the cluster, the maximum, and
// rounded scores. resource-strategy-fit's score is
// 10 × 100 × Σ weight·score / Σ weight, per resource
// MostAllocated (used+requested)/allocatable, LeastAllocated
// (allocatable−used−requested)/allocatable:
//
//	gpu-pod on gpu-0: GPU (6+2)/8 = 1 (weight 2), cpu (96−48−16)/96 = 1/3
//	  (weight 1): 1000 × (2 + 1/3)/3 = 777.78
//	cpu-pod on gpu-2: cpu (96−8)/96 (weight 1; the pod asks no GPU, which
//	  is left out): 916.67
//	cpu-pod on cpu-1: cpu (64−8−8)/64 = 0.75: 750
func TestQuickstartTables(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"  weight: 1  # Volcano adds node-order scores unweighted",
		"    resourceStrategyFitWeight: 10  # tiers[0].plugins[0].arguments.resourceStrategyFitWeight",
		"      enable: false  # default",
		"| gpu-0 | 96 (48) | 768Gi (256Gi) | 8 (6) |",
		"Scores run from 0 to 1000, the most this configuration gives.",
		"gpu-pod, requesting cpu 16, memory 64Gi, nvidia.com/gpu 2:",
		"| 0 | gpu-0 | 777.78 | 777.78 |",
		"| 0 | gpu-2 | 916.67 | 916.67 |",
		"| 2 | cpu-1 | 750 | 750 |",
		"rejected cpu-1 by NodeResourcesFit: insufficient nvidia.com/gpu: requested 2, free 0",
		"rejected cpu-2 by NodeResourcesFit: insufficient cpu: requested 8, free 4",
	} {
		if !strings.Contains(out.String(), line+"\n") {
			t.Errorf("output lacks %q:\n%s", line, out.String())
		}
	}
}
