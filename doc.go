// Package resfit scores cluster nodes for a pod or task, resource type by
// resource type, with the exact numbers of the schedulers it follows
// (kube-scheduler v1.37, Volcano, Koordinator) and without allocating in the
// scoring loop.
//
// The library is in its sub-packages, one concept each, with dependencies
// pointing one way (scoring → sra, strategy → resource):
//
//   - resource: resource names, Kubernetes quantities, dense vectors and the
//     node table.
//   - strategy: per-resource scorers (MostAllocated, LeastAllocated,
//     RequestedToCapacityRatio, BalancedAllocation, binpack) under each
//     upstream's numeric profile.
//   - sra: scarce-resource avoidance (Volcano's retention score and
//     proportional filter, Koordinator's ScarceResourceAvoidance).
//   - scoring: the pipeline (filters, weighted scorers, top-N, explain) and
//     configuration in upstream formats.
//
// examples/quickstart and examples/aiscenario are runnable starts.
package resfit
