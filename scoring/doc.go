// Package scoring is the framework-agnostic pipeline: filters, then
// weighted scorers, over many nodes at once, then top-N selection and an
// explanation per plugin.
//
// A Pipeline is assembled from filters and weighted scorers (NewPipeline),
// or built from a configuration in an upstream format by package
// scoring/config. It is immutable and safe for concurrent use.
// Pipeline.Score fills a caller-owned Batch for one task against a
// resource.Table of nodes without allocating:
//
//	batch := pipe.NewBatch(nodes.Len())
//	_ = pipe.Score(&task, nodes, batch)
//	best := batch.Top(3, nil)
//
// The total of a node is Σ weight × score over the scorers; a node any
// filter rejects is not feasible and is left out of Top. The adapters here
// (NewStrategyScorer, NewKoordinatorScorer, NewVolcanoScorer,
// NewRetentionScorer, NewAvoidanceScorer, NewFitFilter,
// NewProportionalFilter, NewDeviceFilter) turn the strategy and sra
// kernels into pipeline parts.
package scoring
