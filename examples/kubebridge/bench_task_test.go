package kubebridge

import (
	"testing"

	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// BenchmarkNewTask reads a one-container pod of three resources into a
// task, as a kube-scheduler plugin does once a cycle.
func BenchmarkNewTask(b *testing.B) {
	schema, err := resource.NewSchema("cpu", "memory", "pods", kubetest.GPU)
	if err != nil {
		b.Fatal(err)
	}
	p := kubetest.Pod("train", "", "cpu", "8", "memory", "32Gi", kubetest.GPU, "1")
	opts := scoring.TaskOptions{Devices: kubetest.GPU}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewTask(schema, p, opts); err != nil {
			b.Fatal(err)
		}
	}
}
