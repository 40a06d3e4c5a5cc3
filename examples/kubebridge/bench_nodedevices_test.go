package kubebridge

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/examples/kubebridge/dra"
	"github.com/resfit/resfit/examples/kubebridge/testing/dratest"
	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
	"github.com/resfit/resfit/resource"
)

// BenchmarkNodeDevices reads nodes' GPUs from DRA, 8 H100s a node, up to
// 7 of them held by claims:
//   - one: one node read again into a device view of every node, as a
//     host does for the node a claim was allocated on; what it costs must
//     not grow with the cluster (the view's other nodes are not moved);
//   - every: every node read, its devices and its DRA amounts (allocatable
//     and used), as a Volcano session opens.
func BenchmarkNodeDevices(b *testing.B) {
	for _, n := range []int{1000, 5000, 20000} {
		o := dra.Objects{Classes: dratest.NVIDIAClasses()}
		var nodes []*v1.Node
		for i := range n {
			name := fmt.Sprintf("node-%05d", i)
			nodes = append(nodes, kubetest.Node(name))
			o.Slices = append(o.Slices, dratest.NVIDIASlice(name, "NVIDIA H100 80GB HBM3", 8, 0))
			if k := i % 8; k > 0 {
				var devices []string
				for j := range k {
					devices = append(devices, fmt.Sprint("gpu-", j))
				}
				o.Claims = append(o.Claims, dratest.AllocatedClaim("default", "gpus-"+name, name, devices...))
			}
		}
		d, err := dra.Read(o)
		if err != nil {
			b.Fatal(err)
		}
		schema, err := SchemaFor(d, nodes, nil)
		if err != nil {
			b.Fatal(err)
		}
		writer, err := NewRowWriter(schema)
		if err != nil {
			b.Fatal(err)
		}
		writer.WithDRA(d)
		view := func(b *testing.B) *resource.Devices {
			v, err := resource.NewDevices(resource.GPU, 1000)
			if err != nil {
				b.Fatal(err)
			}
			return v
		}
		amounts := make(resource.Vector, schema.Len())
		every := func(b *testing.B, v *resource.Devices) {
			for i, node := range nodes {
				row := i
				if i >= v.Len() {
					row, _ = v.AddNode(0)
				}
				if err := NodeDevices(d, v, row, node, nil); err != nil {
					b.Fatal(err)
				}
				clear(amounts)
				writer.DRAAllocatable(node.Name, amounts)
				writer.DRAUsed(node.Name, amounts)
			}
		}
		b.Run(fmt.Sprintf("one/nodes=%d", n), func(b *testing.B) {
			v := view(b)
			every(b, v)
			b.ReportAllocs()
			for b.Loop() {
				if err := NodeDevices(d, v, 3, nodes[3], nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("every/nodes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				every(b, view(b))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
		})
	}
}
