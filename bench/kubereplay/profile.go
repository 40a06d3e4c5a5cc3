package kubereplay

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubeschedulerconfigv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/resfit/resfit/bench/replay/sim"
	"github.com/resfit/resfit/examples/kubescheduler/plugins"
	"github.com/resfit/resfit/resource"
)

// The tie-break plugins: a node's priority p (PriorityLabel) scores p/100
// under TieBreakHighName and p%100 under TieBreakLowName, so that weights
// 100 and 1 add up to p.
const (
	TieBreakHighName = "ReplayTieBreakHigh"
	TieBreakLowName  = "ReplayTieBreakLow"
)

// tieBreak is one of the two tie-break plugins.
type tieBreak struct {
	name string
	part func(priority int64) int64
}

func (t *tieBreak) Name() string { return t.name }

func (t *tieBreak) Score(_ context.Context, _ fwk.CycleState, _ *v1.Pod, info fwk.NodeInfo) (int64, *fwk.Status) {
	p, err := strconv.ParseInt(info.Node().Labels[PriorityLabel], 10, 64)
	if err != nil || p < 0 || p >= 100*100 {
		return 0, fwk.AsStatus(fmt.Errorf("node %s: label %s %q is not a priority in [0, 10000)", info.Node().Name, PriorityLabel, info.Node().Labels[PriorityLabel]))
	}
	return t.part(p), nil
}

func (t *tieBreak) ScoreExtensions() fwk.ScoreExtensions { return nil }

// Registry is the out-of-tree plugins a replay's scheduler runs: resfit's
// FGD and ResourceStrategyFit, and the two tie-break plugins.
func Registry() frameworkruntime.Registry {
	return frameworkruntime.Registry{
		plugins.FGDName:                 plugins.NewFGD,
		plugins.ResourceStrategyFitName: plugins.NewResourceStrategyFit,
		TieBreakHighName: func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
			return &tieBreak{TieBreakHighName, func(p int64) int64 { return p / 100 }}, nil
		},
		TieBreakLowName: func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
			return &tieBreak{TieBreakLowName, func(p int64) int64 { return p % 100 }}, nil
		},
	}
}

// Policies are the policies a replay runs through kube-scheduler, by
// bench/replay's names.
var Policies = []string{sim.ResfitFrag, "FGD", "LeastAllocated"}

// SchedulerName is the profile's scheduler name.
const SchedulerName = "resfit-replay"

