package sim

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"gonum.org/v1/gonum/stat"

	"github.com/resfit/resfit/scoring"
)

// Input is a cluster and its workload: the trace's pods (before sampling)
// and their typical classes.
type Input struct {
	Name    string
	Nodes   []Node
	Pods    []Pod
	Classes []Class
}

// Coverage is the share of pods the typical classes cover, as in the paper.
const Coverage = 0.95

// The trace's files, in its directory.
const (
	NodeListFile = "openb_node_list_gpu_node.csv"
	PodListFile  = "openb_pod_list_default.csv"
)

// ReadTrace reads the node list (NodeListFile) and the default pod list
// (PodListFile) from dir.
func ReadTrace(dir string) (Input, error) {
	in, err := ReadTraceFiles(filepath.Join(dir, NodeListFile), filepath.Join(dir, PodListFile))
	in.Name = "openb (" + dir + ")"
	return in, err
}

// ReadTraceFiles reads a node list and a pod list (any of openb's, such
// as openb_pod_list_gpuspec20.csv). A file that is missing or does not
// read is an error naming it.
func ReadTraceFiles(nodeList, podList string) (Input, error) {
	in := Input{Name: fmt.Sprintf("openb (%s, %s)", filepath.Dir(nodeList), filepath.Base(podList))}
	nf, err := os.Open(nodeList)
	if err != nil {
		return in, fmt.Errorf("node list: %w (a trace directory holds %s)", err, NodeListFile)
	}
	defer nf.Close()
	if in.Nodes, err = ReadNodes(nf); err != nil {
		return in, fmt.Errorf("%s: %w", nodeList, err)
	}
	pf, err := os.Open(podList)
	if err != nil {
		return in, fmt.Errorf("pod list: %w", err)
	}
	defer pf.Close()
	if in.Pods, err = ReadPods(pf); err != nil {
		return in, fmt.Errorf("%s: %w", podList, err)
	}
	in.Classes = TypicalClasses(in.Pods, Coverage)
	return in, nil
}

// CoresPerGPU is what the trace's GPU pods ask for per GPU on average, in
// cores: Σ cpu / Σ GPU over the pods with a GPU.
func (in Input) CoresPerGPU() float64 {
	var cpu, gpu int64
	for _, p := range in.Pods {
		if p.NumGPU > 0 {
			cpu += p.MilliCPU
			gpu += p.TotalMilliGPU()
		}
	}
	if gpu == 0 {
		return 0
	}
	return float64(cpu) / float64(gpu)
}

// Seeds returns n seeds from first up.
func Seeds(first uint64, n int) []uint64 {
	s := make([]uint64, n)
	for i := range s {
		s[i] = first + uint64(i)
	}
	return s
}

// Select keeps the named policies (comma-separated; empty keeps all). A
// name may also be a fragmentation policy's learning form, FGD/learned or
// ResfitFrag/learned (learningClasses), which all does not hold.
func Select(all []Policy, names string) ([]Policy, error) {
	if strings.TrimSpace(names) == "" {
		return all, nil
	}
	named := append(slices.Clone(all), learningClasses(all)...)
	var out []Policy
	for _, n := range strings.Split(names, ",") {
		n = strings.TrimSpace(n)
		found := false
		for _, p := range named {
			if strings.EqualFold(p.Name, n) {
				out = append(out, p)
				found = true
			}
		}
		if !found {
			var known []string
			for _, p := range named {
				known = append(known, p.Name)
			}
			return nil, fmt.Errorf("unknown policy %q; known: %s", n, strings.Join(known, ", "))
		}
	}
	return out, nil
}

// workloads are the arrival sequences of the seeds (Workload).
func (in Input) workloads(seeds []uint64, ratio float64) ([][]Pod, error) {
	if len(in.Nodes) == 0 {
		return nil, fmt.Errorf("replay: no nodes")
	}
	c, err := NewCluster(Schema(), in.Nodes, nil)
	if err != nil {
		return nil, err
	}
	workloads := make([][]Pod, len(seeds))
	for i, s := range seeds {
		workloads[i] = Workload(in.Pods, c.CapacityMilliGPU, ratio, s)
	}
	return workloads, nil
}

// RunAll replays every policy under every seed, workers at a time (≤ 0:
// GOMAXPROCS), and returns the results by policy, then seed. progress,
// when not nil, is called after each replay, one call at a time.
func RunAll(in Input, policies []Policy, seeds []uint64, ratio float64, opts Options, workers int, progress func(done, total int, r *Result)) ([]*Result, error) {
	workloads, err := in.workloads(seeds, ratio)
	if err != nil {
		return nil, err
	}
	// The slowest policies first, so that the cheap ones fill the end.
	order := make([]int, 0, len(policies)*len(seeds))
	for _, slow := range []bool{true, false} {
		for i, p := range policies {
			if (strings.Contains(p.Name, "FGD") || strings.Contains(p.Name, "Frag")) == slow {
				for s := range seeds {
					order = append(order, i*len(seeds)+s)
				}
			}
		}
	}
	return Parallel(len(policies)*len(seeds), order, workers, func(k int) (*Result, error) {
		p, s := k/len(seeds), k%len(seeds)
		return Run(policies[p], in.Nodes, workloads[s], in.Classes, seeds[s], opts, in.CoresPerGPU())
	}, progress)
}

