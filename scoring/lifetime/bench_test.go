package lifetime

import (
	"fmt"
	"testing"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/strategy"
)

// BenchmarkScoreNodes scores 1,024 nodes of ten pods each for a task
// that declares its end, against PackLeastUsed (ResfitFrag's
// tie-breaker) on the same nodes in the same run: the term reads one
// float per node under one read lock, and allocates nothing.
//
//	go test -run X -bench ScoreNodes -benchmem ./scoring/lifetime
func BenchmarkScoreNodes(b *testing.B) {
	const n = 1024
	schema, err := resource.NewSchema(resource.CPU, resource.GPU)
	if err != nil {
		b.Fatal(err)
	}
	table := resource.NewTable(schema, n)
	model, err := NewModel(ModelOptions{})
	if err != nil {
		b.Fatal(err)
	}
	tr := NewTracker[int](model, n)
	for row := range n {
		if _, err := table.Add(fmt.Sprint(row), resource.Vector{64000, 8000}, resource.Vector{int64(row%64) * 1000, int64(row%8) * 1000}); err != nil {
			b.Fatal(err)
		}
		for k := range 10 {
			tr.Start(row*10+k, Pod{Row: row, Started: 0, Declared: float64(1 + (row*10+k)%997)}, 0)
		}
	}
	span := scoring.NewSpan(table, 0, n)
	task := scoring.Task{Requests: resource.Vector{4000, 1000}, Ends: 500}
	out := make([]float64, n)
	pack, err := strategy.NewPackLeastUsed(schema, []string{resource.CPU, resource.GPU})
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range []scoring.Scorer{NewScorer(tr.Nodes(), nil), scoring.NewStrategyScorer("PackLeastUsed", pack, true)} {
		b.Run(s.Name(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := s.ScoreNodes(&task, span, out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPlacerWithTieBreaker has a Placer find the best of 4,096 nodes
// for a task after one node's row changed, scoring with ResfitFrag's
// tie-breaker that waits for ends (UntilKnown: balance, then pack) as a
// scorer of its own ("alone") and inside a pipeline a ScaledScorer
// scores as one, as kube-scheduler's ResourceStrategyFit plugin wraps it
// ("scaled"), in the same run. Both are remembered per phase: the placer
// scores the one changed row again, not every node.
//
//	go test -run X -bench PlacerWithTieBreaker -benchmem ./scoring/lifetime
func BenchmarkPlacerWithTieBreaker(b *testing.B) {
	const n = 4096
	schema, err := resource.NewSchema(resource.CPU, resource.GPU)
	if err != nil {
		b.Fatal(err)
	}
	balance, err := strategy.NewBalancedAllocation(schema, []string{resource.CPU, resource.GPU})
	if err != nil {
		b.Fatal(err)
	}
	pack, err := strategy.NewPackLeastUsed(schema, []string{resource.CPU, resource.GPU})
	if err != nil {
		b.Fatal(err)
	}
	for _, wrap := range []string{"alone", "scaled"} {
		b.Run(wrap, func(b *testing.B) {
			table := resource.NewTable(schema, n)
			devices, err := resource.NewDevices(resource.GPU, 1000)
			if err != nil {
				b.Fatal(err)
			}
			used := make([]resource.Vector, n)
			for row := range n {
				used[row] = resource.Vector{int64(row%64) * 1000, int64(row%8) * 1000}
				if _, err := table.Add(fmt.Sprint(row), resource.Vector{64000, 8000}, used[row]); err != nil {
					b.Fatal(err)
				}
				devices.AddNode(8)
			}
			tr := NewTracker[int](mustModel(b), n)
			tie, err := NewUntilKnown(tr.Nodes(), devices, scoring.NewStrategyScorer("NodeResourcesBalancedAllocation", balance, true),
				scoring.NewStrategyScorer("PackLeastUsed", pack, true))
			if err != nil {
				b.Fatal(err)
			}
			var s scoring.Scorer = tie
			if wrap == "scaled" {
				inner, err := scoring.NewPipeline(schema, nil, []scoring.WeightedScorer{{Scorer: tie, Weight: 1}})
				if err != nil {
					b.Fatal(err)
				}
				if s, err = scoring.NewScaledScorer("ResourceStrategyFit", inner, 100); err != nil {
					b.Fatal(err)
				}
			}
			p, err := scoring.NewPipeline(schema, []scoring.Filter{scoring.NewFitFilter(nil, nil)}, []scoring.WeightedScorer{{Scorer: s, Weight: 1}})
			if err != nil {
				b.Fatal(err)
			}
			pl, err := scoring.NewPlacer(p, table, scoring.PlacerOptions{})
			if err != nil {
				b.Fatal(err)
			}
			task := &scoring.Task{Requests: resource.Vector{4000, 1000}}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				row := (i * 7919) % n
				used[row][0] ^= 1000
				table.SetUsed(row, used[row])
				if _, err := pl.Best(task); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

func mustModel(b *testing.B) *Model {
	m, err := NewModel(ModelOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return m
}
