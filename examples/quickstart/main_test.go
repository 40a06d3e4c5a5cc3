package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestQuickstartTables(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	// gpu-0: gpu (2+6)/8·2 = 2, cpu (96−64)/96 = 1/3 → (2+1/3)/3 × 1000.
	for _, line := range []string{
		"| 0 | gpu-pod | gpu-0 | 777.7777777777778 | 777.7777777777778 |",
		"| 0 | cpu-pod | gpu-2 | 916.6666666666666 | 916.6666666666666 |",
		"| 2 | cpu-pod | cpu-1 | 750 | 750 |",
		"rejected cpu-1 by NodeResourcesFit: insufficient nvidia.com/gpu: requested 2, free 0",
		"rejected cpu-2 by NodeResourcesFit: insufficient cpu: requested 8, free 4",
	} {
		if !strings.Contains(out.String(), line+"\n") {
			t.Errorf("output lacks %q:\n%s", line, out.String())
		}
	}
}
