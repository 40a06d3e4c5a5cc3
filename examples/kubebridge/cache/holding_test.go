package cache

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
)

// Holding: a whole-GPU pod holds its devices (the tightest, as the view
// placed it), a shared pod the device its share is on, a CPU pod none; a
// pending pod or one on an unknown node is not held.
func TestHolding(t *testing.T) {
	a := kubetest.Node("a", "cpu", "64", kubetest.GPU, "4")
	shared := kubetest.Pod("shared", "a", "cpu", "1", kubetest.GPU, "1", "nvidia.com/gpucores", "30")
	whole := kubetest.Pod("whole", "a", "cpu", "1", kubetest.GPU, "2")
	cpu := kubetest.Pod("cpu", "a", "cpu", "1")
	pending := kubetest.Pod("pending", "", kubetest.GPU, "1")
	lost := kubetest.Pod("lost", "gone", kubetest.GPU, "1")
	s, err := New([]*v1.Node{a}, []*v1.Pod{shared, whole, cpu, pending, lost}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pod     *v1.Pod
		row     int
		devices []int
		ok      bool
	}{
		{shared, 0, []int{0}, true},
		{whole, 0, []int{1, 2}, true},
		{cpu, 0, nil, true},
		{pending, -1, nil, false},
		{lost, -1, nil, false},
	} {
		row, devices, ok := s.Holding(c.pod)
		if row != c.row || !slices.Equal(devices, c.devices) || ok != c.ok {
			t.Errorf("%s: row %d devices %v %v, want %d %v %v", c.pod.Name, row, devices, ok, c.row, c.devices, c.ok)
		}
	}
}
