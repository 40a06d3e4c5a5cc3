// Package kubebridge is resfit's one host layer: it turns Kubernetes
// objects into resfit's dense ones, by rules every host shares. It is the
// one place in resfit that knows Kubernetes types; the kube-scheduler
// plugins, the Volcano plugin, kubectl-resfit and a scheduler of your own
// use it alike, so that the same pod on the same cluster is scored the
// same in each. What needs no Kubernetes type is in the core
// (resource.SchemaOf, resource.Clamp, resource.DeviceRequestOf,
// scoring.NewTask, strategy.VolcanoOverride), and this package calls it.
//
//   - A v1.Pod becomes a scoring.Task (NewTask, over scoring.NewTask): its
//     requests by kube's rules (plain and with the non-zero defaults), by
//     Koordinator's rule for NodeResourcesFitPlus, Volcano's per-pod
//     scoring annotations, its pod group, the devices it asks for and the
//     GPU models it accepts.
//   - A cluster's resource names become its schema (SchemaFor); a node's
//     allocatable, a NodeInfo's report or a snapshot's sums become a table
//     row (Allocatable, RowWriter), in canonical units, clamped.
//   - v1.Nodes and their pods become a Snapshot, a cache as
//     kube-scheduler's is: a resource.Table (allocatable, used plain and
//     non-zero, the "pods" slot, as NodeInfo counts them) and a device view
//     with each node's GPU model, kept up to date by node and pod events
//     as an informer delivers them, each changing only the rows it
//     touches, and by Assume and Forget, as the scheduler's cache assumes
//     a pod it has chosen a node for.
//   - A pod with its DRA claims becomes a PodTask: the task it is on each
//     node, what the claims take added.
//   - A host that reads a whole cluster at once (kubectl-resfit, a
//     descheduler) builds a Scene: the snapshot and a configuration's
//     pipeline, as every host builds it, with the workload's pod classes
//     and FGD's cost over them. A Planning over the scene is the cluster
//     as resfit's planners (scoring/defrag) see it: the running pods,
//     movable or not and why (Movable, or the host's own Movability),
//     within their PodDisruptionBudgets; MakeRoom, SettlePending and Round
//     are what kubectl-resfit's defrag and the descheduler plan with, and
//     QueueOrder the order pending pods are planned for.
//
// Amounts are in resfit's canonical units (resource.UnitOf): millicores,
// milli-units of extended resources, bytes.
package kubebridge
