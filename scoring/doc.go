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
// filter rejects is not feasible and is left out of Top. What a filter or
// scorer is, and what a Placer may remember of it, is in contracts.go
// (Scorer, Filter, Span, Volatile, Monotone). The adapters here
// (NewStrategyScorer, NewKoordinatorScorer, NewVolcanoScorer,
// NewRetentionScorer, NewAvoidanceScorer, NewSizeScorer, all made by
// NewScorer; NewLargestSizeScorer, Phased by the table's largest node;
// NewFitFilter, NewProportionalFilter, NewDeviceFilter) turn the
// strategy and sra kernels into pipeline parts.
//
// NewTask is the rule every host turns a pod into a Task by (its
// requests, Volcano's per-pod override, the devices it asks for and the
// device models it accepts); a host reads its own pod type into it
// (kubebridge.NewTask for a v1.Pod).
//
// A Placer places many tasks in a row on one table (a job's workers, a
// replayed trace): for tasks alike it scores a node again only when the
// node's row changed, and finds the best node in O(log N), with exactly
// the placements of scoring every node for every task; PlaceGang places a
// job all or nothing.
package scoring
