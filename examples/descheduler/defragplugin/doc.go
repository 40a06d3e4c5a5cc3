// Package defragplugin is resfit's Balance plugin for the descheduler
// (sigs.k8s.io/descheduler): each run it plans the few moves that let the
// pending GPU pods in, or that win GPU back, under the resfit
// configuration the scheduler runs, by the host layer's planning
// (planning.Planning: the rules kubectl resfit defrag and the churn
// replay's rounds follow), and carries them out one at a time through the
// descheduler's evictor, which keeps PodDisruptionBudgets (the Eviction
// API) and its limits.
//
// A move is evicting a pod whose controller makes a replacement; the plan
// holds only if the replacement lands where it put it. After each
// eviction the plugin waits for the replacement to be bound and checks
// its node; one that lands elsewhere, or not within the timeout, stops
// the run, with an event on the pod, a log line and a metric. The plan is
// made again when the cluster changed since it was made.
//
// # Reserve mode
//
// Reserve mode is starvation control (scoring/starvation) carried out on a
// cluster: each run elects the pending GPU pod that has waited longer than
// args.starveAfter, the largest first (the one elected before while it
// still waits), holds the node it fits first (its pods leaving at the ends
// they declare, planning.DeclaredEnd, else, under a configuration that
// follows ends, at those learned of the pods like them that ended, by a
// model the plugin keeps from run to run, planning.Learner:
// planning.Scene.RunningEnd) in a node-wide room
// (planning.Room), which resfit's scheduler plugin ResfitRooms honours
// with the backfill rule, renewed every run and lasting args.holdFor past
// it; and, when waiting alone will not free the node within
// args.patience, evicts the pods in the way through the descheduler's
// evictor (PodDisruptionBudgets hold), those that would stay longest
// first, within args.maxMoves and args.maxMovesPerHour. The room goes when
// its pod is bound, when another is elected, or when it expires.
package defragplugin
