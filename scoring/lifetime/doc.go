// Package lifetime says when running pods are expected to end and when
// nodes are expected to empty, and scores nodes by it, so that a pod goes
// where it is likely to end before its node would empty anyway and nodes
// about to empty come free whole for the largest pods.
//
// Four parts, each usable alone:
//
//   - Model learns how long pods run from the pods that ended, by keys the
//     host names (an owner, a shape), most specific first, and predicts
//     what a running pod has left at its age: a quantile of the lifetimes
//     seen that are longer than its age, less the age. With heavy tails a
//     pod that has run long is expected to run longer still, so a pod is
//     predicted again when it outlives its prediction. Where no key has
//     seen enough (by default 256 lifetimes longer than the age: a
//     quantile of fewer heavy-tailed ones says little), a pod that has run
//     for a while is expected to run as long again (the Lindy rule); a pod
//     that has just started, nothing.
//   - Tracker follows the running pods of a host's nodes (a table's rows):
//     each pod's expected end, what it declares (a Job's
//     activeDeadlineSeconds, resfit.io/runs-for) or what the Model
//     predicts, and for each row the time it is expected to empty (the
//     latest of its pods' ends; unknown while one of them is) and when a
//     given amount of the size resource is expected to be free there. It
//     learns from the pods that end (the Model), predicts again the pods
//     that outlive their prediction (Advance), and keeps its view of the
//     rows (Nodes) for the scorer.
//   - Scorer scores, for a task that says when it ends (scoring.Task.Ends),
//     each node by how likely the task is to end before the node would
//     empty anyway (Score: 100 × left / (left + rest), the two times taken
//     as exponential, the least that can be assumed of rough ends): it
//     draws tasks to the nodes that stay busy longest and keeps them off
//     the nodes about to empty, so those come free whole. An empty node
//     scores 0, a node with a pod whose end is not known 100, and every
//     node 100 for a task whose end is not known. Given the host's device
//     view, it waits (every node 0) while whole nodes are not scarce:
//     while more than WholeShare of the nodes with the most devices have
//     every device free, as when a cluster fills up; placing by ends then
//     spreads the pods that stay, which the cluster pays for once full.
//   - UntilKnown scores as one scorer until anything is known of when
//     pods end, or FillShare of the devices are in use, and as another
//     from then on: ResfitFrag's tie-breaker, which balances while nothing
//     is known (a cluster filled at one instant) and packs once something
//     is, so that nodes that are emptying come free whole.
//
// Times are seconds as float64 on the host's clock (Unix seconds in a
// Kubernetes host, replay time in the replay); a lifetime, an age, a
// remaining time are seconds too.
package lifetime
