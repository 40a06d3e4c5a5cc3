package churn

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Interval is a mean over seeds with its 95% confidence half-width
// (Student's t over the seeds; 0 for one seed), and how many seeds.
type Interval struct {
	Mean, Half float64
	Seeds      int
}

// MinSeedsForInterval is the fewest seeds whose interval an Interval
// prints: over two seeds Student's t is 12.7, and the half-width, often
// tens of points, bounds nothing a choice could use.
const MinSeedsForInterval = 3

// IntervalOf is the mean of xs with its 95% confidence half-width.
func IntervalOf(xs []float64) Interval { return intervalOf(xs) }

func intervalOf(xs []float64) Interval {
	if len(xs) < 2 {
		if len(xs) == 1 {
			return Interval{Mean: xs[0], Seeds: 1}
		}
		return Interval{}
	}
	m, s := stat.MeanStdDev(xs, nil)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(xs) - 1)}.Quantile(0.975)
	return Interval{Mean: m, Half: t * s / math.Sqrt(float64(len(xs))), Seeds: len(xs)}
}

// String is the mean ± the half-width, or the mean alone over fewer than
// MinSeedsForInterval seeds.
func (i Interval) String() string {
	if i.Seeds < MinSeedsForInterval {
		return fmt.Sprintf("%.2f", i.Mean)
	}
	return fmt.Sprintf("%.2f ± %.2f", i.Mean, i.Half)
}

// Summary is one policy at one load over the seeds.
type Summary struct {
	Policy, Setting string
	Load            float64
	Seeds           int
	// The time averages (Result), with their intervals, and the
	// floors (Result.Floor, ShareFloor).
	IdleWhileWaiting, Idle, Fragmented, WaitingShare, Floor, ShareFloor Interval
	// Empty8 is the time-average share of the 8-GPU nodes that are empty
	// (EmptyReport), in percent.
	Empty8 Interval
	// Per size class: the mean over the seeds of the mean and the 50th,
	// 95th and 99th percentile waits (hours), and of the share of the pods
	// that arrived that never started (percent).
	WaitMean, WaitP50, WaitP95, WaitP99, Never [numSizes]float64
	// GPUWait is the GPU-weighted mean wait (hours, Result.GPUWait).
	GPUWait Interval
	// Arrivals is the mean count of arrivals in the window; Moved, the
	// means of what the moves did in it (MoveStats: pods moved, waiting
	// pods placed and their GPUs).
	Arrivals                         float64
	MovedPods, MovedPlaced, MovedGPU float64
}

