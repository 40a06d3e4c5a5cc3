package defragplugin

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Args are the plugin's arguments in a DeschedulerPolicy:
//
//	profiles:
//	- name: resfit
//	  pluginConfig:
//	  - name: ResfitDefrag
//	    args:
//	      configMap: {namespace: kube-system, name: resfit-scheduler-config}
//	      profile: resfit-scheduler
//	      mode: make-room
//	      maxMoves: 4
//	  plugins:
//	    balance: {enabled: [ResfitDefrag]}
type Args struct {
	metav1.TypeMeta `json:",inline"`

	// ConfigFile is a file holding the resfit configuration the scheduler
	// runs, in any form resfit reads (resfit's own, a
	// KubeSchedulerConfiguration, a ConfigMap holding one). ConfigMap
	// names the scheduler's ConfigMap instead, read at every run. One of
	// the two is required.
	ConfigFile string        `json:"configFile,omitempty"`
	ConfigMap  *ConfigMapRef `json:"configMap,omitempty"`
	// Profile is the KubeSchedulerConfiguration profile, by its
	// schedulerName: the pending pods planned for are that scheduler's. It
	// may be empty when the configuration has one profile (the pods are its
	// scheduler's) or is not a KubeSchedulerConfiguration (the pods are
	// default-scheduler's).
	Profile string `json:"profile,omitempty"`

	// Mode is make-room (the pending GPU pods, in Order, each with the
	// fewest moves after which it fits, at most MovesPerPod), give-back
	// (the moves that most lower the GPU the workload cannot use, kept
	// when they let pending pods in; with none pending, they free GPU) or
	// reserve (starvation control, scoring/starvation: the pending GPU pod
	// that has waited longer than StarveAfter, the largest first, is held
	// the node it fits first in a node-wide room, which the scheduler's
	// ResfitRooms lets other pods use only where they cannot delay it;
	// when waiting alone will not free the node within Patience, the pods
	// in its way are evicted, within MaxMoves and MaxMovesPerHour).
	Mode string `json:"mode"`
	// StarveAfter is how long a pending pod waits before reserve may elect
	// it (default 10m); Patience how long a hold waits for its node to
	// free before it drains it (default 30m); HoldFor how long a hold's
	// room lasts past the run that made it (default 10m: runs renew it).
	StarveAfter *metav1.Duration `json:"starveAfter,omitempty"`
	Patience    *metav1.Duration `json:"patience,omitempty"`
	HoldFor     *metav1.Duration `json:"holdFor,omitempty"`
	// Order is the order pending pods are planned for: queue (the
	// scheduler's: priority, then creation; the default), oldest
	// (creation) or largest (the most GPU, then queue order).
	Order string `json:"order,omitempty"`
	// MovesPerPod bounds make-room's moves for one pod, or one gang
	// (default 2; at most 8).
	MovesPerPod *int `json:"movesPerPod,omitempty"`
	// MaxMoves bounds a run's moves (default 4; 0: none, the run plans and
	// evicts nothing); MaxPods the pending pods a run plans for (default
	// 8; at most 1000), a gang's all or none. Left out is the default, not
	// 0.
	MaxMoves *int `json:"maxMoves,omitempty"`
	MaxPods  *int `json:"maxPods,omitempty"`
	// MaxMovesPerNode, MaxMovesPerNamespace and MaxMovesPerWorkload bound a
	// run's moves off one node, in one namespace and of one workload (the
	// pods' controller); 0 is no bound.
	MaxMovesPerNode      int `json:"maxMovesPerNode,omitempty"`
	MaxMovesPerNamespace int `json:"maxMovesPerNamespace,omitempty"`
	MaxMovesPerWorkload  int `json:"maxMovesPerWorkload,omitempty"`
	// MaxMovesPerHour bounds the moves an hour as a share of the running
	// pods ("1%"): the allowance accrues from run to run and is kept up to
	// an hour's worth (defrag.Allowance), as the churn replay's -per-hour
	// does. Empty: no hourly bound.
	MaxMovesPerHour string `json:"maxMovesPerHour,omitempty"`

	// SearchTimeout bounds each search for a plan (default 10s);
	// ReplacementTimeout how long a move waits for the moved pod's
	// replacement, and the pending pod, to be bound (default 2m).
	SearchTimeout      *metav1.Duration `json:"searchTimeout,omitempty"`
	ReplacementTimeout *metav1.Duration `json:"replacementTimeout,omitempty"`

	// DryRun logs the plan, as kubectl resfit defrag prints it, and
	// evicts nothing.
	DryRun bool `json:"dryRun,omitempty"`
}

// ConfigMapRef names a ConfigMap and the key holding the configuration
// (empty: its one key).
type ConfigMapRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Key       string `json:"key,omitempty"`
}

// The modes and orders.
const (
	ModeMakeRoom = "make-room"
	ModeGiveBack = "give-back"
	ModeReserve  = "reserve"

	OrderQueue   = "queue"
	OrderOldest  = "oldest"
	OrderLargest = "largest"
)

// The defaults of Args.
const (
	DefaultMovesPerPod        = 2
	DefaultMaxMoves           = 4
	DefaultMaxPods            = 8
	DefaultSearchTimeout      = 10 * time.Second
	DefaultReplacementTimeout = 2 * time.Minute
	DefaultStarveAfter        = 10 * time.Minute
	DefaultPatience           = 30 * time.Minute
	DefaultHoldFor            = 10 * time.Minute
)

// DeepCopyObject copies the arguments (runtime.Object).
func (a *Args) DeepCopyObject() runtime.Object {
	if a == nil {
		return nil
	}
	c := *a
	if a.ConfigMap != nil {
		m := *a.ConfigMap
		c.ConfigMap = &m
	}
	for _, p := range []**int{&c.MovesPerPod, &c.MaxMoves, &c.MaxPods} {
		if *p != nil {
			*p = new(**p)
		}
	}
	for _, p := range []**metav1.Duration{&c.SearchTimeout, &c.ReplacementTimeout, &c.StarveAfter, &c.Patience, &c.HoldFor} {
		if *p != nil {
			*p = new(**p)
		}
	}
	return &c
}

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
	}{{&a.MovesPerPod, DefaultMovesPerPod}, {&a.MaxMoves, DefaultMaxMoves}, {&a.MaxPods, DefaultMaxPods}} {
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
	maxDuration      = 30 * 24 * time.Hour
	maxSearchTimeout = 10 * time.Minute
)
