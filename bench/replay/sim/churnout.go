package sim

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// RunChurns replays every policy with each of the moves (none given: the
// spec's) under every seed at every load with departures (RunChurn),
// workers at a time (≤ 0: GOMAXPROCS), and returns the results by policy,
// moves, load, then seed. progress, when not nil, is
// called after each replay, one call at a time.
func RunChurns(in Input, policies []Policy, moves []ChurnMoves, seeds []uint64, loads []float64, spec ChurnSpec, opts Options, workers int, progress func(done, total int, r *ChurnResult)) ([]*ChurnResult, error) {
	l, err := NewLifetimes(in.Pods)
	if err != nil {
		return nil, err
	}
	if len(moves) == 0 {
		moves = []ChurnMoves{spec.Moves}
	}
	type run struct {
		policy int
		moves  ChurnMoves
		load   float64
		seed   uint64
	}
	var runs []run
	for p := range policies {
		for _, m := range moves {
			for _, load := range loads {
				s := spec
				s.Load, s.Moves = load, m
				if err := s.Check(); err != nil {
					return nil, err
				}
				for _, seed := range seeds {
					runs = append(runs, run{p, m, load, seed})
				}
			}
		}
	}
	order := make([]int, len(runs))
	for k := range order {
		order[k] = k
	}
	return replays(len(runs), order, workers, func(k int) (*ChurnResult, error) {
		s := spec
		s.Load, s.Moves = runs[k].load, runs[k].moves
		return RunChurn(policies[runs[k].policy], in, l, s, runs[k].seed, opts, nil)
	}, progress)
}

// Interval is a mean over seeds with its 95% confidence half-width
// (Student's t over the seeds; 0 for one seed).
type Interval struct{ Mean, Half float64 }

// IntervalOf is the mean of xs with its 95% confidence half-width.
func IntervalOf(xs []float64) Interval { return intervalOf(xs) }

func intervalOf(xs []float64) Interval {
	if len(xs) < 2 {
		if len(xs) == 1 {
			return Interval{Mean: xs[0]}
		}
		return Interval{}
	}
	m, s := stat.MeanStdDev(xs, nil)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(xs) - 1)}.Quantile(0.975)
	return Interval{Mean: m, Half: t * s / math.Sqrt(float64(len(xs)))}
}

func (i Interval) String() string { return fmt.Sprintf("%.2f ± %.2f", i.Mean, i.Half) }

// ChurnSummary is one policy at one load over the seeds.
type ChurnSummary struct {
	Policy, Moves string
	Load          float64
	Seeds         int
	// The time averages (ChurnResult), with their intervals, and the
	// floors (ChurnResult.Floor, ShareFloor).
	IdleWhileWaiting, Idle, Fragmented, WaitingShare, Floor, ShareFloor Interval
	// Per size class: the mean over the seeds of the mean and the 50th,
	// 95th and 99th percentile waits (hours), and of the share of the pods
	// that arrived that never started (percent).
	WaitMean, WaitP50, WaitP95, WaitP99, Never [numSizes]float64
	// GPUWait is the GPU-weighted mean wait (hours, ChurnResult.GPUWait).
	GPUWait Interval
	// Arrivals is the mean count of arrivals in the window; Moved, the
	// means of what the moves did in it (MoveStats: pods moved, waiting
	// pods placed and their GPUs).
	Arrivals                         float64
	MovedPods, MovedPlaced, MovedGPU float64
}

