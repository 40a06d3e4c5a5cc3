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
package defragplugin
