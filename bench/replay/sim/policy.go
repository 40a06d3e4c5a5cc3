package sim

import (
	"fmt"

	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
	"github.com/resfit/resfit/sra"
)

// Policy is a scheduling policy: its pipeline for a cluster, and which
// GPU a pod sharing one takes on the chosen node.
type Policy struct {
	Name string
	// Build returns the policy's pipeline for one replay on c, and its
	// GPU choice for a shared pod (nil means the tightest fit). Every
	// pipeline has the NodeResourcesFit filter (cpu, memory, GPU total)
	// and the DeviceShare filter (GPUs one by one).
	Build func(c *Cluster, env Env) (*scoring.Pipeline, DeviceChoice, error)
}

// DeviceChoice picks the GPU a pod sharing one takes on a row.
type DeviceChoice func(row int, p Pod) int

// Env is what a policy may use besides the cluster.
type Env struct {
	Seed    uint64
	Classes []Class
	// FromScratch turns off the fragmentation scorers' incremental
	// evaluation.
	FromScratch bool
	// CoresPerGPU is what the workload's GPU pods ask for per GPU on
	// average, the proportional filter's cpu ratio.
	CoresPerGPU float64
}

// proportional is the sra proportional filter keeping cores cpu free per
// idle GPU.
func proportional(c *Cluster, cores float64) (scoring.Filter, error) {
	p, err := sra.NewProportional(c.Table.Schema(), []sra.Ratio{{Resource: GPU, CPU: cores}})
	if err != nil {
		return nil, err
	}
	return scoring.NewProportionalFilter(p)
}

// withScorers is the shared filters plus the given scorers, weight 1.
func withScorers(c *Cluster, scorers ...scoring.Scorer) (*scoring.Pipeline, error) {
	ws := make([]scoring.WeightedScorer, len(scorers))
	for i, s := range scorers {
		ws[i] = scoring.WeightedScorer{Scorer: s, Weight: 1}
	}
	return assemble(c, ws)
}

// assemble is the shared filters (NodeResourcesFit, DeviceShare), any
// extra filters, and the weighted scorers.
func assemble(c *Cluster, scorers []scoring.WeightedScorer, extra ...scoring.Filter) (*scoring.Pipeline, error) {
	df, err := scoring.NewDeviceFilter(c.GPUs)
	if err != nil {
		return nil, err
	}
	filters := append([]scoring.Filter{scoring.NewFitFilter(nil, nil), df}, extra...)
	return scoring.NewPipeline(c.Table.Schema(), filters, scorers)
}

// fromConfig builds a pipeline from a resfit configuration, the way a
// user writes one (its default filter is NodeResourcesFit), and adds the
// DeviceShare filter.
func fromConfig(c *Cluster, text string) (*scoring.Pipeline, DeviceChoice, error) {
	cfg, err := config.Load([]byte(text), config.Options{})
	if err != nil {
		return nil, nil, err
	}
	pipe, err := cfg.Build(c.Table.Schema())
	if err != nil {
		return nil, nil, err
	}
	df, err := scoring.NewDeviceFilter(c.GPUs)
	if err != nil {
		return nil, nil, err
	}
	pipe, err = pipe.WithFilters(df)
	return pipe, nil, err
}

// simple is a policy of one scorer with the tightest-fit GPU choice.
func simple(name string, scorer func(c *Cluster, env Env) scoring.Scorer) Policy {
	return Policy{Name: name, Build: func(c *Cluster, env Env) (*scoring.Pipeline, DeviceChoice, error) {
		pipe, err := withScorers(c, scorer(c, env))
		return pipe, nil, err
	}}
}

// configured is a policy given as a resfit configuration.
func configured(name, text string) Policy {
	return Policy{Name: name, Build: func(c *Cluster, _ Env) (*scoring.Pipeline, DeviceChoice, error) {
		return fromConfig(c, text)
	}}
}

