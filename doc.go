// Package resfit scores cluster nodes for a pod or task, resource type by
// resource type, with the exact numbers of the schedulers it follows
// (kube-scheduler v1.37, Volcano, Koordinator) and without allocating in the
// scoring loop.
//
// The library is in its sub-packages, one concept each, with dependencies
// pointing one way (scoring/config → scoring → sra, strategy → resource):
//
//   - resource: resource names, Kubernetes quantities, dense vectors, the
//     node table and the device view, and the host-neutral rules every
//     host reads its objects by (a cluster's schema, amounts in range, a
//     pod's requests and device request).
//   - strategy: per-resource scorers (MostAllocated, LeastAllocated,
//     RequestedToCapacityRatio, BalancedAllocation, binpack) under each
//     upstream's numeric profile.
//   - sra: scarce-resource avoidance (Volcano's retention score and
//     proportional filter, Koordinator's ScarceResourceAvoidance).
//   - scoring: the pipeline (filters, weighted scorers, top-N, explain),
//     the Placer, and the pod → task rule every host shares (NewTask).
//   - scoring/config: configurations in the forms users deploy (Volcano,
//     kube-scheduler, Koordinator, a legacy Policy, resfit's own; bare, in a
//     ConfigMap or among manifests), built into a pipeline.
//   - scoring/frag: FGD, the fragmentation-aware score for GPU sharing.
//   - scoring/lifetime: when running pods are expected to end (declared,
//     or learned from the pods that ended) and when nodes empty, and
//     ResfitFrag's term that keeps pods off the nodes about to empty.
//   - scoring/drf, scoring/proportion, scoring/priority,
//     scoring/conformance: job-level helpers (DRF order, queue shares, job
//     and task order, the eviction guard) beside node scoring.
//   - scoring/defrag: plans of moves that make room (make-room, reclaim,
//     give-back), and the bounds no plan beats.
//   - Two answers to a large pod that waits while small ones keep coming:
//     scoring/starvation is resfit's starvation control (EASY backfilling:
//     hold a node, backfill it, drain it), what the descheduler's reserve
//     mode and the replay's -starve run; scoring/reservation is Volcano's
//     job resource reservation (elect a job, lock nodes for it), kept to
//     compare against it (the replay's -reserve).
//
// examples/quickstart and examples/aiscenario are runnable starts.
//
// # Bad input
//
// One rule holds across the packages:
//
//   - Data from a user's cluster, configuration or pods — names, quantities,
//     amounts, request vectors, weights, annotations, device requests, a
//     table or view handed to a scorer — is checked where it enters, and a
//     bad value is an error that says where and what: a configuration error
//     names its field path and value (resources["nvidia.com/gpu"].weight:
//     must be > 0, got -1), all of them at once. Such input never panics,
//     never yields NaN and never a score outside [0, MaxScore]; a pipeline
//     checks every scorer's output against its maximum, so even a custom
//     scorer cannot break that.
//   - Pod annotations are written by any pod's author and are untrusted: an
//     unusable one (bad JSON, a weight out of range) scores the task 0, as
//     Volcano treats bad JSON.
//   - A programming error may panic, only where the godoc says so, with a
//     message naming the function: vectors of the wrong length handed to a
//     per-node kernel (ScoreNode, CheckNode, strategy.WeightedMean,
//     drf.Share, reservation.MainResource, proportion.Inqueue and the
//     queue checks of proportion.Shares), a nil schema given to
//     resource.NewTable, and a row outside [0, Len()) given to an accessor
//     that returns a value (Table.Name, Devices.Free, Batch.Total), as
//     indexing a slice does. Every method that returns an error reports
//     such input instead. A size hint below 0 (NewTable's capacity,
//     NewBatch's nodes) is 0.
//
// # Weights
//
// Every weight has a bound that keeps sums exact (resource.MaxWeight,
// 10^6, unless a narrower upstream bound applies):
//
//	weight                                             range
//	a resource in a scorer (Koordinator, Volcano       [1, 10^6]; Volcano's 0 where Volcano allows it
//	  resource-strategy-fit and binpack, sra
//	  retention, pod annotations)
//	a resource in kube-scheduler's NodeResourcesFit    (0, 100], as kube-scheduler validates (0 means 1)
//	a plugin's own weight (resourceStrategyFitWeight,  [0, 10^6]
//	  binpack.weight, the sra retention weight)
//	a scorer in a pipeline's total                     [0, 10^6], finite
//	a pipeline's largest total, Σ weight × MaxScore    at most scoring.MaxTotalScore, 2^53
//	a fragmentation class (scoring/frag)               [0, 10^6]
//	ResfitFrag's lifetime term (lifetime.weight)       [0, 10^6]
//	a reservation's Percent                            [0, 1] (a share, not a weight)
//	a queue's weight (scoring/proportion)              [0, 2^31−1], summed over queues within it, as Volcano's int32
//
// With these, a scorer's integer sums stay below 2^33, its largest score
// is 10^8, and every integer total is exact in float64. Strict
// configuration decoding rejects a weight above its bound with its path;
// compatibility mode holds it to the bound with a warning.
package resfit