// SummarizeChurn summarizes results (as RunChurns orders them) by policy
// and load.
func SummarizeChurn(results []*ChurnResult) []ChurnSummary {
	var out []ChurnSummary
	index := map[string]int{}
	var groups [][]*ChurnResult
	for _, r := range results {
		key := r.Policy + "\x00" + r.Moves + "\x00" + strconv.FormatFloat(r.Load, 'g', -1, 64)
		k, ok := index[key]
		if !ok {
			k = len(groups)
			index[key] = k
			groups = append(groups, nil)
		}
		groups[k] = append(groups[k], r)
	}
	for _, g := range groups {
		s := ChurnSummary{Policy: g[0].Policy, Moves: g[0].Moves, Load: g[0].Load, Seeds: len(g)}
		of := func(f func(*ChurnResult) float64) Interval {
			xs := make([]float64, len(g))
			for i, r := range g {
				xs[i] = f(r)
			}
			return intervalOf(xs)
		}
		s.IdleWhileWaiting = of(func(r *ChurnResult) float64 { return r.IdleWhileWaiting })
		s.Idle = of(func(r *ChurnResult) float64 { return r.Idle })
		s.Fragmented = of(func(r *ChurnResult) float64 { return r.Fragmented })
		s.WaitingShare = of(func(r *ChurnResult) float64 { return r.WaitingShare })
		s.Floor = of(func(r *ChurnResult) float64 { return r.Floor })
		s.ShareFloor = of(func(r *ChurnResult) float64 { return r.ShareFloor })
		s.Arrivals = of(func(r *ChurnResult) float64 { return float64(r.Arrivals) }).Mean
		s.MovedPods = of(func(r *ChurnResult) float64 { return float64(r.Moved.Moves) }).Mean
		s.MovedPlaced = of(func(r *ChurnResult) float64 { return float64(r.Moved.Placed) }).Mean
		s.MovedGPU = of(func(r *ChurnResult) float64 { return float64(r.Moved.PlacedMilliGPU) / 1000 }).Mean
		s.GPUWait = of(func(r *ChurnResult) float64 { return r.GPUWait / 3600 })
		for z := range numSizes {
			s.WaitMean[z] = of(func(r *ChurnResult) float64 { return r.Waits[z].Mean / 3600 }).Mean
			s.WaitP50[z] = of(func(r *ChurnResult) float64 { return r.Waits[z].P50 / 3600 }).Mean
			s.WaitP95[z] = of(func(r *ChurnResult) float64 { return r.Waits[z].P95 / 3600 }).Mean
			s.WaitP99[z] = of(func(r *ChurnResult) float64 { return r.Waits[z].P99 / 3600 }).Mean
			s.Never[z] = of(func(r *ChurnResult) float64 {
				if r.Waits[z].Arrived == 0 {
					return 0
				}
				return 100 * float64(r.Waits[z].Never) / float64(r.Waits[z].Arrived)
			}).Mean
		}
		out = append(out, s)
	}
	return out
}

// waitSizes are the size classes the tables show waits for.
var waitSizes = []int{SizeShare, Size1, Size2, Size4, Size8}

