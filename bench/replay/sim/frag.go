package sim

// Fragmentation measures, per the paper, how much of a node's idle GPU the
// typical pod classes could not use. For each class m with weight w_m:
//
//   - a CPU-only class counts all of the node's idle GPU as fragment;
//   - a GPU class that fits the node (enough cpu free, and NumGPU devices
//     with GPUMilli free each) counts the idle GPU of the devices with less
//     than GPUMilli free;
//   - a GPU class that does not fit counts all idle GPU;
//
// and the node's fragmentation is Σ w_m × that amount, in milli-GPU.
// Memory plays no part, as in the paper's simulator.
type Fragmentation struct {
	// cpuOnly is the summed weight of the CPU-only classes.
	cpuOnly float64
	gpu     []Class
}

// NewFragmentation returns the measure for the typical classes.
func NewFragmentation(classes []Class) *Fragmentation {
	f := &Fragmentation{}
	for _, c := range classes {
		if c.NumGPU == 0 || c.GPUMilli == 0 {
			f.cpuOnly += c.Weight
		} else {
			f.gpu = append(f.gpu, c)
		}
	}
	return f
}

// Node is the fragmentation of a node with freeCPU milli-cpu and the given
// free milli per GPU. It adds in a fixed order, so that equal states give
// bit-identical results.
func (f *Fragmentation) Node(freeCPU int64, free []int64) float64 {
	var idle int64
	for _, g := range free {
		idle += g
	}
	if idle == 0 {
		return 0
	}
	frag := f.cpuOnly * float64(idle)
	for _, m := range f.gpu {
		if freeCPU < m.MilliCPU {
			frag += m.Weight * float64(idle)
			continue
		}
		var fits int
		var small int64
		for _, g := range free {
			if g >= m.GPUMilli {
				fits++
			} else {
				small += g
			}
		}
		if fits < m.NumGPU {
			small = idle
		}
		frag += m.Weight * float64(small)
	}
	return frag
}

// Row is the fragmentation of a cluster row as it stands.
func (f *Fragmentation) Row(c *Cluster, i int) float64 {
	return f.Node(c.FreeCPU(i), c.GPUs.Free(i))
}

// Cluster is the fragmentation summed over all rows, in milli-GPU.
func (f *Fragmentation) Cluster(c *Cluster) float64 {
	total := 0.0
	for i := range c.Table.Len() {
		total += f.Row(c, i)
	}
	return total
}
