package sim

import (
	"math"
	"testing"

	"github.com/resfit/resfit/scoring"
)

// handCluster has the worked node (row 0): 16 cores with 6 used, four
// GPUs with 0, 300, 600 and 1000 milli free; and an idle 4-GPU node.
func handCluster(t *testing.T) *Cluster {
	t.Helper()
	nodes := []Node{
		{Name: "a", MilliCPU: 16000, MemoryMiB: 65536, GPUs: 4},
		{Name: "b", MilliCPU: 16000, MemoryMiB: 65536, GPUs: 4},
	}
	c, err := NewCluster(Schema(), nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		pod    Pod
		device int
	}{
		{Pod{Name: "z", MilliCPU: 2000, NumGPU: 1, GPUMilli: 1000}, -1}, // the tightest: device 0
		{Pod{Name: "x", MilliCPU: 2000, NumGPU: 1, GPUMilli: 700}, 1},
		{Pod{Name: "y", MilliCPU: 2000, NumGPU: 1, GPUMilli: 400}, 2},
	} {
		if err := c.Place(0, p.pod, p.device); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.GPUs.Free(0); got[0] != 0 || got[1] != 300 || got[2] != 600 || got[3] != 1000 || c.FreeCPU(0) != 10000 {
		t.Fatalf("setup: free %v, cpu %d", got, c.FreeCPU(0))
	}
	return c
}

func scoreRow(t *testing.T, s scoring.Scorer, c *Cluster, pod Pod, row int) float64 {
	t.Helper()
	var task scoring.Task
	pod.Task(&task)
	out := make([]float64, c.Table.Len())
	if err := s.ScoreNodes(&task, scoring.NewSpan(c.Table, 0, c.Table.Len()), out); err != nil {
		t.Fatal(err)
	}
	return out[row]
}

func TestBaselineScoresByHand(t *testing.T) {
	c := handCluster(t)
	shared := Pod{Name: "s", MilliCPU: 2000, NumGPU: 1, GPUMilli: 500}
	whole := Pod{Name: "w", MilliCPU: 2000, NumGPU: 1, GPUMilli: 1000}
	// BestFit, largest node 16 cores and 4 GPUs: left = 8/16 × 0.5 +
	// 1400/4000 × 0.5 = 0.425 → int(57.5) = 57.
	if got := scoreRow(t, &BestFitScorer{c: c}, c, shared, 0); got != 57 {
		t.Errorf("BestFit %v, want 57", got)
	}
	// DotProd: free (10/16, 1900/4000) · request (2/16, 500/4000) / 2 =
	// 0.06875 → int(93.125) = 93.
	if got := scoreRow(t, &DotProdScorer{c: c}, c, shared, 0); got != 93 {
		t.Errorf("DotProd %v, want 93", got)
	}
	// GpuPacking: the shared pod uses the 600-milli GPU: 100 − 60/10 = 94;
	// a whole-GPU pod takes a free GPU on a node in use: 50 − 1 = 49; on
	// the idle 4-GPU node: max(33 − 4, 4) = 29; a CPU-only pod: 0.
	gp := &GpuPackingScorer{c: c}
	for _, tc := range []struct {
		pod  Pod
		row  int
		want float64
	}{{shared, 0, 94}, {whole, 0, 49}, {whole, 1, 29}, {Pod{Name: "c", MilliCPU: 1000}, 0, 0}} {
		if got := scoreRow(t, gp, c, tc.pod, tc.row); got != tc.want {
			t.Errorf("GpuPacking %s on row %d: %v, want %v", tc.pod.Name, tc.row, got, tc.want)
		}
	}
}

// Every scorer stays in [0, MaxScore] on random cluster states.
func TestScorersStayInRange(t *testing.T) {
	in := Synthetic(SyntheticSpec{Nodes: 60, Seed: 3})
	c, err := NewCluster(Schema(), in.Nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	scorers := []scoring.Scorer{
		NewRandomScorer(1), &BestFitScorer{c: c}, &DotProdScorer{c: c}, &GpuPackingScorer{c: c},
	}
	pipe, _, err := fragPolicy(c, Env{Classes: in.Classes}, fragConfig("FGD", Env{Classes: in.Classes}, ""))
	if err != nil {
		t.Fatal(err)
	}
	scorers = append(scorers, FGDScorer(pipe))
	var task scoring.Task
	out := make([]float64, c.Table.Len())
	span := scoring.NewSpan(c.Table, 0, c.Table.Len())
	for k, p := range in.Pods {
		p.Task(&task)
		for _, s := range scorers {
			if err := s.ScoreNodes(&task, span, out); err != nil {
				t.Fatal(err)
			}
			for i, v := range out {
				if math.IsNaN(v) || v < 0 || v > s.MaxScore() {
					t.Fatalf("%s: pod %d row %d: %v outside [0, %v]", s.Name(), k, i, v, s.MaxScore())
				}
			}
		}
		// Fill the cluster as we go, on the first node the pod fits.
		for i := range c.Table.Len() {
			if c.FreeCPU(i) >= p.MilliCPU && c.GPUs.Fits(i, task.Devices) && c.Place(i, p, -1) == nil {
				break
			}
		}
	}
}
