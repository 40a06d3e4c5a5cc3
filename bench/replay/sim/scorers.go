package sim

import (
	"math/rand/v2"
	"slices"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// RandomScorer gives every node an independent uniform score in [0, 100):
// the best feasible node is then a uniform pick among them, which is what
// the simulator's Random plugin does (one node picked at random gets 100).
type RandomScorer struct {
	pcg *rand.PCG
	rng *rand.Rand // over pcg: one stream of draws
}

// NewRandomScorer returns the scorer drawing from a seeded generator.
func NewRandomScorer(seed uint64) *RandomScorer {
	pcg := rand.NewPCG(seed, 0x72616e64)
	return &RandomScorer{pcg: pcg, rng: rand.New(pcg)}
}

func (s *RandomScorer) Name() string      { return "Random" }
func (s *RandomScorer) MaxScore() float64 { return 100 }

// Volatile is true: a node's score is a fresh draw for every pod, so a
// scoring.Placer scores every node for every pod.
func (s *RandomScorer) Volatile() bool { return true }
func (s *RandomScorer) ScoreNodes(_ *scoring.Task, nodes scoring.Span, out []float64) error {
	for i := range out {
		// rand.Rand's Float64, drawn from the generator without going
		// through its Source interface: the same numbers.
		out[i] = float64(s.pcg.Uint64()<<11>>11) / (1 << 53) * 100
	}
	return nil
}

// Device returns the simulator's Random GPU choice for a pod sharing a
// GPU: uniform among the node's GPUs with enough free.
func (s *RandomScorer) Device(c *Cluster) DeviceChoice {
	return func(row int, p Pod) int {
		device, seen := -1, 0
		for j, f := range c.GPUs.Free(row) {
			if f >= p.GPUMilli {
				if seen++; s.rng.IntN(seen) == 0 {
					device = j
				}
			}
		}
		return device
	}
}

// free is row i's free cpu and GPU (milli).
func free(rows resource.Rows, i int) (cpu, gpu int64) {
	k := rows.Stride
	a, u := rows.Allocatable[i*k:i*k+k], rows.Used[i*k:i*k+k]
	return a[SlotCPU] - u[SlotCPU], a[SlotGPU] - u[SlotGPU]
}

// BestFitScorer is the paper's BestFit: the node with the least resources
// left after the pod, measured as 0.5 × cpu left / largest node's cpu +
// 0.5 × GPU left / largest node's GPU, scored int((1 − that) × 100).
type BestFitScorer struct{ c *Cluster }

func (s *BestFitScorer) Name() string      { return "BestFit" }
func (s *BestFitScorer) MaxScore() float64 { return 100 }
func (s *BestFitScorer) ScoreNodes(t *scoring.Task, nodes scoring.Span, out []float64) error {
	maxCPU, maxGPU := float64(s.c.MaxMilliCPU), float64(s.c.MaxMilliGPU)
	rows := nodes.Rows()
	reqCPU, reqGPU := t.Requests[SlotCPU], t.Requests[SlotGPU]
	for i := range out {
		freeCPU, freeGPU := free(rows, i)
		if freeCPU < reqCPU || freeGPU < reqGPU {
			out[i] = 0
			continue
		}
		// The simulator's order of operations, for its rounding.
		left := 0.0
		left += float64(freeCPU-reqCPU) / maxCPU * 0.5
		left += float64(freeGPU-reqGPU) / maxGPU * 0.5
		out[i] = float64(int64((1 - left) * 100))
	}
	return nil
}

// DotProdScorer is the Tetris alignment heuristic in the simulator's
// direction: with free and request vectors (cpu, GPU) each divided by the
// largest node's, score int((1 − free·request / 2) × 100), so the node
// least aligned with the pod, typically the fullest, wins. (The simulator
// can also split the GPU dimension per device; this is its merged form.)
type DotProdScorer struct{ c *Cluster }

func (s *DotProdScorer) Name() string      { return "DotProd" }
func (s *DotProdScorer) MaxScore() float64 { return 100 }
func (s *DotProdScorer) ScoreNodes(t *scoring.Task, nodes scoring.Span, out []float64) error {
	maxCPU, maxGPU := float64(s.c.MaxMilliCPU), float64(s.c.MaxMilliGPU)
	rows := nodes.Rows()
	reqCPU, reqGPU := float64(t.Requests[SlotCPU])/maxCPU, float64(t.Requests[SlotGPU])/maxGPU
	for i := range out {
		freeCPU, freeGPU := free(rows, i)
		dot := (float64(freeCPU)/maxCPU*reqCPU + float64(freeGPU)/maxGPU*reqGPU) / 2
		out[i] = float64(int64((1 - min(max(dot, 0), 1)) * 100))
	}
	return nil
}

// GpuPackingScorer is the paper's GpuPacking: a GPU pod goes first to
// GPUs already in use, then to free GPUs on a node in use, then to an idle
// node, in the simulator's three bands:
//
//	shared GPUs only:      max(100 − Σ over the GPUs used of ⌊free×100/1000⌋ / 10, 50)
//	some whole free GPUs:  max(50 − the number used, 33)
//	all the node's GPUs free: max(33 − the node's GPUs, the node's GPUs)
//
// A CPU-only pod scores 0 everywhere (ties decide).
type GpuPackingScorer struct{ c *Cluster }

func (s *GpuPackingScorer) Name() string      { return "GpuPacking" }
func (s *GpuPackingScorer) MaxScore() float64 { return 100 }
func (s *GpuPackingScorer) ScoreNodes(t *scoring.Task, nodes scoring.Span, out []float64) error {
	r := t.Devices
	for i := range out {
		out[i] = 0
		if r.Count == 0 {
			continue
		}
		free := s.c.GPUs.Free(nodes.Row(i))
		whole := 0
		for _, f := range free {
			if f == 1000 {
				whole++
			}
		}
		if whole == len(free) {
			out[i] = float64(max(33-whole, whole))
			continue
		}
		// The GPUs used: the fitting ones, least free first.
		var buf [MaxGPUsPerNode]int64
		sorted := buf[:len(free)]
		copy(sorted, free)
		slices.Sort(sorted)
		need, wholeUsed := r.Count, 0
		var ratio int64
		for _, f := range sorted {
			if need == 0 {
				break
			}
			if f >= r.Each {
				need--
				ratio += f * 100 / 1000
				if f == 1000 {
					wholeUsed++
				}
			}
		}
		switch {
		case need > 0:
			out[i] = 0
		case wholeUsed > 0:
			out[i] = float64(max(50-wholeUsed, 33))
		default:
			out[i] = float64(max(100-ratio/10, 50))
		}
	}
	return nil
}
