// Package sim replays a GPU cluster trace through resfit's scoring
// pipeline to measure how much GPU each scheduling policy leaves
// unallocatable, by the method of "Beware of Fragmentation: Scheduling
// GPU-Sharing Workloads with Fragmentation Gradient Descent" (Weng et al.,
// USENIX ATC'23) on its openb trace (Alibaba cluster-trace-gpu-v2023).
//
// A Cluster holds the nodes in a resfit resource.Table (cpu, memory and
// nvidia.com/gpu in milli-GPU) beside a resource.Devices view with each
// GPU's free milli. Every policy is a scoring.Pipeline: the NodeResourcesFit
// and DeviceShare filters plus the policy's scorers, either resfit's own
// (resource-strategy-fit, sra, NodeResourcesFit strategies, FGD from
// scoring/frag) or the paper's other baselines written as scoring.Scorer
// implementations here (Random, BestFit, DotProd, GpuPacking). Run places
// a workload one pod at a time, with no departures, and records the GPU
// allocation as the arrived load grows. The replay with departures is
// package churn's, over the same cluster and policies; the figures'
// style is package figure's.
//
// # The paper's baselines
//
// The paper's baseline policies as resfit scorers. Each reads the cluster
// it was built for (its table rows and device view); a pipeline built from
// them is for one replay at a time. Scores are whole numbers in [0, 100],
// as the simulator's plugins give, except Random's.
package sim
