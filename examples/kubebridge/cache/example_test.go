package cache_test

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/cache"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
)

func resources(kv ...string) v1.ResourceList {
	l := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[v1.ResourceName(kv[i])] = kres.MustParse(kv[i+1])
	}
	return l
}

func newNode(name string, kv ...string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Allocatable: resources(kv...)}}
}

func newPod(name, nodeName string, kv ...string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml"},
		Spec: v1.PodSpec{NodeName: nodeName, Containers: []v1.Container{{Name: "main", Resources: v1.ResourceRequirements{Requests: resources(kv...)}}}}}
}

// packGPUs is the examples' pipeline: resource-strategy-fit packing GPUs
// (MostAllocated, weight 2) and spreading cpu (LeastAllocated, weight 1).
func packGPUs(schema *resource.Schema) (*scoring.Pipeline, error) {
	cfg, err := config.Load([]byte(`
plugins:
- name: resource-strategy-fit
  args:
    resources:
      nvidia.com/gpu: {type: MostAllocated, weight: 2}
      cpu: {type: LeastAllocated, weight: 1}
`), config.Options{})
	if err != nil {
		return nil, err
	}
	return cfg.Build(schema)
}

// A cluster read from Kubernetes objects, a pending pod turned into a
// task, scored with a resource-strategy-fit configuration: the GPU pod
// packs onto the GPU node that already runs a GPU job (gpu 8/8 × 2, cpu
// 40/64 free: 2.625/3 × 1000 = 875; on gpu-b, 0.5 + 0.875 → 458.3), and the
// CPU node, without GPUs, is filtered out.
func ExampleNew() {
	c, err := cache.New(
		[]*v1.Node{
			newNode("gpu-a", "cpu", "64", "memory", "512Gi", "pods", "110", "nvidia.com/gpu", "8"),
			newNode("gpu-b", "cpu", "64", "memory", "512Gi", "pods", "110", "nvidia.com/gpu", "8"),
			newNode("cpu-a", "cpu", "32", "memory", "128Gi", "pods", "110"),
		},
		[]*v1.Pod{
			newPod("running", "gpu-a", "cpu", "16", "memory", "64Gi", "nvidia.com/gpu", "6"),
			newPod("train-0", "", "cpu", "8", "memory", "32Gi", "nvidia.com/gpu", "2"),
		}, cache.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	pipe, err := packGPUs(c.Schema())
	if err != nil {
		fmt.Println(err)
		return
	}
	pending := c.Pending()[0]
	task, err := kubebridge.NewTask(c.Schema(), pending, scoring.TaskOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	batch := pipe.NewBatch(c.Table().Len())
	if err := pipe.Score(task, c.Table(), batch); err != nil {
		fmt.Println(err)
		return
	}
	for _, row := range batch.Top(3, nil) {
		fmt.Printf("%s %s %.1f\n", task.Name, c.Table().Name(row), batch.Total(row))
	}
	// Output:
	// ml/train-0 gpu-a 875.0
	// ml/train-0 gpu-b 458.3
}

// Events, as an informer delivers them, change only the rows they touch.
func ExampleCache_AddPod() {
	c, _ := cache.New([]*v1.Node{newNode("n1", "cpu", "8", "memory", "32Gi", "pods", "110")}, nil, cache.Options{})
	row, _ := c.Row("n1")
	show := func(event string) {
		fmt.Printf("%-7s used cpu %dm, pods %d\n", event, c.Table().Used(row)[0], c.Table().Used(row)[3])
	}
	p := newPod("web", "", "cpu", "500m")
	c.AddPod(p) // pending: uses nothing
	show("add")
	bound := p.DeepCopy()
	bound.Spec.NodeName = "n1"
	c.UpdatePod(bound)
	show("bind")
	done := bound.DeepCopy()
	done.Status.Phase = v1.PodSucceeded
	c.UpdatePod(done)
	show("finish")
	// Output:
	// add     used cpu 0m, pods 0
	// bind    used cpu 500m, pods 1
	// finish  used cpu 0m, pods 0
}

// GPU models: nodes carry the product label NVIDIA's GPU feature discovery
// sets, and a pending pod accepts A100s and V100s by HAMi's annotation
// (texts a model must contain, without regard to case). With the
// snapshot's device view the DeviceShare filter rejects the T4 node and
// says why; of the two others the pod packs onto the A100 node, whose
// running job leaves 2 of 8 GPUs (gpu 8/8 × 2, cpu 40/64 free: 2.625/3 ×
// 1000 = 875; on the idle V100 node 2/8 × 2 + 60/64 = 1.4375 → 479.2).
func ExampleCache_Devices() {
	gpuNode := func(name, product, gpus string) *v1.Node {
		n := newNode(name, "cpu", "64", "memory", "512Gi", "pods", "110", "nvidia.com/gpu", gpus)
		n.Labels = map[string]string{"nvidia.com/gpu.product": product}
		return n
	}
	train := newPod("train-0", "", "cpu", "4", "memory", "32Gi", "nvidia.com/gpu", "2")
	train.Annotations = map[string]string{"nvidia.com/use-gputype": "a100,V100"}
	c, err := cache.New(
		[]*v1.Node{
			gpuNode("a100", "NVIDIA-A100-SXM4-80GB", "8"),
			gpuNode("v100", "Tesla-V100-SXM2-32GB", "8"),
			gpuNode("t4", "Tesla-T4", "4"),
		},
		[]*v1.Pod{newPod("running", "a100", "cpu", "20", "memory", "64Gi", "nvidia.com/gpu", "6"), train},
		cache.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	devices := c.Devices()
	pipe, err := packGPUs(c.Schema())
	if err != nil {
		fmt.Println(err)
		return
	}
	deviceShare, err := scoring.NewDeviceFilter(devices)
	if err != nil {
		fmt.Println(err)
		return
	}
	if pipe, err = pipe.WithFilters(deviceShare); err != nil {
		fmt.Println(err)
		return
	}
	task, err := kubebridge.NewTask(c.Schema(), train, scoring.TaskOptions{Devices: "nvidia.com/gpu", Models: c.Models()})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("models:", c.Models())
	fmt.Println("accepted:", task.Models)
	batch := pipe.NewBatch(c.Table().Len())
	if err := pipe.Score(task, c.Table(), batch); err != nil {
		fmt.Println(err)
		return
	}
	for row := range c.Table().Len() {
		if batch.Feasible(row) {
			fmt.Printf("%s %.1f\n", c.Table().Name(row), batch.Total(row))
		} else {
			fmt.Printf("%s: %s\n", c.Table().Name(row), batch.Reason(row))
		}
	}
	// Output:
	// models: [NVIDIA-A100-SXM4-80GB Tesla-T4 Tesla-V100-SXM2-32GB]
	// accepted: NVIDIA-A100-SXM4-80GB|Tesla-V100-SXM2-32GB
	// a100 875.0
	// v100 479.2
	// t4: nvidia.com/gpu model Tesla-T4 is not one the task accepts (NVIDIA-A100-SXM4-80GB, Tesla-V100-SXM2-32GB)
}
