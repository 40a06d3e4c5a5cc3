// Command benchtable runs resfit's benchmarks side by side with
// kube-scheduler's NodeResourcesFit (bench/kubecompare) and resfit's own
// serial and parallel benchmarks (bench), several times each, in two
// builds: the default one (scalar loops) and GOEXPERIMENT=simd (the
// kernels, chosen by the CPU: see strategy.KernelName). Rounds alternate
// the builds, so that both see the machine alike. It prints the median
// and spread of each figure with the ratios that matter: resfit /
// kube-scheduler per node, SIMD / scalar for every scorer, 100k nodes /
// 10k nodes, serial / parallel.
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

// builds are the two builds compared: GOEXPERIMENT's value for each.
var builds = []struct{ name, experiment string }{{"scalar", ""}, {"simd", "simd"}}

// run runs go test's benchmarks in dir, in a build (GOEXPERIMENT=experiment).
func run(dir, experiment string, args ...string) (map[string][]sample, error) {
	cmd := exec.Command("go", append([]string{"test", "-run=^$", "-benchmem"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOEXPERIMENT="+experiment)
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

// ownBench are the bench package's benchmarks the tables read.
const ownBench = "-bench=^BenchmarkScore$/.*/.*/nodes=(10000|100000)$|^BenchmarkScoreParallel$/.*/.*/nodes=100000$"

func report(w io.Writer, root string, count int, benchtime string) error {
	args := []string{"-count", "1", "-benchtime", benchtime}
	kube := map[string]map[string][]sample{}
	own := map[string]map[string][]sample{}
	for range count {
		for _, b := range builds {
			k, err := run(filepath.Join(root, "bench", "kubecompare"), b.experiment, append([]string{"-bench=Compare"}, args...)...)
			if err != nil {
				return err
			}
			o, err := run(filepath.Join(root, "bench"), b.experiment, append([]string{ownBench}, args...)...)
			if err != nil {
				return err
			}
			kube[b.name], own[b.name] = merge(kube[b.name], k), merge(own[b.name], o)
		}
	}
	fmt.Fprintln(os.Stderr)
	fmt.Fprintf(w, "resfit against kube-scheduler v1.37.2 NodeResourcesFit (Score), same nodes, same pod, same run, in the default build (scalar) and with GOEXPERIMENT=simd; median of %d runs, spread = (max−min)/median.\n\n", count)
	fmt.Fprintln(w, "| case | kube ns/node | resfit ns/node, scalar | resfit ns/node, simd | kube allocs/node | resfit allocs/node | kube / resfit, scalar | kube / resfit, simd |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, c := range casesOf(kube["scalar"], "BenchmarkCompare/kube/") {
		k, r, v := kube["scalar"]["BenchmarkCompare/kube/"+c], kube["scalar"]["BenchmarkCompare/resfit/"+c], kube["simd"]["BenchmarkCompare/resfit/"+c]
		if len(r) == 0 || len(v) == 0 {
			continue
		}
		ks, rs, vs := summarize(figures(k, nsNode)), summarize(figures(r, nsNode)), summarize(figures(v, nsNode))
		n := nodesOf(c)
		ka := summarize(figures(k, func(s sample) float64 { return s.allocsPerOp / n }))
		ra := summarize(figures(append(slices.Clone(r), v...), func(s sample) float64 { return s.allocsPerOp / n }))
		fmt.Fprintf(w, "| %s | %.1f ±%.0f%% | %.2f ±%.0f%% | %.2f ±%.0f%% | %.2f | %.2f | %.1f× | %.1f× |\n",
			c, ks.median, 100*ks.spread, rs.median, 100*rs.spread, vs.median, 100*vs.spread, ka.median, ra.median, ks.median/rs.median, ks.median/vs.median)
	}
	fmt.Fprintf(w, "\nEvery scorer (bench, Pipeline.Score, one goroutine): ns/node in each build, and SIMD / scalar.\n\n")
	fmt.Fprintln(w, "| case | scalar ns/node | simd ns/node | simd / scalar |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, c := range casesOf(own["scalar"], "BenchmarkScore/") {
		a, b := summarize(figures(own["scalar"]["BenchmarkScore/"+c], nsNode)), summarize(figures(own["simd"]["BenchmarkScore/"+c], nsNode))
		if a.median == 0 || b.median == 0 {
			continue
		}
		fmt.Fprintf(w, "| %s | %.2f ±%.0f%% | %.2f ±%.0f%% | %.2f |\n", c, a.median, 100*a.spread, b.median, 100*b.spread, b.median/a.median)
	}
	fmt.Fprintf(w, "\nresfit alone (bench), in each build: serial ns/node, cost of 100k nodes over 10k nodes, and the parallel speed-up on GOMAXPROCS workers.\n\n")
	fmt.Fprintln(w, "| case | build | ns/node 10k | ns/node 100k | time 100k / 10k | parallel ns/node 100k | serial / parallel |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, c := range []string{"MostAllocated/resources=3", "MostAllocated/resources=8", "RSFRetentionProportional/resources=3", "RSFRetentionProportional/resources=8"} {
		for _, b := range builds {
			o := own[b.name]
			s10 := summarize(figures(o["BenchmarkScore/"+c+"/nodes=10000"], nsNode))
			s100 := summarize(figures(o["BenchmarkScore/"+c+"/nodes=100000"], nsNode))
			p100 := summarize(figures(o["BenchmarkScoreParallel/"+c+"/nodes=100000"], nsNode))
			if s10.median == 0 || p100.median == 0 {
				continue
			}
			fmt.Fprintf(w, "| %s | %s | %.2f ±%.0f%% | %.2f ±%.0f%% | %.1f× | %.2f ±%.0f%% | %.2f× |\n",
				c, b.name, s10.median, 100*s10.spread, s100.median, 100*s100.spread, 10*s100.median/s10.median, p100.median, 100*p100.spread, s100.median/p100.median)
		}
	}
	return nil
}

// merge adds b's samples to a's.
// casesOf are the names of the benchmarks under prefix, without it, in
// order.
func casesOf(results map[string][]sample, prefix string) []string {
	var cases []string
	for name := range results {
		if c, ok := strings.CutPrefix(name, prefix); ok {
			cases = append(cases, c)
		}
	}
	sort.Strings(cases)
	return cases
}

func merge(a, b map[string][]sample) map[string][]sample {
	if a == nil {
		a = map[string][]sample{}
	}
	for k, v := range b {
		a[k] = append(a[k], v...)
	}
	return a
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
