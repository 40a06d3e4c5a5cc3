// Package kubereplay replays an openb pod list through the real
// kube-scheduler (v1.37.2, in the test's process) against a real
// kube-apiserver and etcd (processes of their own: schedtest), under
// resfit's plugins, and reports what bench/replay reports:
// how much GPU each policy leaves unallocated.
//
// The cluster is the trace's node list as v1.Nodes, each registering its
// GPUs as HAMi's device plugin does (hami.io/node-nvidia-register, ten
// virtual GPUs each in its allocatable nvidia.com/gpu) and labelled with
// its GPU model (nvidia.com/gpu.product). The pods are bench/replay's
// workload for a seed (the same sampling to 130% of GPU capacity), in
// HAMi's resource form: nvidia.com/gpu for the GPU count and
// nvidia.com/gpucores for a share of one, and resfit.io/gpu-models for the
// models a pod accepts. They are created one after another, each bound or
// found unschedulable (and then deleted: in the replay pods never leave,
// so a pod that fits nowhere never will) before the next.
//
// Which GPU inside the chosen node a pod gets is the sharing stack's
// choice: the driver plays HAMi's part, choosing the GPU as bench/replay's
// policy does and writing it in the pod's hami.io/vgpu-devices-allocated
// annotation, which resfit's plugins read back. Ties between equal top
// scores, which kube-scheduler breaks at random, are broken as
// bench/replay breaks them (a seeded node priority) by two score plugins
// of this package (TieBreakHighName, TieBreakLowName) under the policy's
// plugins, whose weights are scaled above the priority's whole range.
//
// The replay follows kube-scheduler: bench/replay's placement logic
// (sim.Run with Options.Choose) sees each pod where kube-scheduler put it,
// and counts how often kube-scheduler chose the node bench/replay's own
// pipeline would have chosen.
package kubereplay
