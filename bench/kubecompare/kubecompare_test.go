package kubecompare

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/kubernetes/pkg/scheduler/apis/config"

	"github.com/resfit/resfit/bench"
	"github.com/resfit/resfit/scoring"
	resfitconfig "github.com/resfit/resfit/scoring/config"
)

// strategies compared: kube-scheduler's type, resfit's configuration.
var strategies = []config.ScoringStrategyType{config.MostAllocated, config.LeastAllocated, config.RequestedToCapacityRatio}

var shape = []config.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 60, Score: 4}, {Utilization: 100, Score: 10}}

func weightsFor(k int) []int64 {
	w := make([]int64, k)
	for i := range w {
		w[i] = int64(i + 1)
	}
	return w
}

// resfitPipeline is resfit's kube profile with the same strategy, weights
// and shape, scoring only (kube's Score extension point does not filter).
func resfitPipeline(c *bench.Cluster, typ config.ScoringStrategyType) (*scoring.Pipeline, error) {
	var rs []string
	for i, n := range c.Schema.Names() {
		rs = append(rs, fmt.Sprintf("{name: %q, weight: %d}", n, i+1))
	}
	extra := ""
	if typ == config.RequestedToCapacityRatio {
		var pts []string
		for _, p := range shape {
			pts = append(pts, fmt.Sprintf("{utilization: %d, score: %d}", p.Utilization, p.Score))
		}
		extra = ", requestedToCapacityRatio: {shape: [" + strings.Join(pts, ", ") + "]}"
	}
	cfg, err := resfitconfig.Load([]byte(fmt.Sprintf(`plugins: [{name: NodeResourcesFit, args: {scoringStrategy: {type: %s, resources: [%s]%s}}}]
filters: []`, typ, strings.Join(rs, ", "), extra)), resfitconfig.Options{})
	if err != nil {
		return nil, err
	}
	return cfg.Build(c.Schema)
}

// Both score every node of the same clusters identically, so the speed
// comparison is of equal work.
func TestIdenticalScores(t *testing.T) {
	ctx := context.Background()
	for _, k := range []int{3, 8} {
		for seed := uint64(1); seed <= 3; seed++ {
			c, err := bench.Generate(2000, k, seed)
			if err != nil {
				t.Fatal(err)
			}
			for _, typ := range strategies {
				kube, err := NewKube(ctx, c, typ, weightsFor(k), shape)
				if err != nil {
					t.Fatal(err)
				}
				want := make([]int64, len(c.Nodes))
				if err := kube.Score(ctx, want); err != nil {
					t.Fatal(err)
				}
				p, err := resfitPipeline(c, typ)
				if err != nil {
					t.Fatal(err)
				}
				b := p.NewBatch(c.Table.Len())
				if err := p.Score(&scoring.Task{Requests: c.Task}, c.Table, b); err != nil {
					t.Fatal(err)
				}
				row := map[string]int{}
				for i := 0; i < c.Table.Len(); i++ {
					row[c.Table.Name(i)] = i
				}
				distinct := map[int64]bool{}
				for i, name := range kube.NodeNames() {
					distinct[want[i]] = true
					if got := b.Total(row[name]); got != float64(want[i]) {
						t.Fatalf("%s, %d resources, seed %d, node %s: resfit %v, kube-scheduler %d", typ, k, seed, name, got, want[i])
					}
				}
				if len(distinct) < 10 {
					t.Errorf("%s: only %d distinct scores; the comparison would be weak", typ, len(distinct))
				}
			}
		}
	}
}

func BenchmarkCompare(b *testing.B) {
	ctx := context.Background()
	for _, typ := range []config.ScoringStrategyType{config.MostAllocated, config.LeastAllocated} {
		for _, k := range []int{3, 8} {
			for _, n := range []int{1000, 10000} {
				c, err := bench.Generate(n, k, 1)
				if err != nil {
					b.Fatal(err)
				}
				b.Run(fmt.Sprintf("kube/%s/resources=%d/nodes=%d", typ, k, n), func(b *testing.B) {
					kube, err := NewKube(ctx, c, typ, weightsFor(k), shape)
					if err != nil {
						b.Fatal(err)
					}
					out := make([]int64, n)
					b.ReportAllocs()
					for b.Loop() {
						if err := kube.Score(ctx, out); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
				})
				b.Run(fmt.Sprintf("resfit/%s/resources=%d/nodes=%d", typ, k, n), func(b *testing.B) {
					p, err := resfitPipeline(c, typ)
					if err != nil {
						b.Fatal(err)
					}
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
