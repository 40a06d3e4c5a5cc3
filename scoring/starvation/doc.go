// Package starvation keeps the largest pods from waiting forever where
// small ones come and go: it elects the pod that has waited too long,
// holds a node for it, lets other pods use the held node only where they
// cannot delay it (backfill), and says when waiting alone will not free
// the node in time, so that a host drains it.
//
// It is EASY backfilling (Lifka, 1995; Slurm's sched/backfill), made for a
// cluster whose pods mostly do not say how long they run:
//
//   - Elect: among the pods that have waited longer than a threshold, the
//     largest (by the election's size resource, the GPUs), then the one
//     that has waited longest. The target stays the target while it waits
//     and stays over the line, so that a hold is not given up for every
//     newcomer.
//   - Choose: for each node the target could use, the time it would fit
//     there, the node's pods leaving at the ends they declare (EASY's
//     shadow time), and the pods in the way until then. A pod that
//     declares no end does not leave on its own: a node whose way is
//     blocked by such pods is ranked by what can be counted, how many pods
//     and how much of the size resource must go. The node that frees
//     first wins, then the one with the least in the way.
//   - Admits: the backfill rule on the held node. Another pod may start
//     there when its declared end is no later than the shadow time (it is
//     gone before the target could start), or when it fits beside the
//     target's request and the pods that stay past the shadow time (it is
//     not in the target's way then). With no declared ends that is what
//     fits beside the target and the pods that are not in its way.
//   - Overdue: the hold cannot count on waiting (a pod in the way declares
//     no end, or the shadow time is further off than the host's patience):
//     the host drains the pods in the way, within its allowance of moves
//     (Hold.DrainOrder gives the order), and stops as soon as the target
//     fits (Hold.Freed): the pods left in its way need not go.
//
// Where a pod declares its end is the host's to say: a Job's or pod's
// activeDeadlineSeconds bounds it, an estimate (resfit.io/runs-for) states
// it; a pod past its declared end counts as ending now. Everything here is
// plain data and functions of it: the caller passes the time and the
// state, and keeps the target and the hold between rounds. Amounts are
// resource's, each within [0, resource.MaxAmount]: a node or pod with one
// outside is refused (Node.Check: Plan and Choose pass such a node over,
// Admits and Freed answer false), so that no sum overflows; nothing here
// panics on a node other than the hold's.
//
// This is what resfit's hosts run against starvation: the descheduler's
// reserve mode and the replay's -starve. Package reservation is Volcano's
// job resource reservation (a lock that keeps every other job off the
// nodes it reserves), which the replay's -reserve runs to compare; the
// two share no code.
package starvation
