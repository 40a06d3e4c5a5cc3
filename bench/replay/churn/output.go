package churn

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/resfit/resfit/bench/replay/figure"
	"github.com/resfit/resfit/bench/replay/sim"
)

// WriteFiles writes churn.csv (a row per replay) and
// churn-summary.csv into dir.
func WriteFiles(dir string, results []*Result, sums []Summary) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f := decimal
	rows := [][]string{{"policy", "moves", "load", "seed", "arrivals", "alive_at_0"}}
	for _, r := range results {
		if len(rows) == 1 {
			for _, rep := range r.Reports {
				for _, c := range rep.Columns() {
					rows[0] = append(rows[0], c.Name)
				}
			}
		}
		row := []string{r.Policy, r.Setting, f(r.Load), strconv.FormatUint(r.Seed, 10), strconv.Itoa(r.Arrivals), strconv.Itoa(r.Alive)}
		for _, rep := range r.Reports {
			for _, c := range rep.Columns() {
				row = append(row, c.Value)
			}
		}
		rows = append(rows, row)
	}
	if err := sim.WriteCSV(filepath.Join(dir, "churn.csv"), rows); err != nil {
		return err
	}
	rows = [][]string{{"policy", "moves", "load", "seeds", "idle_while_waiting_pct", "half_width", "idle_pct", "half_width", "fragmented_pct", "half_width", "waiting_share_pct", "empty_8gpu_nodes_pct", "half_width"}}
	for _, s := range sums {
		rows = append(rows, []string{s.Policy, s.Setting, f(s.Load), strconv.Itoa(s.Seeds), f(s.IdleWhileWaiting.Mean), f(s.IdleWhileWaiting.Half),
			f(s.Idle.Mean), f(s.Idle.Half), f(s.Fragmented.Mean), f(s.Fragmented.Half), f(s.WaitingShare.Mean), f(s.Empty8.Mean), f(s.Empty8.Half)})
	}
	return sim.WriteCSV(filepath.Join(dir, "churn-summary.csv"), rows)
}

// Plot draws, for one load, the idle GPU while GPU pods wait over
// the window (HourlyWhileWaiting, averaged over the seeds) of each policy
// and its moves, one line and marker per series, as an SVG file (or PNG,
// save); each legend entry gives the series' IdleWhileWaiting, the
// table's headline, and its Idle.
func Plot(path string, results []*Result, load float64) error {
	p := figure.New(fmt.Sprintf("Idle GPU while GPU pods wait, offered load %.1f (hourly, mean over seeds)", load), "hours into the measured window",
		"GPU idle while GPU pods wait, % of capacity")
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
		if r.Setting != string(sim.NoMoves) {
			name += ", " + r.Setting
		}
		s := byName[name]
		if s == nil {
			s = &series{name: name}
			byName[name] = s
			all = append(all, s)
		}
		for len(s.sum) < len(r.Idle().HourlyWhileWaiting) {
			s.sum = append(s.sum, 0)
		}
		for h, x := range r.Idle().HourlyWhileWaiting {
			s.sum[h] += x
		}
		s.n++
		s.total += r.Idle().WhileWaiting
		s.idle += r.Idle().Idle
	}
	if len(all) == 0 {
		return fmt.Errorf("churn plot: no replay at load %v", load)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	var entries []figure.Entry
	for i, s := range all {
		pts := make(plotter.XYs, len(s.sum))
		for h, x := range s.sum {
			y := x / float64(s.n)
			lo, hi = min(lo, y), max(hi, y)
			pts[h] = plotter.XY{X: float64(h) + 0.5, Y: y}
		}
		ls, gs := figure.Style(i)
		line, scatter, err := figure.MarkedLine(pts, ls, gs, (i*3)%24, 24)
		if err != nil {
			return err
		}
		p.Add(line, scatter)
		entries = append(entries, figure.Entry{Label: fmt.Sprintf("%s: %.2f%% while GPU pods wait (%.2f%% in all)", s.name, s.total/float64(s.n), s.idle/float64(s.n)), Thumbs: []plot.Thumbnailer{line, scatter}})
	}
	figure.Zoom(&p.Y, lo, hi, figure.NiceStep(lo, hi))
	p.X.Min = 0
	return figure.Save(p, entries, 14*vg.Inch, 6*vg.Inch, path)
}
