package defragplugin

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
	// ResfitRooms lets other pods use only where they cannot delay it, and
	// so on for the next, up to Holds nodes held at once; when waiting
	// alone will not free a held node within Patience, the pods in its way
	// are evicted, within MaxMoves and MaxMovesPerHour).
	Mode string `json:"mode"`
	// Holds is the most nodes reserve mode holds at once, each for one
	// pending pod (default 1, EASY backfilling's one reservation, the
	// replay's -holds; at most 1000). The replay measured the 8-GPU pods'
	// wait at load 1.0 falling with 32 (bench/replay README).
	Holds *int `json:"holds,omitempty"`
	// StarveAfter is how long a pending pod waits before reserve may elect
	// it (default 1h); Patience how long a hold waits for its node to
	// free before it drains it (default 2h; both the replay's, which
	// measured reserve mode with them: bench/replay README); HoldFor how
	// long a hold's room lasts past the run that made it (default 10m:
	// runs renew it).
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
	for _, p := range []**int{&c.MovesPerPod, &c.MaxMoves, &c.MaxPods, &c.Holds} {
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