// Summarize summarizes results (as RunAll orders them) by policy
// and load.
func Summarize(results []*Result) []Summary {
	var out []Summary
	index := map[string]int{}
	var groups [][]*Result
	for _, r := range results {
		key := r.Policy + "\x00" + r.Setting + "\x00" + strconv.FormatFloat(r.Load, 'g', -1, 64)
		k, ok := index[key]
		if !ok {
			k = len(groups)
			index[key] = k
			groups = append(groups, nil)
		}
		groups[k] = append(groups[k], r)
	}
	for _, g := range groups {
		s := Summary{Policy: g[0].Policy, Setting: g[0].Setting, Load: g[0].Load, Seeds: len(g)}
		of := func(f func(*Result) float64) Interval {
			xs := make([]float64, len(g))
			for i, r := range g {
				xs[i] = f(r)
			}
			return intervalOf(xs)
		}
		s.IdleWhileWaiting = of(func(r *Result) float64 { return r.Idle().WhileWaiting })
		s.Idle = of(func(r *Result) float64 { return r.Idle().Idle })
		s.Fragmented = of(func(r *Result) float64 { return r.Idle().Fragmented })
		s.WaitingShare = of(func(r *Result) float64 { return r.Idle().WaitingShare })
		s.Empty8 = of(func(r *Result) float64 { return r.Empty().Empty8 })
		s.Floor = of(func(r *Result) float64 { return r.Floor().Floor })
		s.ShareFloor = of(func(r *Result) float64 { return r.Floor().ShareFloor })
		s.Arrivals = of(func(r *Result) float64 { return float64(r.Arrivals) }).Mean
		s.MovedPods = of(func(r *Result) float64 { return float64(r.Moved().Moves) }).Mean
		s.MovedPlaced = of(func(r *Result) float64 { return float64(r.Moved().Placed) }).Mean
		s.MovedGPU = of(func(r *Result) float64 { return float64(r.Moved().PlacedMilliGPU) / 1000 }).Mean
		s.GPUWait = of(func(r *Result) float64 { return r.Waits().GPUWait / 3600 })
		for z := range numSizes {
			s.WaitMean[z] = of(func(r *Result) float64 { return r.Waits().BySize[z].Mean / 3600 }).Mean
			s.WaitP50[z] = of(func(r *Result) float64 { return r.Waits().BySize[z].P50 / 3600 }).Mean
			s.WaitP95[z] = of(func(r *Result) float64 { return r.Waits().BySize[z].P95 / 3600 }).Mean
			s.WaitP99[z] = of(func(r *Result) float64 { return r.Waits().BySize[z].P99 / 3600 }).Mean
			s.Never[z] = of(func(r *Result) float64 {
				if r.Waits().BySize[z].Arrived == 0 {
					return 0
				}
				return 100 * float64(r.Waits().BySize[z].Never) / float64(r.Waits().BySize[z].Arrived)
			}).Mean
		}
		out = append(out, s)
	}
	return out
}

// Markdown is the summaries as two Markdown tables: the idle and
// fragmented GPU, then the waits.
func Markdown(sums []Summary) string {
	var b strings.Builder
	floor := len(sums) > 0 && sums[0].Floor.Mean > 0
	b.WriteString("| policy | moves | load | idle GPU % while GPU pods wait | idle GPU % | fragmented GPU % | time GPU pods wait % | empty 8-GPU nodes % | GPU-weighted wait, h | arrivals | pods moved | waiting pods placed by moves (GPUs) |")
	if floor {
		b.WriteString(" floor % | share floor % |")
	}
	b.WriteString("\n|---|---|---|---|---|---|---|---|---|---|---|---|" + map[bool]string{true: "---|---|"}[floor] + "\n")
	for _, s := range sums {
		fmt.Fprintf(&b, "| %s | %s | %.1f | **%s** | %s | %s | %.1f | %s | %s | %.0f | %.0f | %.0f (%.0f) |", s.Policy, s.Setting, s.Load, s.IdleWhileWaiting, s.Idle, s.Fragmented,
			s.WaitingShare.Mean, s.Empty8, s.GPUWait, s.Arrivals, s.MovedPods, s.MovedPlaced, s.MovedGPU)
		if floor {
			fmt.Fprintf(&b, " %s | %s |", s.Floor, s.ShareFloor)
		}
		b.WriteString("\n")
	}
	if len(sums) > 0 && sums[0].Seeds < MinSeedsForInterval {
		fmt.Fprintf(&b, "\n(Means over %d seeds: ± is printed from %d seeds on.)\n", sums[0].Seeds, MinSeedsForInterval)
	}
	b.WriteString("\nWaiting time, hours: mean / p50 / p95 / p99 (never started, % of arrivals; counted at their wait so far)\n\n| policy | moves | load |")
	for _, z := range waitSizes {
		b.WriteString(" " + SizeNames[z] + " |")
	}
	b.WriteString("\n|---|---|---|" + strings.Repeat("---|", len(waitSizes)) + "\n")
	for _, s := range sums {
		fmt.Fprintf(&b, "| %s | %s | %.1f |", s.Policy, s.Setting, s.Load)
		for _, z := range waitSizes {
			fmt.Fprintf(&b, " %.2f / %.2f / %.2f / %.2f (%.1f) |", s.WaitMean[z], s.WaitP50[z], s.WaitP95[z], s.WaitP99[z], s.Never[z])
		}
		b.WriteString("\n")
	}
	return b.String()
}
