package sim

import (
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
	"github.com/resfit/resfit/scoring/lifetime"
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
	// Config, for a policy that is a resfit configuration, returns its
	// document (what Build loads); nil for the others.
	Config func(env Env) string
}

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
	// Lifetimes is the view of when the cluster's nodes empty, for a
	// replay that follows when pods end (ResfitFrag's lifetime term); nil
	// for none.
	Lifetimes *lifetime.Nodes
	// LifetimeWeight is ResfitFrag's lifetime weight, for declared and
	// learned ends alike, where Lifetimes is given; 0 its defaults.
	LifetimeWeight float64
	// NodeSize and NoNodeSize are ResfitFrag's node-size weight and its
	// switch (Options).
	NodeSize   float64
	NoNodeSize bool
	// LearnClasses has FGD and ResfitFrag learn their typical classes from
	// the pods they place (learn: {}, the configuration's defaults),
	// starting from none, instead of being given Classes.
	LearnClasses bool
}

// withScorers is the filters every policy has (NodeResourcesFit, then
// DeviceShare over the cluster's device view) and the given scorers,
// weight 1.
func withScorers(c *Cluster, scorers ...scoring.Scorer) (*scoring.Pipeline, error) {
	ws := make([]scoring.WeightedScorer, len(scorers))
	for i, s := range scorers {
		ws[i] = scoring.WeightedScorer{Scorer: s, Weight: 1}
	}
	df, err := scoring.NewDeviceFilter(c.GPUs)
	if err != nil {
		return nil, err
	}
	return scoring.NewPipeline(c.Table.Schema(), []scoring.Filter{scoring.NewFitFilter(nil, nil), df}, ws)
}

// fromConfig builds a pipeline from a resfit configuration, the way a
// user writes one (its default filter is NodeResourcesFit), for the
// cluster's device view, as a host that keeps one builds it (the
// DeviceShare filter follows the configured filters).
func fromConfig(c *Cluster, env Env, text string) (*scoring.Pipeline, DeviceChoice, error) {
	cfg, err := config.Load([]byte(text), config.Options{})
	if err != nil {
		return nil, nil, err
	}
	pipe, err := cfg.BuildFor(c.Table.Schema(), config.Host{Devices: c.GPUs, Lifetimes: env.Lifetimes})
	return pipe, nil, err
}