// ChurnTable is the summaries as two Markdown tables: the idle and
// fragmented GPU, then the waits.
func ChurnTable(sums []ChurnSummary) string {
	var b strings.Builder
	floor := len(sums) > 0 && sums[0].Floor.Mean > 0
	b.WriteString("| policy | moves | load | idle GPU % while GPU pods wait | idle GPU % | fragmented GPU % | time GPU pods wait % | GPU-weighted wait, h | arrivals | pods moved | waiting pods placed by moves (GPUs) |")
	if floor {
		b.WriteString(" floor % | share floor % |")
	}
	b.WriteString("\n|---|---|---|---|---|---|---|---|---|---|---|" + map[bool]string{true: "---|---|"}[floor] + "\n")
	for _, s := range sums {
		fmt.Fprintf(&b, "| %s | %s | %.1f | **%s** | %s | %s | %.1f | %s | %.0f | %.0f | %.0f (%.0f) |", s.Policy, s.Moves, s.Load, s.IdleWhileWaiting, s.Idle, s.Fragmented,
			s.WaitingShare.Mean, s.GPUWait, s.Arrivals, s.MovedPods, s.MovedPlaced, s.MovedGPU)
		if floor {
			fmt.Fprintf(&b, " %s | %s |", s.Floor, s.ShareFloor)
		}
		b.WriteString("\n")
	}
	b.WriteString("\nWaiting time, hours: mean / p50 / p95 / p99 (never started, % of arrivals; counted at their wait so far)\n\n| policy | moves | load |")
	for _, z := range waitSizes {
		b.WriteString(" " + SizeNames[z] + " |")
	}
	b.WriteString("\n|---|---|---|" + strings.Repeat("---|", len(waitSizes)) + "\n")
	for _, s := range sums {
		fmt.Fprintf(&b, "| %s | %s | %.1f |", s.Policy, s.Moves, s.Load)
		for _, z := range waitSizes {
			fmt.Fprintf(&b, " %.2f / %.2f / %.2f / %.2f (%.1f) |", s.WaitMean[z], s.WaitP50[z], s.WaitP95[z], s.WaitP99[z], s.Never[z])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// WriteChurnFiles writes churn.csv (a row per replay) and
// churn-summary.csv into dir.
func WriteChurnFiles(dir string, results []*ChurnResult, sums []ChurnSummary) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }
	header := []string{"policy", "moves", "load", "seed", "arrivals", "alive_at_0", "idle_while_waiting_pct", "idle_pct", "fragmented_pct", "waiting_share_pct", "floor_pct", "share_floor_pct"}
	for _, z := range waitSizes {
		n := strings.ReplaceAll(SizeNames[z], " ", "_")
		header = append(header, n+"_arrived", n+"_never", n+"_wait_mean_h", n+"_wait_p50_h", n+"_wait_p95_h", n+"_wait_p99_h")
	}
	header = append(header, "gpu_weighted_wait_h", "waiting_milli_gpu_at_start", "waiting_milli_gpu_at_end",
		"moves_made", "moved_in_pods", "moved_in_milli_gpu", "reserve_targets", "reserve_started", "reserve_node_hours",
		"starve_targets", "starve_started", "starve_node_hours", "starve_drained", "starve_backfilled")
	rows := [][]string{header}
	for _, r := range results {
		row := []string{r.Policy, r.Moves, f(r.Load), strconv.FormatUint(r.Seed, 10), strconv.Itoa(r.Arrivals), strconv.Itoa(r.Alive),
			f(r.IdleWhileWaiting), f(r.Idle), f(r.Fragmented), f(r.WaitingShare), f(r.Floor), f(r.ShareFloor)}
		for _, z := range waitSizes {
			w := r.Waits[z]
			row = append(row, strconv.Itoa(w.Arrived), strconv.Itoa(w.Never), f(w.Mean/3600), f(w.P50/3600), f(w.P95/3600), f(w.P99/3600))
		}
		row = append(row, f(r.GPUWait/3600), strconv.FormatInt(r.WaitingAtStart, 10), strconv.FormatInt(r.WaitingAtEnd, 10))
		row = append(row, strconv.Itoa(r.Moved.Moves), strconv.Itoa(r.Moved.Placed), strconv.FormatInt(r.Moved.PlacedMilliGPU, 10))
		row = append(row, strconv.Itoa(r.Reserved.Targets), strconv.Itoa(r.Reserved.Started), f(r.Reserved.NodeHours))
		st := r.Starved
		row = append(row, strconv.Itoa(st.Targets), strconv.Itoa(st.Started), f(st.NodeHours), strconv.Itoa(st.Drained), strconv.Itoa(st.Backfilled))
		rows = append(rows, row)
	}
	if err := writeCSV(filepath.Join(dir, "churn.csv"), rows); err != nil {
		return err
	}
	rows = [][]string{{"policy", "moves", "load", "seeds", "idle_while_waiting_pct", "half_width", "idle_pct", "half_width", "fragmented_pct", "half_width", "waiting_share_pct"}}
	for _, s := range sums {
		rows = append(rows, []string{s.Policy, s.Moves, f(s.Load), strconv.Itoa(s.Seeds), f(s.IdleWhileWaiting.Mean), f(s.IdleWhileWaiting.Half),
			f(s.Idle.Mean), f(s.Idle.Half), f(s.Fragmented.Mean), f(s.Fragmented.Half), f(s.WaitingShare.Mean)})
	}
	return writeCSV(filepath.Join(dir, "churn-summary.csv"), rows)
}

// PlotChurn draws, for one load, the idle GPU while GPU pods wait over
// the window (HourlyWhileWaiting, averaged over the seeds) of each policy
// and its moves, one line and marker per series, as an SVG file (or PNG,
// save); each legend entry gives the series' IdleWhileWaiting, the
// table's headline, and its Idle.
func PlotChurn(path string, results []*ChurnResult, load float64) error {
	p := unallocatedPlot(fmt.Sprintf("Idle GPU while GPU pods wait, offered load %.1f (hourly, mean over seeds)", load), "hours into the measured window")
	p.Y.Label.Text = "GPU idle while GPU pods wait, % of capacity"
	type series struct {
		name        string
		sum         []float64
		n           int
		idle, total float64
	}
	var all []*series
	byName := map[string]*series{}
	for _, r := range results {
		if r.Load != load {
			continue
		}
		name := r.Policy
		if r.Moves != string(NoMoves) {
			name += ", " + r.Moves
		}
		s := byName[name]
		if s == nil {
			s = &series{name: name}
			byName[name] = s
			all = append(all, s)
		}
		for len(s.sum) < len(r.HourlyWhileWaiting) {
			s.sum = append(s.sum, 0)
		}
		for h, x := range r.HourlyWhileWaiting {
			s.sum[h] += x
		}
		s.n++
		s.total += r.IdleWhileWaiting
		s.idle += r.Idle
	}
	if len(all) == 0 {
		return fmt.Errorf("churn plot: no replay at load %v", load)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	var entries []legendEntry
	for i, s := range all {
		pts := make(plotter.XYs, len(s.sum))
		for h, x := range s.sum {
			y := x / float64(s.n)
			lo, hi = min(lo, y), max(hi, y)
			pts[h] = plotter.XY{X: float64(h) + 0.5, Y: y}
		}
		ls, gs := seriesStyle(i)
		line, scatter, err := markedLine(pts, ls, gs, (i*3)%24, 24)
		if err != nil {
			return err
		}
		p.Add(line, scatter)
		entries = append(entries, legendEntry{label: fmt.Sprintf("%s: %.2f%% while GPU pods wait (%.2f%% in all)", s.name, s.total/float64(s.n), s.idle/float64(s.n)), thumbs: []plot.Thumbnailer{line, scatter}})
	}
	zoom(&p.Y, lo, hi, niceStep(lo, hi))
	p.X.Min = 0
	return save(p, entries, 14*vg.Inch, 6*vg.Inch, path)
}
