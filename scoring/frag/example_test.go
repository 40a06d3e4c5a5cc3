package frag_test

import (
	"fmt"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
	"github.com/resfit/resfit/scoring/frag"
	"github.com/resfit/resfit/sra"
)

// ResfitFrag, the policy that left the fewest GPUs idle in the openb
// replay (bench/replay): FGD in whole steps, PackLeastUsed to break FGD's
// ties (the node whose least-used of cpu and GPU is fullest with the pod),
// and the sra proportional filter keeping cpu for idle GPUs, assembled in
// code around a device view.
func Example() {
	schema, _ := resource.NewSchema("cpu", "nvidia.com/gpu")
	nodes := resource.NewTable(schema, 2)
	gpus, _ := resource.NewDevices("nvidia.com/gpu", 1000)
	nodes.Add("busy", resource.Vector{96000, 8000}, resource.Vector{24000, 2100})
	gpus.AddNode(8)
	gpus.Allocate(0, resource.DeviceRequest{Count: 2, Each: 1000})
	gpus.Allocate(0, resource.DeviceRequest{Count: 1, Each: 100}) // a small pod on GPU 2
	nodes.Add("idle", resource.Vector{96000, 8000}, nil)
	gpus.AddNode(8)

	// The workload's typical classes and their shares.
	measure, _ := frag.NewMeasure([]frag.Class{
		{CPU: 3000, Devices: resource.DeviceRequest{Count: 1, Each: 810}, Weight: 0.4},
		{CPU: 8000, Devices: resource.DeviceRequest{Count: 1, Each: 1000}, Weight: 0.4},
		{CPU: 4000, Weight: 0.2},
	}, 1000)
	fgd, _ := frag.NewScorer(schema, gpus, measure, frag.Options{})
	cfg, _ := config.Load([]byte(`
plugins:
- name: PackLeastUsed
  args: {resources: [{name: cpu, weight: 1}, {name: nvidia.com/gpu, weight: 1}]}
`), config.Options{})
	packing, _ := cfg.Build(schema)
	devices, _ := scoring.NewDeviceFilter(gpus)
	p, _ := sra.NewProportional(schema, []sra.Ratio{{Resource: "nvidia.com/gpu", CPU: 10}})
	proportional, _ := scoring.NewProportionalFilter(p)
	pipe, _ := scoring.NewPipeline(schema,
		[]scoring.Filter{scoring.NewFitFilter(nil, nil), devices, proportional},
		append([]scoring.WeightedScorer{{Scorer: fgd, Weight: packing.MaxScore() + 1}}, packing.Scorers()...))

	task := &scoring.Task{Name: "share-810", Requests: resource.Vector{3000, 810},
		Devices: resource.DeviceRequest{Count: 1, Each: 810}}
	batch := pipe.NewBatch(nodes.Len())
	if err := pipe.Score(task, nodes, batch); err != nil {
		fmt.Println(err)
		return
	}
	for i := range nodes.Len() {
		fmt.Printf("%s: FGD %v, packing %v\n", nodes.Name(i), batch.Contribution(i, 0)/101, batch.Contribution(i, 1))
	}
	best := batch.Top(1, nil)[0]
	fmt.Println("to", nodes.Name(best), "GPU", fgd.Device(task, nodes, best))
	// FGD prefers putting the 810-milli pod next to the small one (GPU 2,
	// leaving 90 free) to cutting into a whole GPU (leaving 190).

	// Output:
	// busy: FGD 61, packing 28
	// idle: FGD 50, packing 3
	// to busy GPU 2
}
