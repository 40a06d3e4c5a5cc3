package scoring_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
)

// benchCluster makes n nodes over cpu, memory and nvidia.com/gpu: a quarter
// GPU nodes, the rest CPU nodes, with random usage.
func benchCluster(b *testing.B, n int) (*resource.Schema, *resource.Table) {
	schema, err := resource.NewSchema("cpu", "memory", gpu)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	t := resource.NewTable(schema, n)
	for i := range n {
		alloc := resource.Vector{64000, 256 << 30, 0}
		if i%4 == 0 {
			alloc[2] = 8000
		}
		used := resource.Vector{r.Int64N(alloc[0]), r.Int64N(alloc[1]), 0}
		if alloc[2] > 0 {
			used[2] = 1000 * r.Int64N(8)
		}
		if _, err := t.Add(fmt.Sprintf("node-%d", i), alloc, used); err != nil {
			b.Fatal(err)
		}
	}
	return schema, t
}

var benchConfigs = map[string]string{
	"ResourceStrategyFit":      `plugins: [{name: resource-strategy-fit, args: {resources: {nvidia.com/gpu: {type: MostAllocated, weight: 2}, cpu: {type: LeastAllocated, weight: 1}, memory: {type: LeastAllocated, weight: 1}}}}]`,
	"RSFRetentionProportional": `plugins: [{name: resource-strategy-fit, args: {resources: {nvidia.com/gpu: {type: MostAllocated, weight: 2}, cpu: {type: LeastAllocated, weight: 1}}, sra: {policy: "retention, proportional", resources: nvidia.com/gpu, retention: {weight: 10}, proportional: {nvidia.com/gpu.cpu: 4, nvidia.com/gpu.memory: 8}}}}]`,
	"KubeMostAllocated":        `plugins: [{name: NodeResourcesFit, args: {scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}, {name: nvidia.com/gpu, weight: 1}]}}}]`,
}

// BenchmarkScore is one task against every node: fit filter, one scorer,
// totals. ns/node is the figure to compare with BenchmarkMapBaseline.
func BenchmarkScore(b *testing.B) {
	tasks := map[string]resource.Vector{
		"gpu-task": {4000, 16 << 30, 1000},
		"cpu-task": {4000, 16 << 30, 0},
	}
	cases := []struct{ config, task string }{
		{"ResourceStrategyFit", "gpu-task"},
		{"KubeMostAllocated", "gpu-task"},
		{"RSFRetentionProportional", "gpu-task"},
		{"RSFRetentionProportional", "cpu-task"},
	}
	for _, c := range cases {
		for _, n := range []int{1000, 10000} {
			b.Run(fmt.Sprintf("%s/%s/nodes=%d", c.config, c.task, n), func(b *testing.B) {
				schema, nodes := benchCluster(b, n)
				cfg, err := config.Load([]byte(benchConfigs[c.config]), config.Options{})
				if err != nil {
					b.Fatal(err)
				}
				p, err := cfg.Build(schema)
				if err != nil {
					b.Fatal(err)
				}
				batch := p.NewBatch(n)
				tk := &scoring.Task{Requests: tasks[c.task]}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if err := p.Score(tk, nodes, batch); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
			})
		}
	}
}

// BenchmarkMapBaseline scores the same nodes the way a scheduler plugin
// typically does: per node, look resources up by name in maps and build the
// request/allocatable slices afresh. It is the same-run baseline for
// BenchmarkScore.
func BenchmarkMapBaseline(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			schema, table := benchCluster(b, n)
			type node struct{ alloc, used map[string]int64 }
			nodes := make([]node, n)
			for i := range nodes {
				nodes[i] = node{map[string]int64{}, map[string]int64{}}
				for j := 0; j < schema.Len(); j++ {
					nodes[i].alloc[schema.Name(j)] = table.Allocatable(i)[j]
					nodes[i].used[schema.Name(j)] = table.Used(i)[j]
				}
			}
			req := map[string]int64{"cpu": 4000, "memory": 16 << 30, gpu: 1000}
			weights := map[string]int64{"cpu": 1, "memory": 1, gpu: 1}
			out := make([]int64, n)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				for i, nd := range nodes {
					requested := make([]int64, 0, len(weights))
					allocatable := make([]int64, 0, len(weights))
					ws := make([]int64, 0, len(weights))
					for _, name := range []string{"cpu", "memory", gpu} {
						requested = append(requested, nd.used[name]+req[name])
						allocatable = append(allocatable, nd.alloc[name])
						ws = append(ws, weights[name])
					}
					var score, wsum int64
					for k := range requested {
						if allocatable[k] == 0 {
							continue
						}
						score += min(requested[k], allocatable[k]) * 100 / allocatable[k] * ws[k]
						wsum += ws[k]
					}
					if wsum > 0 {
						out[i] = score / wsum
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
		})
	}
}

// benchLock keeps tasks off two locked rows; as an Excluder it lists them,
// as a plain volatile filter (benchLockPlain) the placer runs it on every
// node.
type benchLock struct{ rows []int }

func (f *benchLock) Name() string   { return "lock" }
func (f *benchLock) Volatile() bool { return true }
func (f *benchLock) FilterNodes(_ *scoring.Task, nodes scoring.Span, v *scoring.Verdicts) error {
	for i := range nodes.Len() {
		if r := nodes.Row(i); r == f.rows[0] || r == f.rows[1] {
			v.Reject(i, -1)
		}
	}
	return nil
}
func (f *benchLock) Explain(*scoring.Task, *resource.Table, int, int) string { return "locked" }

type benchExcluder struct{ benchLock }

func (f *benchExcluder) Excluded(_ *scoring.Task, dst []int) []int { return append(dst, f.rows...) }

// BenchmarkPlacerLocked is a Placer's Best for a GPU task after one node
// changed, with no lock, with two rows locked by an Excluder, and by the
// same filter as a plain volatile one: the Excluder's cost against the
// two baselines in the same run.
func BenchmarkPlacerLocked(b *testing.B) {
	const n = 10000
	for _, lock := range []string{"none", "excluder", "volatile"} {
		b.Run(lock, func(b *testing.B) {
			schema, nodes := benchCluster(b, n)
			cfg, err := config.Load([]byte(benchConfigs["ResourceStrategyFit"]), config.Options{})
			if err != nil {
				b.Fatal(err)
			}
			p, err := cfg.Build(schema)
			if err != nil {
				b.Fatal(err)
			}
			switch lock {
			case "excluder":
				p, err = p.WithFilters(&benchExcluder{benchLock{rows: []int{0, 4}}})
			case "volatile":
				p, err = p.WithFilters(&benchLock{rows: []int{0, 4}})
			}
			if err != nil {
				b.Fatal(err)
			}
			pl, err := scoring.NewPlacer(p, nodes, scoring.PlacerOptions{})
			if err != nil {
				b.Fatal(err)
			}
			tk := &scoring.Task{Requests: resource.Vector{4000, 16 << 30, 1000}}
			used := make([]resource.Vector, n)
			for i := range used {
				used[i] = append(resource.Vector(nil), nodes.Used(i)...)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				row := (i * 7919) % n
				used[row][0] ^= 1000
				nodes.SetUsed(row, used[row])
				if _, err := pl.Best(tk); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
