package kubereplay

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resfit/resfit/bench/replay/sim"
	"github.com/resfit/resfit/resource"
)

// SplitCount is the virtual GPUs HAMi's device plugin makes of each GPU
// (its deviceSplitCount default), which a node's allocatable
// nvidia.com/gpu counts.
const SplitCount = 10

// MaxPodsPerNode is every node's allocatable pod count: the replay does
// not limit a node's pods.
const MaxPodsPerNode = 10000

// PriorityLabel holds a node's tie-break priority (TieBreakHigh, TieBreakLow).
const PriorityLabel = "replay.resfit.io/priority"

// GPUID is the UUID the driver registers a node's GPU under.
func GPUID(node string, gpu int) string { return fmt.Sprintf("GPU-%s-%d", node, gpu) }

// NodeObject is a trace node as a v1.Node: its cpu, memory and the pods it
// may hold allocatable, its GPUs registered as HAMi's device plugin
// registers them (and counted SplitCount times in its allocatable
// nvidia.com/gpu), its model in GPU feature discovery's label, and its
// tie-break priority.
func NodeObject(n sim.Node, priority int) *v1.Node {
	alloc := v1.ResourceList{
		v1.ResourceCPU:    *kres.NewMilliQuantity(n.MilliCPU, kres.DecimalSI),
		v1.ResourceMemory: *kres.NewQuantity(n.MemoryMiB<<20, kres.BinarySI),
		v1.ResourcePods:   *kres.NewQuantity(MaxPodsPerNode, kres.DecimalSI),
	}
	labels := map[string]string{PriorityLabel: strconv.Itoa(priority)}
	var annotations map[string]string
	if n.GPUs > 0 {
		alloc[resource.GPU] = *kres.NewQuantity(int64(n.GPUs*SplitCount), kres.DecimalSI)
		labels[resource.GPUProductLabel] = n.Model
		type device struct {
			ID      string `json:"id"`
			Index   int    `json:"index"`
			Count   int    `json:"count"`
			Devmem  int    `json:"devmem"`
			Devcore int    `json:"devcore"`
			Type    string `json:"type"`
			Mode    string `json:"mode"`
			Health  bool   `json:"health"`
		}
		devices := make([]device, n.GPUs)
		for i := range devices {
			devices[i] = device{ID: GPUID(n.Name, i), Index: i, Count: SplitCount, Devmem: 16384, Devcore: 100, Type: "NVIDIA-" + n.Model, Mode: "hami-core", Health: true}
		}
		text, err := json.Marshal(devices)
		if err != nil {
			panic(err) // plain values
		}
		annotations = map[string]string{resource.HAMiNodeRegisterAnnotation: string(text)}
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: labels, Annotations: annotations},
		Status: v1.NodeStatus{
			Capacity: alloc, Allocatable: alloc,
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
		},
	}
}

// PodObject is a trace pod as a v1.Pod in HAMi's resource form: cpu and
// memory requested (set even when 0, so that kube-scheduler's non-zero
// defaults do not apply, as the replay has none); nvidia.com/gpu its GPU
// count and, for a share of one GPU, nvidia.com/gpucores the share in
// percent (as requests and limits: extended resources must be limited);
// the models it accepts in resfit.io/gpu-models.
func PodObject(p sim.Pod, namespace, name, scheduler string) (*v1.Pod, error) {
	requests := v1.ResourceList{
		v1.ResourceCPU:    *kres.NewMilliQuantity(p.MilliCPU, kres.DecimalSI),
		v1.ResourceMemory: *kres.NewQuantity(p.MemoryMiB<<20, kres.BinarySI),
	}
	limits := v1.ResourceList{}
	if p.NumGPU > 0 {
		limits[resource.GPU] = *kres.NewQuantity(int64(p.NumGPU), kres.DecimalSI)
		if p.GPUMilli < 1000 {
			if p.GPUMilli%10 != 0 || p.GPUMilli <= 0 {
				return nil, fmt.Errorf("pod %s: %d milli-GPU is not a whole percent, which HAMi's nvidia.com/gpucores cannot state", p.Name, p.GPUMilli)
			}
			limits[resource.HAMiCoresResource] = *kres.NewQuantity(p.GPUMilli/10, kres.DecimalSI)
		}
	}
	for k, q := range limits {
		requests[k] = q
	}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: v1.PodSpec{
			SchedulerName: scheduler,
			Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: requests, Limits: limits}}},
		},
	}
	if p.GPUSpec != "" {
		pod.Annotations = map[string]string{resource.GPUModelsAnnotation: string(p.GPUSpec)}
	}
	return pod, nil
}

// DevicesAnnotation is what HAMi writes in a pod's
// hami.io/vgpu-devices-allocated for the GPUs it took on a node: each GPU's
// UUID, type, memory and cores (the pod's share in percent, 100 for a
// whole GPU), one container.
func DevicesAnnotation(node string, devices []int, p sim.Pod) string {
	cores := int64(100)
	if p.GPUMilli < 1000 {
		cores = p.GPUMilli / 10
	}
	var b strings.Builder
	for _, d := range devices {
		fmt.Fprintf(&b, "%s,NVIDIA,%d,%d:", GPUID(node, d), 16384*cores/100, cores)
	}
	b.WriteString(";")
	return b.String()
}
