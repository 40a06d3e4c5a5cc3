package sim

import (
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/frag"
)

// Measure is resfit's fragmentation measure (package scoring/frag) over
// the typical classes: for each node and class, the node's idle GPU the
// class could not use, weighted by the class's share.
func Measure(classes []Class) (*frag.Measure, error) {
	fc := make([]frag.Class, len(classes))
	for i, c := range classes {
		fc[i] = frag.Class{CPU: c.MilliCPU, Models: c.Models, Weight: c.Weight}
		if c.NumGPU > 0 {
			fc[i].Devices = resource.DeviceRequest{Count: c.NumGPU, Each: c.GPUMilli}
		}
	}
	return frag.NewMeasure(fc, 1000)
}

// Fragmented is the cluster's fragmentation, summed over its nodes, in
// milli-GPU.
func Fragmented(m *frag.Measure, c *Cluster) float64 {
	total := 0.0
	for i := range c.Table.Len() {
		total += m.NodeModel(c.FreeCPU(i), c.GPUs.Free(i), c.GPUs.Model(i))
	}
	return total
}

// NewFGD is the paper's FGD scorer on the cluster, remembering results
// per node until the node changes unless fromScratch.
func NewFGD(c *Cluster, classes []Class, fromScratch bool) (*frag.Scorer, error) {
	m, err := Measure(classes)
	if err != nil {
		return nil, err
	}
	return frag.NewScorer(c.Table.Schema(), c.GPUs, m, frag.Options{FromScratch: fromScratch})
}

// fgdDevice is the GPU FGD scored best for a shared pod on a row.
func fgdDevice(s *frag.Scorer, c *Cluster) DeviceChoice {
	var task scoring.Task
	return func(row int, p Pod) int {
		p.Task(&task)
		return s.Device(&task, c.Table, row)
	}
}
