package defragplugin

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The defaults of Args.
const (
	DefaultMovesPerPod        = 2
	DefaultMaxMoves           = 4
	DefaultMaxPods            = 8
	DefaultSearchTimeout      = 10 * time.Second
	DefaultReplacementTimeout = 2 * time.Minute
	DefaultStarveAfter        = time.Hour     // the replay's -starve-after, as measured
	DefaultPatience           = 2 * time.Hour // the replay's -patience, as measured
	DefaultHoldFor            = 10 * time.Minute
	DefaultHolds              = 1 // the replay's -holds: EASY's one reservation
)

// SetDefaults fills what the arguments leave out.
func SetDefaults(obj runtime.Object) {
	a, ok := obj.(*Args)
	if !ok {
		return
	}
	if a.Order == "" {
		a.Order = OrderQueue
	}
	for _, d := range []struct {
		dst **int
		def int
	}{{&a.MovesPerPod, DefaultMovesPerPod}, {&a.MaxMoves, DefaultMaxMoves}, {&a.MaxPods, DefaultMaxPods}, {&a.Holds, DefaultHolds}} {
		if *d.dst == nil {
			*d.dst = new(d.def)
		}
	}
	for _, d := range []struct {
		dst **metav1.Duration
		def time.Duration
	}{{&a.SearchTimeout, DefaultSearchTimeout}, {&a.ReplacementTimeout, DefaultReplacementTimeout},
		{&a.StarveAfter, DefaultStarveAfter}, {&a.Patience, DefaultPatience}, {&a.HoldFor, DefaultHoldFor}} {
		if *d.dst == nil {
			*d.dst = &metav1.Duration{Duration: d.def}
		}
	}
}
