// Command benchtable runs resfit's benchmarks side by side with
// kube-scheduler's NodeResourcesFit (bench/kubecompare) and resfit's own
// serial and parallel benchmarks (bench), several times each, and prints
// the median and spread of each figure with the ratios that matter:
// resfit / kube-scheduler per node, 100k nodes / 10k nodes, serial /
// parallel.
//
//	go run ./bench/benchtable -count 5
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"
)

// sample is one benchmark line's figures.
type sample struct {
	nsPerNode, allocsPerOp float64
}

// line matches "BenchmarkX/a/b-2  N  T ns/op  V ns/node  B B/op  A allocs/op".
var line = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+[\d.]+ ns/op\s+([\d.]+) ns/node\s+\d+ B/op\s+(\d+) allocs/op`)

// parse collects samples by benchmark name.
func parse(r io.Reader) map[string][]sample {
	out := map[string][]sample{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		ns, _ := strconv.ParseFloat(m[2], 64)
		allocs, _ := strconv.ParseFloat(m[3], 64)
		out[m[1]] = append(out[m[1]], sample{ns, allocs})
	}
	return out
}

// summary is the median of a figure and its spread, (max − min) / median.
type summary struct{ median, spread float64 }

func summarize(xs []float64) summary {
	s := slices.Clone(xs)
	sort.Float64s(s)
	med := stat.Quantile(0.5, stat.Empirical, s, nil)
	if med == 0 {
		return summary{}
	}
	return summary{med, (s[len(s)-1] - s[0]) / med}
}

func figures(samples []sample, f func(sample) float64) []float64 {
	xs := make([]float64, len(samples))
	for i, s := range samples {
		xs[i] = f(s)
	}
	return xs
}

func nsNode(s sample) float64 { return s.nsPerNode }

// nodesOf reads the node count from a benchmark name.
func nodesOf(name string) float64 {
	m := regexp.MustCompile(`nodes=(\d+)`).FindStringSubmatch(name)
	if m == nil {
		return 1
	}
	n, _ := strconv.ParseFloat(m[1], 64)
	return n
}

func run(dir string, args ...string) (map[string][]sample, error) {
	cmd := exec.Command("go", append([]string{"test", "-run=^$", "-benchmem"}, args...)...)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	var out bytes.Buffer
	cmd.Stdout = io.MultiWriter(&out, progress{})
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: go %s: %w", dir, strings.Join(cmd.Args[1:], " "), err)
	}
	return parse(&out), nil
}

// progress shows one dot per benchmark line on stderr.
type progress struct{}

func (progress) Write(p []byte) (int, error) {
	fmt.Fprint(os.Stderr, strings.Repeat(".", bytes.Count(p, []byte("ns/node"))))
	return len(p), nil
}

func main() {
	count := flag.Int("count", 5, "runs of each benchmark")
	benchtime := flag.String("benchtime", "1s", "go test -benchtime")
	flag.Parse()
	root, err := repoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	if err := report(os.Stdout, root, *count, *benchtime); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

func report(w io.Writer, root string, count int, benchtime string) error {
	args := []string{"-count", strconv.Itoa(count), "-benchtime", benchtime}
	kube, err := run(filepath.Join(root, "bench", "kubecompare"), append([]string{"-bench=Compare"}, args...)...)
	if err != nil {
		return err
	}
	own, err := run(filepath.Join(root, "bench"), append([]string{"-bench=Score/MostAllocated|ScoreParallel/MostAllocated|Score/RSFRetention|ScoreParallel/RSFRetention"}, args...)...)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr)
	fmt.Fprintf(w, "resfit against kube-scheduler v1.37.2 NodeResourcesFit (Score), same nodes, same pod, same run; median of %d runs, spread = (max−min)/median.\n\n", count)
	fmt.Fprintln(w, "| case | kube ns/node | resfit ns/node | kube allocs/node | resfit allocs/node | resfit / kube | kube / resfit |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	var cases []string
	for name := range kube {
		if c, ok := strings.CutPrefix(name, "BenchmarkCompare/kube/"); ok {
			cases = append(cases, c)
		}
	}
	sort.Strings(cases)
	for _, c := range cases {
		k, r := kube["BenchmarkCompare/kube/"+c], kube["BenchmarkCompare/resfit/"+c]
		if len(r) == 0 {
			continue
		}
		ks, rs := summarize(figures(k, nsNode)), summarize(figures(r, nsNode))
		n := nodesOf(c)
		ka := summarize(figures(k, func(s sample) float64 { return s.allocsPerOp / n }))
		ra := summarize(figures(r, func(s sample) float64 { return s.allocsPerOp / n }))
		fmt.Fprintf(w, "| %s | %.1f ±%.0f%% | %.2f ±%.0f%% | %.2f | %.2f | %.4f | %.1f× |\n",
			c, ks.median, 100*ks.spread, rs.median, 100*rs.spread, ka.median, ra.median, rs.median/ks.median, ks.median/rs.median)
	}
	fmt.Fprintf(w, "\nresfit alone (bench): serial ns/node, cost of 100k nodes over 10k nodes, and the parallel speed-up on GOMAXPROCS workers.\n\n")
	fmt.Fprintln(w, "| case | ns/node 10k | ns/node 100k | time 100k / 10k | parallel ns/node 100k | serial / parallel |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, c := range []string{"MostAllocated/resources=3", "MostAllocated/resources=8", "RSFRetentionProportional/resources=3", "RSFRetentionProportional/resources=8"} {
		s10 := summarize(figures(own["BenchmarkScore/"+c+"/nodes=10000"], nsNode))
		s100 := summarize(figures(own["BenchmarkScore/"+c+"/nodes=100000"], nsNode))
		p100 := summarize(figures(own["BenchmarkScoreParallel/"+c+"/nodes=100000"], nsNode))
		if s10.median == 0 || p100.median == 0 {
			continue
		}
		fmt.Fprintf(w, "| %s | %.2f ±%.0f%% | %.2f ±%.0f%% | %.1f× | %.2f ±%.0f%% | %.2f× |\n",
			c, s10.median, 100*s10.spread, s100.median, 100*s100.spread, 10*s100.median/s10.median, p100.median, 100*p100.spread, s100.median/p100.median)
	}
	return nil
}

// repoRoot finds the directory of the core module's go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(data, []byte("module github.com/resfit/resfit\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("run inside the resfit repository")
		}
		dir = parent
	}
}
