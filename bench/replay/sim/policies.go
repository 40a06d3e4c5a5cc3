package sim

import (
	"fmt"

	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
)

// simple is a policy of one scorer with the tightest-fit GPU choice.
func simple(name string, scorer func(c *Cluster, env Env) scoring.Scorer) Policy {
	return Policy{Name: name, Build: func(c *Cluster, env Env) (*scoring.Pipeline, DeviceChoice, error) {
		pipe, err := withScorers(c, scorer(c, env))
		return pipe, nil, err
	}}
}

// configured is a policy given as a resfit configuration; a
// fragmentation plugin's (frag) takes the GPU its FGD scores best.
func configured(name string, frag bool, doc func(env Env) string) Policy {
	return Policy{Name: name, Config: doc, Build: func(c *Cluster, env Env) (*scoring.Pipeline, DeviceChoice, error) {
		if frag {
			return fragPolicy(c, env, doc(env))
		}
		return fromConfig(c, env, doc(env))
	}}
}

// fixed is a configuration document that needs nothing from the Env.
func fixed(text string) func(Env) string { return func(Env) string { return text } }

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
		configured("LeastAllocated", false, fixed(kubeFit("LeastAllocated"))),
		configured("MostAllocated", false, fixed(kubeFit("MostAllocated"))),
		simple("BestFit", func(c *Cluster, _ Env) scoring.Scorer { return &BestFitScorer{c: c} }),
		simple("DotProd", func(c *Cluster, _ Env) scoring.Scorer { return &DotProdScorer{c: c} }),
		simple("GpuPacking", func(c *Cluster, _ Env) scoring.Scorer { return &GpuPackingScorer{c: c} }),
		configured("FGD", true, func(env Env) string { return fragConfig(config.FGD, env, "") }),
		configured("RSF", false, fixed(rsf(""))),
		configured("RSF+retention", false, fixed(rsf(rsfRetention))),
		configured("RSF+proportional", false, func(env Env) string { return rsf(fmt.Sprintf(rsfProportional, env.CoresPerGPU)) }),
		configured(ResfitFrag, true, func(env Env) string {
			extra := "    coresPerIdleGPU: " + exact(env.CoresPerGPU) + "\n"
			if env.LifetimeWeight != 0 && env.Lifetimes != nil {
				extra += "    lifetime: {weight: " + exact(env.LifetimeWeight) + "}\n"
			}
			switch {
			case env.NoNodeSize:
				extra += "    nodeSize: {weight: 0}\n"
			case env.NodeSize != 0:
				extra += "    nodeSize: {weight: " + exact(env.NodeSize) + "}\n"
			}
			return fragConfig(config.ResfitFrag, env, extra)
		}),
	}
}

// ResfitFrag is resfit's fragmentation-aware policy, the configuration
// plugin of that name (scoring/config): FGD, weighted above the whole
// range of its tie-breaker; PackLeastUsed over cpu and GPU, which orders
// FGD's many ties by how full the node's least-used of the two would be
// with the pod, so that pods gather on nodes in use and nodes that are
// emptying come free whole; and the sra proportional filter keeping, on
// every node, as much cpu per idle GPU as the workload's GPU pods ask for
// on average (Σ cpu / Σ GPU over them: 10.9 cores on openb), so that
// CPU-only pods do not strand GPUs. A pod sharing a GPU takes the GPU FGD
// scored best.
const ResfitFrag = "ResfitFrag"

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
