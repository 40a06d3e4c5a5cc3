package scoring_test

import (
	"fmt"
	"math"
	"testing"

	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
)

// A pipeline's scorers as one scorer score a node round(total / maximum ×
// scale), the total being the one Pipeline.Score sums, to the float; on
// any span, without allocating once warm.
func TestScaledScorerIsThePipelinesTotalScaled(t *testing.T) {
	c, err := config.Load([]byte(`
plugins:
- name: resource-strategy-fit
  args:
    resources: {nvidia.com/gpu: {type: MostAllocated, weight: 2}, cpu: {type: LeastAllocated, weight: 1}}
    sra: {policy: retention, resources: nvidia.com/gpu, retention: {weight: 10}}
- name: NodeResourcesFit
  weight: 3
  args: {scoringStrategy: {type: MostAllocated}}
- name: NodeResourcesBalancedAllocation
  weight: 7
`), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	schema, _ := resource.NewSchema("cpu", "memory", gpu)
	built, err := c.Build(schema)
	if err != nil {
		t.Fatal(err)
	}
	p, err := scoring.NewPipeline(schema, nil, built.Scorers()) // every node scored
	if err != nil {
		t.Fatal(err)
	}
	rapid.Check(t, func(t *rapid.T) {
		scale := rapid.SampledFrom([]int64{1, 10, 100, 1 << 40}).Draw(t, "scale")
		s, err := scoring.NewScaledScorer("scaled", p, scale)
		if err != nil {
			t.Fatal(err)
		}
		n := rapid.IntRange(1, 40).Draw(t, "nodes")
		nodes := resource.NewTable(schema, n)
		for i := range n {
			a := resource.Vector{rapid.Int64Range(0, 64).Draw(t, "cpu") * 1000, 256 << 30, rapid.SampledFrom([]int64{0, 0, 8000}).Draw(t, "gpu")}
			u := resource.Vector{rapid.Int64Range(0, a[0]).Draw(t, "used cpu"), 0, rapid.Int64Range(0, a[2]).Draw(t, "used gpu")}
			if _, err := nodes.Add(fmt.Sprint("n", i), a, u); err != nil {
				t.Fatal(err)
			}
		}
		task := &scoring.Task{Requests: resource.Vector{rapid.Int64Range(0, 8).Draw(t, "req cpu") * 1000, 1 << 30, rapid.SampledFrom([]int64{0, 1000}).Draw(t, "req gpu")}}
		b := p.NewBatch(n)
		if err := p.Score(task, nodes, b); err != nil {
			t.Fatal(err)
		}
		lo := rapid.IntRange(0, n-1).Draw(t, "from")
		hi := rapid.IntRange(lo, n).Draw(t, "to")
		out := make([]float64, hi-lo)
		if err := s.ScoreNodes(task, scoring.NewSpan(nodes, lo, hi), out); err != nil {
			t.Fatal(err)
		}
		for i, got := range out {
			total := b.Total(lo + i)
			if want := math.Round(total / p.MaxScore() * float64(scale)); got != want || got != float64(scoring.ScaleTotal(total, p.MaxScore(), scale)) {
				t.Fatalf("node %d: %v, want round(%v / %v × %d) = %v", lo+i, got, total, p.MaxScore(), scale, want)
			}
		}
		if allocs := testing.AllocsPerRun(10, func() { _ = s.ScoreNodes(task, scoring.NewSpan(nodes, lo, hi), out) }); allocs != 0 && !raceEnabled {
			t.Fatalf("%v allocations a call", allocs)
		}
	})
	if _, err := scoring.NewScaledScorer("bad", p, 0); err == nil {
		t.Error("a scale of 0 was taken")
	}
	if got := scoring.ScaleTotal(5, 0, 100); got != 0 {
		t.Errorf("ScaleTotal over a maximum of 0: %d", got)
	}
}

// A ScaledScorer is Phased when its pipeline has volatile scorers and all
// of them are, and its phase is theirs, each after its length: a Placer
// then remembers a kube-scheduler plugin whose tie-breaker waits for ends
// (lifetime.UntilKnown) per phase, as it does the tie-breaker alone.
func TestScaledScorerIsPhasedWhenItsVolatileScorersAre(t *testing.T) {
	schema, _ := resource.NewSchema("cpu", "memory", gpu)
	state := new(bool)
	fit, err := config.Load([]byte("plugins: [{name: NodeResourcesBalancedAllocation}]"), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	built, err := fit.Build(schema)
	if err != nil {
		t.Fatal(err)
	}
	balanced := built.Scorers()[0]
	phased := scoring.WeightedScorer{Scorer: &phasedScorer{state: state}, Weight: 1}
	random := scoring.WeightedScorer{Scorer: &randomScorer{}, Weight: 1}
	for _, c := range []struct {
		name    string
		scorers []scoring.WeightedScorer
		phased  bool
		phase   []byte // for a task without an end, the state false
	}{
		{"stable only", []scoring.WeightedScorer{balanced}, false, nil},
		{"a phased one", []scoring.WeightedScorer{balanced, phased}, true, []byte{1, 0, 0, 0, 0}},
		{"two phased", []scoring.WeightedScorer{phased, balanced, phased}, true, []byte{1, 0, 0, 0, 0, 1, 0, 0, 0, 0}},
		{"a phased and a volatile one", []scoring.WeightedScorer{phased, random}, false, []byte{1, 0, 0, 0, 0}},
	} {
		p, err := scoring.NewPipeline(schema, nil, c.scorers)
		if err != nil {
			t.Fatal(err)
		}
		s, err := scoring.NewScaledScorer(c.name, p, 100)
		if err != nil {
			t.Fatal(err)
		}
		task := &scoring.Task{}
		if got := s.Phased(); got != c.phased {
			t.Errorf("%s: Phased %v, want %v", c.name, got, c.phased)
		}
		if got := s.AppendPhase(nil, task, nil); string(got) != string(c.phase) {
			t.Errorf("%s: phase %v, want %v", c.name, got, c.phase)
		}
		*state = true
		if got := s.AppendPhase([]byte{9}, task, nil); len(c.phase) > 0 && got[5] != 1 {
			t.Errorf("%s: phase %v in the other phase", c.name, got)
		}
		*state = false
	}
}
