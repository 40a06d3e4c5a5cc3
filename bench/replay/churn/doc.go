// Package churn replays a GPU cluster trace with departures: pods arrive
// over time and leave when their lifetime is over, so GPUs free up in the
// middle of busy nodes, as they do in a cluster that runs for days. It
// places through the same cluster and policies as the arrival-only replay
// (package sim).
//
// # The loop
//
// The loop (replay, loop.go) knows arrivals, departures, placement and
// time:
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
//     earliest first, each where the policy puts it. Without add-ons that
//     move pods, a pod waits for nothing but a departure.
//   - A warm-up is discarded; the metrics are measured over the window
//     after it (Result).
//
// # Add-ons
//
// Everything else runs beside the loop as an add-on (addOn, hook.go),
// each in a file of its own with its own options, state, statistics and
// columns in churn.csv:
//
//   - the metrics: the idle GPU (idle.go), the floor no plan of moves can
//     beat (floor.go), the waits by size class (waits.go);
//   - the moves made in rounds (moves.go: make-room, give-back,
//     fragMultiPod, drain);
//   - Volcano's job reservation (reservation.go, scoring/reservation);
//   - starvation control (starvation.go, scoring/starvation).
//
// The loop calls each at its events (a pod arrives, is about to be
// placed, waits, starts, ends, is evicted or moved, a row has room), tells
// it how long the replay stayed as it is, and makes its rounds when they
// are due; an add-on reads the loop's state and acts through the loop's
// steps. The loop names no add-on: newReplay (build.go) builds them from
// AddOns and orders them.
//
// # Starvation control in a replay
//
// Starvation control in a replay (AddOns.Starve), through
// scoring/starvation as a host calls it: every round, the GPU pod that has
// waited longer than After, the largest first, is the target
// (starvation.Elect); the node it fits first, its pods leaving at the ends
// they declare (Spec.Declare), is held for it (starvation.Choose), and
// planned again whenever it changes; another pod may go there only where
// it cannot delay the target (starvation.Hold.Admits, a filter in the
// replay's pipeline). With drain moves, a hold that waiting alone will not
// free within Patience (starvation.Hold.Overdue) gives up the pods in its
// way, within the allowance (starvation.Hold.DrainOrder).
package churn