// Parallel runs replay(k) for every k of order, workers at a time, and
// returns the n results by k; progress, when not nil, is called after
// each, one call at a time.
func Parallel[R any](n int, order []int, workers int, replay func(k int) (R, error), progress func(done, total int, r R)) ([]R, error) {
	results := make([]R, n)
	err := parallel(order, workers, func(k int) error {
		r, err := replay(k)
		results[k] = r
		return err
	}, func(done, k int) {
		if progress != nil {
			progress(done, n, results[k])
		}
	})
	return results, err
}

// parallel runs job(k) for every k in order, workers at a time (≤ 0:
// GOMAXPROCS), calling done (one call at a time) after each that
// succeeded with how many have; it returns the first error by order.
func parallel(order []int, workers int, job func(k int) error, done func(n, k int)) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	jobs := make(chan int)
	errs := make([]error, len(order))
	var mu sync.Mutex
	n := 0
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range jobs {
				err := job(k)
				mu.Lock()
				errs[k] = err
				if n++; err == nil {
					done(n, k)
				}
				mu.Unlock()
			}
		}()
	}
	for _, k := range order {
		jobs <- k
	}
	close(jobs)
	wg.Wait()
	for _, k := range order {
		if errs[k] != nil {
			return errs[k]
		}
	}
	return nil
}

// Stat is a mean and standard deviation over seeds.
type Stat struct{ Mean, Std float64 }

func statOf(xs []float64) Stat {
	if len(xs) == 1 {
		return Stat{Mean: xs[0]}
	}
	m, s := stat.MeanStdDev(xs, nil)
	return Stat{Mean: m, Std: s}
}

// Summary is one policy's results over the seeds.
type Summary struct {
	Policy                         string
	Seeds                          int
	Alloc100, Alloc130             Stat
	Unallocated, Fragmented        Stat
	Pending                        Stat
	Allocation                     [LoadPoints]float64 // mean per load point
	UnallocatedMin, UnallocatedMax float64
}

// Summarize groups results by policy, in the policies' order.
func Summarize(policies []Policy, results []*Result) []Summary {
	var out []Summary
	for _, p := range policies {
		var a100, a130, un, fr, pe []float64
		s := Summary{Policy: p.Name}
		for _, r := range results {
			if r.Policy != p.Name {
				continue
			}
			a100 = append(a100, r.Allocation[100])
			a130 = append(a130, r.Allocation[LoadPoints-1])
			un = append(un, r.Unallocated())
			fr = append(fr, r.Fragmented)
			pe = append(pe, float64(r.Pending))
			for i, v := range r.Allocation {
				s.Allocation[i] += v
			}
		}
		if len(un) == 0 {
			continue
		}
		s.Seeds = len(un)
		for i := range s.Allocation {
			s.Allocation[i] /= float64(len(un))
		}
		s.Alloc100, s.Alloc130, s.Unallocated, s.Fragmented, s.Pending = statOf(a100), statOf(a130), statOf(un), statOf(fr), statOf(pe)
		s.UnallocatedMin, s.UnallocatedMax = un[0], un[0]
		for _, v := range un {
			s.UnallocatedMin, s.UnallocatedMax = min(s.UnallocatedMin, v), max(s.UnallocatedMax, v)
		}
		out = append(out, s)
	}
	return out
}

// Markdown is the summaries as a Markdown table.
func Markdown(in Input, sums []Summary) string {
	var b strings.Builder
	gpus := 0
	for _, n := range in.Nodes {
		gpus += n.GPUs
	}
	seeds := 0
	if len(sums) > 0 {
		seeds = sums[0].Seeds
	}
	fmt.Fprintf(&b, "%s: %d nodes, %d GPUs, %d trace pods, %d typical classes; mean ± sd over %d seeds\n\n",
		in.Name, len(in.Nodes), gpus, len(in.Pods), len(in.Classes), seeds)
	b.WriteString("| policy | alloc % at 100% load | alloc % at 130% | unallocated GPU % at 130% (min–max) | fragmented GPU % | pending pods |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, s := range sums {
		fmt.Fprintf(&b, "| %s | %.2f ± %.2f | %.2f ± %.2f | **%.2f** ± %.2f (%.2f–%.2f) | %.2f ± %.2f | %.0f ± %.0f |\n",
			s.Policy, s.Alloc100.Mean, s.Alloc100.Std, s.Alloc130.Mean, s.Alloc130.Std,
			s.Unallocated.Mean, s.Unallocated.Std, s.UnallocatedMin, s.UnallocatedMax,
			s.Fragmented.Mean, s.Fragmented.Std, s.Pending.Mean, s.Pending.Std)
	}
	return b.String()
}

// LearnedSuffix names a fragmentation policy's learning form: FGD/learned,
// ResfitFrag/learned.
const LearnedSuffix = "/learned"

// learningClasses are the learning forms of the fragmentation policies
// among all: each learns its typical classes from the pods it places,
// from none (Env.LearnClasses), as a scheduler that is not given them
// does.
func learningClasses(all []Policy) []Policy {
	var out []Policy
	for _, p := range all {
		if p.Name != "FGD" && p.Name != ResfitFrag {
			continue
		}
		learning := Policy{Name: p.Name + LearnedSuffix, Build: func(c *Cluster, env Env) (*scoring.Pipeline, DeviceChoice, error) {
			env.LearnClasses = true
			return p.Build(c, env)
		}}
		if p.Config != nil {
			learning.Config = func(env Env) string {
				env.LearnClasses = true
				return p.Config(env)
			}
		}
		out = append(out, learning)
	}
	return out
}
