// Package kubebridge turns Kubernetes objects into resfit's dense ones. It
// is the one place in resfit that knows Kubernetes types; the
// kube-scheduler plugins, kubectl-resfit and a scheduler of your own use it
// alike.
//
//   - A v1.Pod becomes a scoring.Task (NewTask): its requests by kube's
//     rules (plain and with the non-zero defaults), by Koordinator's rule
//     for NodeResourcesFitPlus, Volcano's per-pod scoring annotations, and
//     the devices it asks for when a pod states a share of a GPU.
//   - v1.Nodes and the pods bound to them become a resource.Table
//     (NewSnapshot): allocatable, used (plain and non-zero) and the "pods"
//     slot, as kube-scheduler's NodeInfo counts them.
//   - A Snapshot takes node and pod add, update and delete events, as an
//     informer delivers them, and changes only the rows they touch.
//
// Amounts are in resfit's canonical units (resource.UnitOf): millicores,
// milli-units of extended resources, bytes.
package kubebridge
