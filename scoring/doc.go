// Package scoring is the framework-agnostic pipeline: filters, then
// weighted scorers, over many nodes at once, then top-N selection and an
// explanation per plugin.
//
// A Config comes from upstream configuration formats (Load, Decode,
// DecodeArgs): Volcano's volcano-scheduler.conf and plugin arguments,
// kube-scheduler's KubeSchedulerConfiguration and NodeResourcesFitArgs,
// Koordinator's NodeResourcesFitPlusArgs, and the legacy Policy form of the
// RequestedToCapacityRatio KEP. Decoding is strict: every bad value is an
// error naming its field path and value. Options.Compat instead reproduces
// what Volcano silently does, with a warning per changed value.
//
// Config.Build returns a Pipeline for a resource.Schema. A Pipeline is
// immutable and safe for concurrent use. Pipeline.Score fills a caller-owned
// Batch for one task against a resource.Table of nodes without allocating:
//
//	pipe, _ := cfg.Build(schema)
//	batch := pipe.NewBatch(nodes.Len())
//	_ = pipe.Score(&task, nodes, batch)
//	best := batch.Top(3, nil)
//
// The total of a node is Σ weight × score over the scorers; a node any
// filter rejects is not feasible and is left out of Top.
package scoring
