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
//
// # Replays with departures
//
// In a replay with departures (RunChurn) pods arrive over time and leave
// when their lifetime is over, so GPUs free up in the middle of busy
// nodes, as they do in a cluster that runs for days.
//
//   - Pods are drawn from the pod list as the paper draws them (uniformly,
//     with replacement), and arrive as a Poisson process.
//   - Each gets a lifetime drawn from the lifetimes of the list's pods of
//     its size (Lifetimes): CPU-only, a share of a GPU, one GPU, or more
//     (the list's 2-, 4- and 8-GPU pods together: 74 ran). Pods that never
//     ran (Pending) give no lifetime; the 34 still running at the trace's
//     end give theirs up to it, a lower bound, as they are.
//   - The arrival rate makes the offered GPU load (rate × E[GPUs ×
//     lifetime]) Load × the cluster's GPU capacity.
//   - The run starts in the steady state of an unbounded cluster: the pods
//     alive at time 0 had arrived by the same process (their lifetimes
//     length-biased, their ages uniform over them), and are placed in the
//     order they arrived. The trace's lifetimes are heavy-tailed (a few
//     pods ran for months and hold most of its GPU-hours), so that a run
//     that started empty would take months to fill.
//   - A pod that fits nowhere waits. The queue is first in, first out and
//     without backoff, and a waiting pod does not block the ones behind it
//     (kube-scheduler's order by arrival, without its backoff): when a pod
//     leaves a node, the waiting pods that fit there now are placed, the
//     earliest first, each where the policy puts it. Nothing else can make
//     room, so a pod waits for nothing but a departure.
//   - A warm-up is discarded; the metrics are averaged over the window
//     after it (ChurnResult).
//
// # Plots
//
// The plots are drawn for the comparison a reader makes: each series in a
// colour and a marker of its own, the legend in columns under the plot
// (never over the data, never past the edge), the axes zoomed to the data.
//
// # The paper's baselines
//
// The paper's baseline policies as resfit scorers. Each reads the cluster
// it was built for (its table rows and device view); a pipeline built from
// them is for one replay at a time. Scores are whole numbers in [0, 100],
// as the simulator's plugins give, except Random's.
//
// # Starvation control in a replay
//
// Starvation control in a replay (ChurnMoves.Starve), through
// scoring/starvation as a host calls it: every round, the GPU pod that has
// waited longer than After, the largest first, is the target
// (starvation.Elect); the node it fits first, its pods leaving at the ends
// they declare (ChurnSpec.Declare), is held for it (starvation.Choose),
// and planned again whenever it changes; another pod may go there only
// where it cannot delay the target (starvation.Hold.Admits, a filter in
// the replay's pipeline). With drain moves, a hold that waiting alone will
// not free within Patience (starvation.Hold.Overdue) gives up the pods in
// its way, within the allowance (starvation.Hold.DrainOrder).
package sim
