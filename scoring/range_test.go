package scoring_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// fixedScorer returns one score for every node, whatever it is.
type fixedScorer struct {
	score, max float64
}

func (f fixedScorer) Name() string      { return "fixed" }
func (f fixedScorer) MaxScore() float64 { return f.max }
func (f fixedScorer) ScoreNodes(_ *scoring.Task, _ scoring.Span, out []float64) error {
	for i := range out {
		out[i] = f.score
	}
	return nil
}

// NewPipeline refuses what would make a total infinite, NaN or inexact: a
// weight outside [0, MaxWeight] (math.MaxFloat64 once made totals +Inf), a
// scorer maximum that is not finite, a largest total above 2^53, and nil
// parts.
func TestNewPipelineRejectsWeightsOutsideTheirBound(t *testing.T) {
	s, _ := resource.NewSchema("cpu")
	ok := fixedScorer{score: 1, max: 100}
	for name, c := range map[string]struct {
		filters []scoring.Filter
		scorers []scoring.WeightedScorer
		want    string
	}{
		"weight MaxFloat64":    {scorers: []scoring.WeightedScorer{{ok, math.MaxFloat64}}, want: "weight must be in [0, 1000000]"},
		"weight NaN":           {scorers: []scoring.WeightedScorer{{ok, math.NaN()}}, want: "got NaN"},
		"weight +Inf":          {scorers: []scoring.WeightedScorer{{ok, math.Inf(1)}}, want: "got +Inf"},
		"weight −1":            {scorers: []scoring.WeightedScorer{{ok, -1}}, want: "got -1"},
		"weight above bound":   {scorers: []scoring.WeightedScorer{{ok, resource.MaxWeight + 1}}, want: "got 1.000001e+06"},
		"infinite MaxScore":    {scorers: []scoring.WeightedScorer{{fixedScorer{max: math.Inf(1)}, 1}}, want: "MaxScore must be in [0, 2^53]"},
		"NaN MaxScore":         {scorers: []scoring.WeightedScorer{{fixedScorer{max: math.NaN()}, 1}}, want: "MaxScore"},
		"total above 2^53":     {scorers: []scoring.WeightedScorer{{fixedScorer{max: 1 << 40}, resource.MaxWeight}}, want: "above 2^53"},
		"nil scorer":           {scorers: []scoring.WeightedScorer{{nil, 1}}, want: "nil scorer"},
		"nil filter":           {filters: []scoring.Filter{nil}, want: "filters[0]: nil filter"},
		"nil among the others": {filters: []scoring.Filter{scoring.NewFitFilter(nil, nil), nil}, want: "filters[1]"},
	} {
		if _, err := scoring.NewPipeline(s, c.filters, c.scorers); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
	}
	if _, err := scoring.NewPipeline(s, nil, []scoring.WeightedScorer{{fixedScorer{max: 1e8}, resource.MaxWeight}}); err != nil {
		t.Errorf("weights at their bounds: %v", err)
	}
}

// A scorer's output is checked against its own maximum, node by node: NaN,
// a negative score or one above MaxScore is an error naming the scorer and
// the node, never a total outside [0, MaxScore].
func TestScoreRejectsAScorerOutsideItsRange(t *testing.T) {
	s, _ := resource.NewSchema("cpu")
	nodes := resource.NewTable(s, 2)
	nodes.Add("n0", resource.Vector{1000}, nil)
	nodes.Add("n1", resource.Vector{1000}, nil)
	for _, bad := range []float64{math.NaN(), -1, 101, math.Inf(1)} {
		p, err := scoring.NewPipeline(s, nil, []scoring.WeightedScorer{{fixedScorer{score: bad, max: 100}, 1}})
		if err != nil {
			t.Fatal(err)
		}
		err = p.Score(&scoring.Task{Name: "t", Requests: resource.Vector{0}}, nodes, p.NewBatch(2))
		if err == nil || !strings.Contains(err.Error(), `scorer fixed gave node "n0"`) {
			t.Errorf("score %v: %v", bad, err)
		}
	}
}

// Explain needs no task or table: the batch knows both. A batch built by a
// pipeline with fewer scorers and scored by another explains with the
// scoring pipeline's columns; a batch never scored is an error, not a
// panic.
func TestBatchExplainKnowsItsTaskAndTable(t *testing.T) {
	p, nodes := aiCluster(t)
	if err := p.NewBatch(-1).Explain(&bytes.Buffer{}, 3); err == nil || !strings.Contains(err.Error(), "not been scored") {
		t.Errorf("unscored batch: %v", err)
	}
	fewer, err := scoring.NewPipeline(p.Schema(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := fewer.NewBatch(-5)
	tk := task(t, p.Schema(), "gpu-pod", map[string]string{"cpu": "8", gpu: "2"})
	if err := p.Score(tk, nodes, b); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := b.Explain(&out, 1); err != nil {
		t.Fatal(err)
	}
	// gpu (2+6)/8 × 2 = 2, cpu (64−24)/64 = 0.625: 2.625/3 × 1000 = 875.
	if want := "| 0 | gpu-pod | gpu-a | 875 | 875 |"; !strings.Contains(out.String(), want) {
		t.Errorf("Explain wrote\n%s\nwant a line %q", out.String(), want)
	}
}

// Through a pipeline, NodeResourcesFitPlus chooses resources by the plain
// request and scores the Koordinator non-zero amounts (the review's
// example: 25, not 62), preferring KoordinatorRequests when a task has
// them.
func TestKoordinatorThroughPipelineUsesBothVectors(t *testing.T) {
	p := fitPlusPipeline(t) // plugin weight 2
	schema := p.Schema()
	nodes := resource.NewTable(schema, 1)
	nodes.AddQuantities("gpu-node", map[string]string{"cpu": "96", "memory": "512Gi", gpu: "8"}, nil)
	b := p.NewBatch(1)
	gpuOnly := &scoring.Task{Name: "gpu-only", Requests: resource.Vector{0, 0, 2000}, NonZeroRequests: resource.Vector{100, 200 << 20, 2000}}
	if err := p.Score(gpuOnly, nodes, b); err != nil {
		t.Fatal(err)
	}
	if b.Total(0) != 25*2 {
		t.Errorf("GPU-only pod = %v, want 25 × 2", b.Total(0))
	}
	// cpu requested: kube's rule gives 48 cores, Koordinator's 96 (an init
	// container of 96 after a sidecar). With the Koordinator amounts cpu
	// Least (96−96)/96 → 0, so (25·2 + 0)/3 = 16 (kube's amount would give
	// (50 + 50)/3 = 33); memory, requested only through the defaults, does
	// not count.
	withCPU := &scoring.Task{Name: "init", Requests: resource.Vector{48000, 0, 2000},
		NonZeroRequests: resource.Vector{48000, 200 << 20, 2000}, KoordinatorRequests: resource.Vector{96000, 200 << 20, 2000}}
	if err := p.Score(withCPU, nodes, b); err != nil {
		t.Fatal(err)
	}
	if b.Total(0) != 16*2 {
		t.Errorf("with Koordinator requests = %v, want 16 × 2", b.Total(0))
	}
}
