package sim

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// WriteFiles writes replay.csv (policy, seed, load %, allocation % for
// every load point, then the end-of-run figures), summary.csv and
// allocation.svg (mean allocation against arrived load, one line per
// policy) into dir.
func WriteFiles(dir string, results []*Result, sums []Summary) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }
	rows := [][]string{{"policy", "seed", "arrived_load_pct", "gpu_allocation_pct"}}
	for _, r := range results {
		for x, a := range r.Allocation {
			rows = append(rows, []string{r.Policy, strconv.FormatUint(r.Seed, 10), strconv.Itoa(x), f(a)})
		}
	}
	if err := WriteCSV(filepath.Join(dir, "replay.csv"), rows); err != nil {
		return err
	}
	rows = [][]string{{"policy", "seeds", "alloc100_mean", "alloc100_sd", "alloc130_mean", "alloc130_sd",
		"unallocated_mean", "unallocated_sd", "unallocated_min", "unallocated_max", "fragmented_mean", "fragmented_sd", "pending_mean", "pending_sd"}}
	for _, s := range sums {
		rows = append(rows, []string{s.Policy, strconv.Itoa(s.Seeds), f(s.Alloc100.Mean), f(s.Alloc100.Std), f(s.Alloc130.Mean), f(s.Alloc130.Std),
			f(s.Unallocated.Mean), f(s.Unallocated.Std), f(s.UnallocatedMin), f(s.UnallocatedMax), f(s.Fragmented.Mean), f(s.Fragmented.Std), f(s.Pending.Mean), f(s.Pending.Std)})
	}
	if err := WriteCSV(filepath.Join(dir, "summary.csv"), rows); err != nil {
		return err
	}
	return Plot(filepath.Join(dir, "allocation.svg"), sums)
}

// WriteCSV writes the rows to a CSV file at path.
func WriteCSV(path string, rows [][]string) error {
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(file)
	if err := w.WriteAll(rows); err != nil {
		file.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return file.Close()
}