// Profile is the kube-scheduler profile that runs a bench/replay policy
// (its configuration document, sim.Policy.Config) on a cluster of nodes
// nodes, as a user deploys it:
//
//   - ResfitFrag: FGD at weight 101 and ResourceStrategyFit at 1 running
//     PackLeastUsed over cpu and GPU, balanced until an end is known or 30%
//     of the GPUs are in use (untilEndsKnown), with the proportional
//     reserve as a filter (examples/kubescheduler's README);
//   - FGD: FGD;
//   - LeastAllocated: ResourceStrategyFit running the configuration.
//
// kube-scheduler's own score plugins and preemption are off; its filters
// stay, NodeResourcesFit ignoring the GPU resources, as HAMi has it
// ignore them (resfit's plugins check GPUs on their device view). Every
// node is scored (percentageOfNodesToScore 100). The policy's weights are
// scaled by a unit above the tie-break's whole range (the nodes'
// priorities), TieBreakHigh weighs 100 and TieBreakLow 1.
func Profile(policy sim.Policy, env sim.Env, nodes int) (*config.KubeSchedulerProfile, error) {
	if policy.Config == nil {
		return nil, fmt.Errorf("policy %s is not a resfit configuration", policy.Name)
	}
	if nodes > 100*100 {
		return nil, fmt.Errorf("%d nodes: the tie-break orders at most %d", nodes, 100*100)
	}
	unit := int32(100 * (nodes/100 + 1))
	doc := map[string]any{}
	if err := yaml.Unmarshal([]byte(policy.Config(env)), &doc); err != nil {
		return nil, fmt.Errorf("policy %s: %v", policy.Name, err)
	}
	list, _ := doc["plugins"].([]any)
	if len(list) != 1 {
		return nil, fmt.Errorf("policy %s: a configuration of one plugin is expected", policy.Name)
	}
	first, _ := list[0].(map[string]any)
	args, _ := first["args"].(map[string]any)
	type weighted struct {
		name   string
		weight int32
		args   any
	}
	var parts []weighted
	switch policy.Name {
	case sim.ResfitFrag:
		cores, ok := args["coresPerIdleGPU"].(float64)
		if !ok {
			return nil, fmt.Errorf("policy %s: no coresPerIdleGPU", policy.Name)
		}
		parts = []weighted{
			{plugins.FGDName, 101 * unit, map[string]any{"classes": args["classes"]}},
			{plugins.ResourceStrategyFitName, unit, map[string]any{"plugins": []any{
				map[string]any{"name": "PackLeastUsed", "args": map[string]any{"resources": []any{
					map[string]any{"name": resource.CPU, "weight": 1}, map[string]any{"name": resource.GPU, "weight": 1}},
					"untilEndsKnown": "NodeResourcesBalancedAllocation"}},
				map[string]any{"name": "resource-strategy-fit", "scores": false, "args": map[string]any{"sra": map[string]any{
					"policy": "proportional", "resources": resource.GPU,
					"proportional": map[string]any{resource.GPU + ".cpu": cores, resource.GPU + ".memory": 0}}}},
			}}},
		}
	case "FGD":
		parts = []weighted{{plugins.FGDName, unit, args}}
	default:
		parts = []weighted{{plugins.ResourceStrategyFitName, unit, doc}}
	}
	p := kubeschedulerconfigv1.KubeSchedulerProfile{
		SchedulerName:            ptr.To(SchedulerName),
		PercentageOfNodesToScore: ptr.To[int32](100),
		Plugins: &kubeschedulerconfigv1.Plugins{
			PostFilter: kubeschedulerconfigv1.PluginSet{Disabled: []kubeschedulerconfigv1.Plugin{{Name: "*"}}},
			Score: kubeschedulerconfigv1.PluginSet{
				Disabled: []kubeschedulerconfigv1.Plugin{{Name: "*"}},
				Enabled:  []kubeschedulerconfigv1.Plugin{{Name: TieBreakHighName, Weight: ptr.To[int32](100)}, {Name: TieBreakLowName, Weight: ptr.To[int32](1)}},
			},
		},
	}
	fitArgs, err := json.Marshal(map[string]any{"ignoredResources": []string{resource.GPU, resource.HAMiCoresResource}})
	if err != nil {
		return nil, err
	}
	p.PluginConfig = append(p.PluginConfig, kubeschedulerconfigv1.PluginConfig{Name: "NodeResourcesFit", Args: runtime.RawExtension{Raw: fitArgs}})
	for _, part := range parts {
		raw, err := json.Marshal(part.args)
		if err != nil {
			return nil, fmt.Errorf("policy %s: %v", policy.Name, err)
		}
		p.Plugins.MultiPoint.Enabled = append(p.Plugins.MultiPoint.Enabled, kubeschedulerconfigv1.Plugin{Name: part.name})
		p.Plugins.Score.Enabled = append(p.Plugins.Score.Enabled, kubeschedulerconfigv1.Plugin{Name: part.name, Weight: ptr.To(part.weight)})
		p.PluginConfig = append(p.PluginConfig, kubeschedulerconfigv1.PluginConfig{Name: part.name, Args: runtime.RawExtension{Raw: raw}})
	}
	versioned := kubeschedulerconfigv1.KubeSchedulerConfiguration{
		TypeMeta: metav1.TypeMeta{APIVersion: kubeschedulerconfigv1.SchemeGroupVersion.String(), Kind: "KubeSchedulerConfiguration"},
		Profiles: []kubeschedulerconfigv1.KubeSchedulerProfile{p},
	}
	raw, err := json.Marshal(versioned)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %v", policy.Name, err)
	}
	// Decoded as kube-scheduler reads its --config: defaults, conversion
	// and the in-tree plugins' arguments decoded.
	obj, _, err := scheme.Codecs.UniversalDecoder().Decode(raw, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %v", policy.Name, err)
	}
	internal, ok := obj.(*config.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("policy %s: decoded a %T", policy.Name, obj)
	}
	return &internal.Profiles[0], nil
}
