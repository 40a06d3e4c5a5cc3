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
// allocation as the arrived load grows.
package sim
