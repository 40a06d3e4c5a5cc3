package bench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/resfit/resfit/scoring"
	resfitconfig "github.com/resfit/resfit/scoring/config"
)

// Configurations benchmarked, by name; %s is the resource list.
var configs = map[string]func(names []string) string{
	"MostAllocated":  func(names []string) string { return kubeFit("MostAllocated", names) },
	"LeastAllocated": func(names []string) string { return kubeFit("LeastAllocated", names) },
	"MixedPerResource": func(names []string) string {
		var rs []string
		for i, n := range names {
			t := "LeastAllocated"
			if i%2 == 0 {
				t = "MostAllocated"
			}
			rs = append(rs, fmt.Sprintf("%q: {type: %s, weight: %d}", n, t, i+1))
		}
		return `plugins: [{name: NodeResourcesFitPlus, args: {resources: {` + strings.Join(rs, ", ") + `}}}]
filters: []`
	},
	"RequestedToCapacityRatio": func(names []string) string {
		return `plugins: [{name: NodeResourcesFit, args: {scoringStrategy: {type: RequestedToCapacityRatio, resources: [` + weights(names) +
			`], requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]}}}}]
filters: []`
	},
	"BalancedAllocation": func(names []string) string {
		var rs []string
		for _, n := range names {
			rs = append(rs, fmt.Sprintf("{name: %q, weight: 1}", n))
		}
		return `plugins: [{name: NodeResourcesBalancedAllocation, args: {resources: [` + strings.Join(rs, ", ") + `]}}]
filters: []`
	},
	"RSFRetentionProportional": func([]string) string {
		return `plugins: [{name: resource-strategy-fit, args: {resources: {nvidia.com/gpu: {type: MostAllocated, weight: 2}, cpu: {type: LeastAllocated, weight: 1}},
  sra: {policy: "retention, proportional", resources: nvidia.com/gpu, retention: {weight: 10}, proportional: {nvidia.com/gpu.cpu: 4, nvidia.com/gpu.memory: 8}}}}]
filters: []`
	},
}

func weights(names []string) string {
	var rs []string
	for i, n := range names {
		rs = append(rs, fmt.Sprintf("{name: %q, weight: %d}", n, i+1))
	}
	return strings.Join(rs, ", ")
}

// kubeFit is kube-scheduler's NodeResourcesFit score alone: the work its
// Score extension point does.
func kubeFit(typ string, names []string) string {
	return `plugins: [{name: NodeResourcesFit, args: {scoringStrategy: {type: ` + typ + `, resources: [` + weights(names) + `]}}}]
filters: []`
}

var clusters = map[[2]int]*Cluster{}

func cluster(b *testing.B, n, k int) *Cluster {
	if c, ok := clusters[[2]int{n, k}]; ok {
		return c
	}
	c, err := Generate(n, k, 1)
	if err != nil {
		b.Fatal(err)
	}
	clusters[[2]int{n, k}] = c
	return c
}

func pipeline(b *testing.B, c *Cluster, config string) *scoring.Pipeline {
	cfg, err := resfitconfig.Load([]byte(configs[config](c.Schema.Names())), resfitconfig.Options{})
	if err != nil {
		b.Fatal(err)
	}
	p, err := cfg.Build(c.Schema)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

var configOrder = []string{"MostAllocated", "LeastAllocated", "MixedPerResource", "RequestedToCapacityRatio", "BalancedAllocation", "RSFRetentionProportional"}

// BenchmarkScore is one task against every node, on one goroutine.
func BenchmarkScore(b *testing.B) {
	for _, config := range configOrder {
		for _, k := range []int{3, 8} {
			for _, n := range []int{1000, 10000, 100000} {
				b.Run(fmt.Sprintf("%s/resources=%d/nodes=%d", config, k, n), func(b *testing.B) {
					c := cluster(b, n, k)
					p := pipeline(b, c, config)
					batch := p.NewBatch(n)
					task := &scoring.Task{Requests: c.Task}
					b.ReportAllocs()
					for b.Loop() {
						if err := p.Score(task, c.Table, batch); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
				})
			}
		}
	}
}

// BenchmarkScoreParallel splits the nodes across GOMAXPROCS workers.
func BenchmarkScoreParallel(b *testing.B) {
	for _, config := range []string{"MostAllocated", "RSFRetentionProportional"} {
		for _, k := range []int{3, 8} {
			for _, n := range []int{10000, 100000} {
				b.Run(fmt.Sprintf("%s/resources=%d/nodes=%d", config, k, n), func(b *testing.B) {
					c := cluster(b, n, k)
					p := pipeline(b, c, config)
					batch := p.NewBatch(n)
					task := &scoring.Task{Requests: c.Task}
					b.ReportAllocs()
					for b.Loop() {
						if err := p.ScoreParallel(task, c.Table, batch, 0); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
				})
			}
		}
	}
}

// The generator is deterministic and every configuration scores it in
// range: the benchmarks measure real work.
func TestGeneratedClustersScore(t *testing.T) {
	a, _ := Generate(200, 8, 7)
	b, _ := Generate(200, 8, 7)
	if fmt.Sprint(a.Nodes) != fmt.Sprint(b.Nodes) {
		t.Fatal("same seed, different clusters")
	}
	for _, config := range configOrder {
		cfg, err := resfitconfig.Load([]byte(configs[config](a.Schema.Names())), resfitconfig.Options{})
		if err != nil {
			t.Fatalf("%s: %v", config, err)
		}
		p, err := cfg.Build(a.Schema)
		if err != nil {
			t.Fatalf("%s: %v", config, err)
		}
		batch := p.NewBatch(200)
		if err := p.Score(&scoring.Task{Requests: a.Task}, a.Table, batch); err != nil {
			t.Fatal(err)
		}
		nonzero := 0
		for i := 0; i < batch.Len(); i++ {
			if tot := batch.Total(i); tot < 0 || tot > p.MaxScore() {
				t.Fatalf("%s: total %v out of range", config, tot)
			} else if tot > 0 {
				nonzero++
			}
		}
		if nonzero < 50 {
			t.Errorf("%s: only %d of 200 nodes score above 0", config, nonzero)
		}
	}
}
