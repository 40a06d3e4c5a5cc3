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
//     allocatable, a NodeInfo's report or a cache's sums become a table
//     row (Allocatable, RowWriter), in canonical units, clamped.
//   - v1.Nodes and their pods become a Cache, a cache as
//     kube-scheduler's is: a resource.Table (allocatable, used plain and
//     non-zero, the "pods" slot, as NodeInfo counts them) and a device view
//     with each node's GPU model, kept up to date by node and pod events
//     as an informer delivers them, each changing only the rows it
//     touches, and by Assume and Forget, as the scheduler's cache assumes
//     a pod it has chosen a node for.
//   - A pod with its DRA claims becomes a PodTask: the task it is on each
//     node, what the claims take added.
//   - A host that reads a whole cluster at once (kubectl-resfit, a
//     descheduler) builds a Scene: the cache and a configuration's
//     pipeline, as every host builds it, with the workload's pod classes
//     and FGD's cost over them. A Planning over the scene is the cluster
//     as resfit's planners (scoring/defrag) see it: the running pods,
//     movable or not and why (Movable, or the host's own Movability),
//     within their PodDisruptionBudgets; MakeRoom, SettlePending and Round
//     are what kubectl-resfit's defrag and the descheduler plan with, and
//     QueueOrder the order pending pods are planned for.
//
// # How DRA enters a host's table, device view and tasks
//
// Every host calls these.
//
// A row: a device class's resource that the node does not report itself
// (its allocatable amount of that name is 0, as kube-scheduler's
// NodeResourcesFit decides that a resource is backed by DRA) holds the
// class's units on the node (allocatable: devices, a GPU with partitions
// once) and what claims use of them (used), in the resource's canonical
// unit (RowWriter.WithDRA, dra.Reading.CanonicalAmounts). The device view: a node
// that has no devices of the view's resource otherwise (no device-plugin
// amount, no GPU-sharing registration) has the units of the class whose
// resource it is (nvidia.com/gpu for NVIDIA's chart), each with what is
// left of it (unitLeft), of their productName's model when all of them
// agree (dra.Reading.NodeDevices). A pod holds nothing on such a node
// by guessing: its claims' allocations say what it holds.
//
// A task: a pod's claims not yet allocated add what they take on a node to
// its requests in the classes' slots, and, for the device view's class, to
// the devices it asks for (PodTask). When what they take is the same on
// every node (every request one exact count of one simple class, without
// its own selectors), the task is one; otherwise a node that cannot satisfy the
// claims is infeasible and each distinct take is a task of its own.
//
// Amounts are in resfit's canonical units (resource.UnitOf): millicores,
// milli-units of extended resources, bytes.
package kubebridge