// Policies returns the replay's policies, in the order they are reported:
// the paper's baselines, kube-scheduler's two NodeResourcesFit strategies,
// resfit's resource-strategy-fit with and without sra, and ResfitFrag.
func Policies() []Policy {
	return []Policy{
		{Name: "Random", Build: func(c *Cluster, env Env) (*scoring.Pipeline, DeviceChoice, error) {
			s := NewRandomScorer(env.Seed)
			pipe, err := withScorers(c, s)
			return pipe, s.Device(c), err
		}},
		configured("LeastAllocated", kubeFit("LeastAllocated")),
		configured("MostAllocated", kubeFit("MostAllocated")),
		simple("BestFit", func(c *Cluster, _ Env) scoring.Scorer { return &BestFitScorer{c: c} }),
		simple("DotProd", func(c *Cluster, _ Env) scoring.Scorer { return &DotProdScorer{c: c} }),
		simple("GpuPacking", func(c *Cluster, _ Env) scoring.Scorer { return &GpuPackingScorer{c: c} }),
		{Name: "FGD", Build: func(c *Cluster, env Env) (*scoring.Pipeline, DeviceChoice, error) {
			s, err := NewFGD(c, env.Classes, env.FromScratch)
			if err != nil {
				return nil, nil, err
			}
			pipe, err := withScorers(c, s)
			return pipe, fgdDevice(s, c), err
		}},
		configured("RSF", rsf("")),
		configured("RSF+retention", rsf(rsfRetention)),
		{Name: "RSF+proportional", Build: func(c *Cluster, env Env) (*scoring.Pipeline, DeviceChoice, error) {
			return fromConfig(c, rsf(fmt.Sprintf(rsfProportional, env.CoresPerGPU)))
		}},
		{Name: ResfitFrag, Build: buildResfitFrag},
	}
}

// ResfitFrag is resfit's fragmentation-aware policy: three pipeline parts,
// each doing one job.
//
//   - FGD (weight 101) ranks nodes by how much the pod lowers their
//     fragmentation, in the paper's whole steps 0..100. Hundreds of nodes
//     often tie on the top step; the paper's results come from breaking
//     those ties by a fixed node priority.
//   - NodeResourcesBalancedAllocation over cpu and GPU (weight 1, scores
//     0..100, so it only orders FGD's ties) breaks them instead by keeping
//     each node's cpu and GPU use in step: a node is not left with idle
//     GPUs and no cpu, nor idle cpu and no GPU.
//   - The sra proportional filter keeps, on every node, as much cpu per
//     idle GPU as the workload's GPU pods ask for on average (Σ cpu / Σ GPU
//     over them: 10.9 cores on openb), so CPU-only pods do not strand GPUs.
//
// A pod sharing a GPU takes the GPU FGD scored best.
const ResfitFrag = "ResfitFrag"

func buildResfitFrag(c *Cluster, env Env) (*scoring.Pipeline, DeviceChoice, error) {
	cfg, err := config.Load([]byte(`
plugins:
- name: NodeResourcesBalancedAllocation
  args: {resources: [{name: cpu, weight: 1}, {name: nvidia.com/gpu, weight: 1}]}
`), config.Options{})
	if err != nil {
		return nil, nil, err
	}
	balanced, err := cfg.Build(c.Table.Schema())
	if err != nil {
		return nil, nil, err
	}
	fgd, err := NewFGD(c, env.Classes, env.FromScratch)
	if err != nil {
		return nil, nil, err
	}
	// One FGD step outweighs the whole of the tie-breaker's range.
	scorers := append([]scoring.WeightedScorer{{Scorer: fgd, Weight: balanced.MaxScore() + 1}}, balanced.Scorers()...)
	prop, err := proportional(c, env.CoresPerGPU)
	if err != nil {
		return nil, nil, err
	}
	pipe, err := assemble(c, scorers, prop)
	return pipe, fgdDevice(fgd, c), err
}

// kubeFit is kube-scheduler's NodeResourcesFit scoring cpu and GPU alike
// (memory is filtered, not scored, as in the paper's baselines).
func kubeFit(strategy string) string {
	return `
plugins:
- name: NodeResourcesFit
  args:
    scoringStrategy:
      type: ` + strategy + `
      resources: [{name: cpu, weight: 1}, {name: nvidia.com/gpu, weight: 1}]
`
}

// rsf is resource-strategy-fit packing GPU and spreading cpu, with an
// optional sra section.
func rsf(sra string) string {
	return `
plugins:
- name: resource-strategy-fit
  args:
    resources:
      nvidia.com/gpu: {type: MostAllocated, weight: 2}
      cpu: {type: LeastAllocated, weight: 1}
` + sra
}

const (
	// Retention keeps CPU pods off nodes with GPUs; on the openb GPU
	// nodes, which all have GPUs, it scores every node alike.
	rsfRetention = `    sra:
      policy: retention
      resources: nvidia.com/gpu
      retention: {weight: 10, nvidia.com/gpu: 1}
`
	// Proportional keeps the workload's cores per GPU free per idle GPU.
	rsfProportional = `    sra:
      policy: proportional
      resources: nvidia.com/gpu
      proportional: {nvidia.com/gpu.cpu: %g}
`
)
