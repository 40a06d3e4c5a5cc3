package defragplugin

import (
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// The results of a move, as the moves metric counts them.
const (
	resultLanded    = "landed"    // the replacement is bound where the plan put it
	resultElsewhere = "elsewhere" // it is bound elsewhere
	resultTimeout   = "timeout"   // it is not bound within the timeout
	resultRefused   = "refused"   // the evictor refused the eviction
	resultChanged   = "changed"   // the cluster changed since the plan was made
	resultDrained   = "drained"   // reserve mode evicted a pod in a held node's way
)

// moves counts the moves the plugin made or stopped at, by result.
var moves = metrics.NewCounterVec(&metrics.CounterOpts{
	Subsystem:      "resfit_descheduler",
	Name:           "moves_total",
	Help:           "Moves resfit's descheduler plugin made, by result: landed (the replacement bound where the plan put it), elsewhere, timeout, refused (the evictor would not evict), changed (the cluster changed since the plan was made), drained (reserve mode evicted a pod in a held node's way).",
	StabilityLevel: metrics.ALPHA,
}, []string{"result"})

func init() { legacyregistry.MustRegister(moves) }
