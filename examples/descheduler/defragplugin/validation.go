package defragplugin

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validate checks the arguments, a field left out standing for its
// default (the descheduler validates before it sets defaults); each error
// names the field by its path under args and the bad value.
func Validate(obj runtime.Object) error {
	given, ok := obj.(*Args)
	if !ok {
		return fmt.Errorf("%s: arguments of type %T, want *Args", PluginName, obj)
	}
	a := given.DeepCopyObject().(*Args)
	SetDefaults(a)
	root := field.NewPath("args")
	var errs field.ErrorList
	switch {
	case a.ConfigFile == "" && a.ConfigMap == nil:
		errs = append(errs, field.Required(root.Child("configFile"), "the resfit configuration the scheduler runs: configFile or configMap"))
	case a.ConfigFile != "" && a.ConfigMap != nil:
		errs = append(errs, field.Invalid(root.Child("configMap"), a.ConfigMap.Namespace+"/"+a.ConfigMap.Name, "give configFile or configMap, not both"))
	case a.ConfigMap != nil:
		cm := root.Child("configMap")
		for _, f := range []struct {
			name, value string
			check       func(string) []string
		}{{"namespace", a.ConfigMap.Namespace, validation.IsDNS1123Label}, {"name", a.ConfigMap.Name, validation.IsDNS1123Subdomain}, {"key", a.ConfigMap.Key, validation.IsConfigMapKey}} {
			switch {
			case f.value == "" && f.name != "key":
				errs = append(errs, field.Required(cm.Child(f.name), ""))
			case f.value != "":
				if bad := f.check(f.value); len(bad) > 0 {
					errs = append(errs, field.Invalid(cm.Child(f.name), f.value, strings.Join(bad, "; ")))
				}
			}
		}
	}
	if a.Mode != ModeMakeRoom && a.Mode != ModeGiveBack && a.Mode != ModeReserve {
		errs = append(errs, field.NotSupported(root.Child("mode"), a.Mode, []string{ModeMakeRoom, ModeGiveBack, ModeReserve}))
	}
	if a.Order != OrderQueue && a.Order != OrderOldest && a.Order != OrderLargest {
		errs = append(errs, field.NotSupported(root.Child("order"), a.Order, []string{OrderQueue, OrderOldest, OrderLargest}))
	}
	for _, f := range []struct {
		name              string
		value             int
		smallest, largest int
	}{
		{"movesPerPod", *a.MovesPerPod, 1, maxMovesPerPod}, {"maxMoves", *a.MaxMoves, 0, maxMoves}, {"maxPods", *a.MaxPods, 1, maxPods},
		{"holds", *a.Holds, 1, maxHolds},
		{"maxMovesPerNode", a.MaxMovesPerNode, 0, maxMoves}, {"maxMovesPerNamespace", a.MaxMovesPerNamespace, 0, maxMoves}, {"maxMovesPerWorkload", a.MaxMovesPerWorkload, 0, maxMoves},
	} {
		if f.value < f.smallest || f.value > f.largest {
			errs = append(errs, field.Invalid(root.Child(f.name), f.value, fmt.Sprintf("must be at least %d and at most %d", f.smallest, f.largest)))
		}
	}
	if a.MaxMovesPerHour != "" {
		if _, err := parsePercent(a.MaxMovesPerHour); err != nil {
			errs = append(errs, field.Invalid(root.Child("maxMovesPerHour"), a.MaxMovesPerHour, err.Error()))
		}
	}
	for _, f := range []struct {
		name    string
		value   time.Duration
		longest time.Duration
	}{{"searchTimeout", a.SearchTimeout.Duration, maxSearchTimeout}, {"replacementTimeout", a.ReplacementTimeout.Duration, maxDuration},
		{"starveAfter", a.StarveAfter.Duration, maxDuration}, {"patience", a.Patience.Duration, maxDuration}, {"holdFor", a.HoldFor.Duration, maxDuration}} {
		if f.value <= 0 || f.value > f.longest {
			errs = append(errs, field.Invalid(root.Child(f.name), f.value.String(), fmt.Sprintf("must be above 0 and at most %v", f.longest)))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s: %w", PluginName, errs.ToAggregate())
	}
	return nil
}

// parsePercent reads a share written as a percentage in [0.001%, 100%]:
// "1%" is 0.01. Below a thousandth of a percent, a cluster of a million
// pods would earn a move every 100 hours.
func parsePercent(s string) (float64, error) {
	number, ok := strings.CutSuffix(s, "%")
	v, err := strconv.ParseFloat(number, 64)
	if !ok || err != nil || !(v >= 0.001 && v <= 100) {
		return 0, fmt.Errorf("must be a percentage in [0.001%%, 100%%], such as \"1%%\"")
	}
	return v / 100, nil
}

// maxMoves is the most moves a run may make, maxMovesPerPod the most a
// plan for one pod may (each more multiplies the search), maxPods the most
// pending pods a run plans for; maxSearchTimeout is the longest search for
// a plan, maxDuration the longest of the other durations.
const (
	maxMoves         = 1000
	maxMovesPerPod   = 8
	maxPods          = 1000
	maxHolds         = 1000
	maxDuration      = 30 * 24 * time.Hour
	maxSearchTimeout = 10 * time.Minute
)
