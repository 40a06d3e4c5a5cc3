package sim

import (
	"math"
	"testing"

	"github.com/resfit/resfit/scoring"
)

// classes of the hand-worked examples: CPU-only 0.2, a 500-milli shared
// class 0.5, a two-whole-GPU class 0.3.
var handClasses = []Class{
	{Shape{MilliCPU: 4000}, 0.2},
	{Shape{MilliCPU: 2000, GPUMilli: 500, NumGPU: 1}, 0.5},
	{Shape{MilliCPU: 8000, GPUMilli: 1000, NumGPU: 2}, 0.3},
}

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

// Idle 1900 milli. CPU-only: 0.2 × 1900 = 380. The 500-milli class fits
// (GPUs with 1000 and 600 free); the GPUs it cannot use hold 300 + 0:
// 0.5 × 300 = 150. The 2-GPU class does not fit (one whole GPU):
// 0.3 × 1900 = 570. Total 1100. Short of cpu (1.5 cores), every class
// counts all 1900.
func TestFragmentationByHand(t *testing.T) {
	f := NewFragmentation(handClasses)
	if got := f.Node(10000, []int64{1000, 300, 600, 0}); math.Abs(got-1100) > 1e-9 {
		t.Errorf("fragmentation %v, want 1100", got)
	}
	if got := f.Node(1500, []int64{1000, 300, 600, 0}); math.Abs(got-1900) > 1e-9 {
		t.Errorf("short of cpu: %v, want 1900", got)
	}
	if got := f.Node(10000, []int64{0, 0}); got != 0 {
		t.Errorf("no idle GPU: %v", got)
	}
	// A node where everything fits has only the CPU-only share and the
	// shared class's small GPUs: 0.2 × 3000 + 0.5 × 0 + 0.3 × 0.
	if got := f.Node(64000, []int64{1000, 1000, 1000}); math.Abs(got-600) > 1e-9 {
		t.Errorf("idle node: %v, want 600", got)
	}
	c := handCluster(t)
	if got := f.Cluster(c); math.Abs(got-(1100+800)) > 1e-9 {
		t.Errorf("cluster %v, want 1100 + 800 (idle node: 0.2 × 4000)", got)
	}
}

// Placing a 2-core 500-milli pod on the worked node: on the whole GPU the
// node's fragmentation goes 1100 → 850 (idle 1400: 280 + 0.5 × 300 +
// 0.3 × 1400), Δ 250, int(sigmoid(0.25) × 100) = 56; on the 600-milli GPU
// 1100 → 900 (280 + 0.5 × 400 + 420), Δ 200, 54. FGD takes the whole GPU
// (device 3), where best fit would take the 600.
func TestFGDByHand(t *testing.T) {
	c := handCluster(t)
	for _, incremental := range []bool{false, true} {
		s := NewFGD(c, NewFragmentation(handClasses), incremental)
		pod := Pod{Name: "p", MilliCPU: 2000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 500}
		var task scoring.Task
		pod.Task(&task)
		out := make([]float64, 2)
		if err := s.ScoreNodes(&task, scoring.Span{Table: c.Table, Start: 0, End: 2}, out); err != nil {
			t.Fatal(err)
		}
		if out[0] != 56 {
			t.Errorf("incremental %v: score %v, want 56", incremental, out[0])
		}
		if d := s.Device(0, pod); d != 3 {
			t.Errorf("device %d, want 3", d)
		}
		// The idle node: 0.2 × 4000 = 800 before; after, idle 3500 with
		// 500 on a GPU the 2-GPU class cannot use: 700 + 0.3 × 500 = 850,
		// Δ −50, int(sigmoid(−0.05) × 100) = 48.
		if out[1] != 48 {
			t.Errorf("idle node: %v, want 48", out[1])
		}
	}
	if got := fgdScore(250); got != 56 {
		t.Errorf("fgdScore(250) = %v", got)
	}
	if fgdScore(1e6) != 100 || fgdScore(-1e6) != 0 {
		t.Error("fgdScore range")
	}
}

func scoreRow(t *testing.T, s scoring.Scorer, c *Cluster, pod Pod, row int) float64 {
	t.Helper()
	var task scoring.Task
	pod.Task(&task)
	out := make([]float64, c.Table.Len())
	if err := s.ScoreNodes(&task, scoring.Span{Table: c.Table, Start: 0, End: c.Table.Len()}, out); err != nil {
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
		NewFGD(c, NewFragmentation(in.Classes), true),
	}
	var task scoring.Task
	out := make([]float64, c.Table.Len())
	span := scoring.Span{Table: c.Table, Start: 0, End: c.Table.Len()}
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
