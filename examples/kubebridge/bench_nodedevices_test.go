package kubebridge

import (
	"fmt"
	"testing"

	"github.com/resfit/resfit/examples/kubebridge/dratest"
	"github.com/resfit/resfit/resource"
)

// BenchmarkNodeDevices reads one node's GPUs from DRA again into a device
// view of every node, as a host does for the node a claim was allocated
// on: 8 H100s a node, up to 7 of them held by claims. What it costs must
// not grow with the cluster (the view's other nodes are not moved).
func BenchmarkNodeDevices(b *testing.B) {
	for _, n := range []int{1000, 5000, 20000} {
		o := DRAObjects{Classes: dratest.NVIDIAClasses()}
		for i := range n {
			name := fmt.Sprintf("node-%05d", i)
			o.Slices = append(o.Slices, dratest.NVIDIASlice(name, "NVIDIA H100 80GB HBM3", 8, 0))
			if k := i % 8; k > 0 {
				var devices []string
				for j := range k {
					devices = append(devices, fmt.Sprint("gpu-", j))
				}
				o.Claims = append(o.Claims, dratest.AllocatedClaim("default", "gpus-"+name, name, devices...))
			}
		}
		d, err := ReadDRA(o)
		if err != nil {
			b.Fatal(err)
		}
		view, err := resource.NewDevices(resource.GPU, 1000)
		if err != nil {
			b.Fatal(err)
		}
		for i := range n {
			row, _ := view.AddNode(0)
			if err := d.NodeDevices(view, row, node(fmt.Sprintf("node-%05d", i)), nil); err != nil {
				b.Fatal(err)
			}
		}
		one := node("node-00003")
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := d.NodeDevices(view, 3, one, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
