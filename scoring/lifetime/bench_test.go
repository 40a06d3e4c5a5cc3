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
