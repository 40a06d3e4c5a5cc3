package defrag_test

import (
	"fmt"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/defrag"
)

// Three pods of 0.7 GPU and one of 0.3 on a node of four GPUs: one GPU can
// hold a 0.7 and the 0.3, the other two 0.7s need a GPU each, so 0.6 GPU
// is lost to any task asking for a whole GPU, whatever moves are made.
// Pending pods of 0.3 GPU (a pending task stands for any number of its
// shape) could fill both gaps: then nothing need be lost.
func ExampleBoundShareWaste() {
	schema, err := resource.NewSchema("cpu", "memory", "nvidia.com/gpu")
	if err != nil {
		panic(err)
	}
	table := resource.NewTable(schema, 1)
	devices, err := resource.NewDevices("nvidia.com/gpu", 1000)
	if err != nil {
		panic(err)
	}
	if _, err := table.Add("gpu-node", resource.Vector{64000, 256 << 30, 4000}, nil); err != nil {
		panic(err)
	}
	if _, err := devices.AddNode(4); err != nil {
		panic(err)
	}
	share := func(name string, milli int64) *scoring.Task {
		return &scoring.Task{Name: name, Requests: resource.Vector{1000, 1 << 30, milli}, Devices: resource.DeviceRequest{Count: 1, Each: milli}}
	}
	c := &defrag.Cluster{Table: table, Devices: devices, Pods: []defrag.Pod{
		{Task: share("a", 700), Holds: []int{0}}, {Task: share("b", 700), Holds: []int{1}},
		{Task: share("c", 700), Holds: []int{2}}, {Task: share("d", 300), Holds: []int{3}},
	}}
	lost, err := defrag.BoundShareWaste(c, nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("at least %d milli-GPU lost\n", lost)
	lost, err = defrag.BoundShareWaste(c, []*scoring.Task{share("pending", 300)})
	if err != nil {
		panic(err)
	}
	fmt.Printf("with 0.3 GPU pods pending: at least %d\n", lost)
	// Output:
	// at least 600 milli-GPU lost
	// with 0.3 GPU pods pending: at least 0
}
