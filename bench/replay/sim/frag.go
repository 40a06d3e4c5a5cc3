package sim

import (
	"fmt"
	"strconv"
	"strings"

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
		total += c.NodeFragmentation(m, i)
	}
	return total
}

// NodeFragmentation is row i's fragmentation under the measure, as the FGD
// scorer measures a node (frag.Measure.Row: its cpu left, its GPUs' free
// amounts and model), in milli-GPU.
func (c *Cluster) NodeFragmentation(m *frag.Measure, i int) float64 {
	return m.Row(c.Table, SlotCPU, c.GPUs, i)
}

// fragConfig is a resfit configuration of one fragmentation plugin (FGD
// or ResfitFrag) over the workload's typical classes (or learning them,
// env.LearnClasses), with further
// arguments (YAML lines at the arguments' indentation). A class's weight
// is its count of pods, which the configuration turns into the class's
// share as TypicalClasses does (count over the classes' count: the same
// float64), and every other number is written so that it reads back to
// the same float64.
func fragConfig(plugin string, env Env, extra string) string {
	var b strings.Builder
	b.WriteString("plugins:\n- name: " + plugin + "\n  args:\n")
	classes := env.Classes
	if env.LearnClasses {
		b.WriteString("    learn: {}\n")
		classes = nil
	} else {
		b.WriteString("    classes:\n")
	}
	for _, c := range classes {
		fmt.Fprintf(&b, "    - {cpu: %dm, gpus: %d", c.MilliCPU, c.NumGPU)
		if c.NumGPU > 0 {
			fmt.Fprintf(&b, ", gpuShare: %d", c.GPUMilli)
		}
		if c.Models != "" {
			fmt.Fprintf(&b, ", models: %q", c.Models)
		}
		fmt.Fprintf(&b, ", weight: %d}\n", c.Count)
	}
	b.WriteString(extra)
	return b.String()
}

// exact writes a float64 in the fewest decimal digits that read back to
// it, without an exponent (which YAML would not read as a number).
func exact(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// fragPolicy builds a fragmentation plugin's configuration: its pipeline,
// and the GPU its FGD scored best for a shared pod.
func fragPolicy(c *Cluster, env Env, text string) (*scoring.Pipeline, DeviceChoice, error) {
	pipe, _, err := fromConfig(c, env, text)
	if err != nil {
		return nil, nil, err
	}
	s := FGDScorer(pipe)
	if s == nil {
		return nil, nil, fmt.Errorf("the configuration has no FGD scorer:\n%s", text)
	}
	s.SetFromScratch(env.FromScratch)
	return pipe, fgdDevice(s, c), nil
}

// FGDScorer is the pipeline's FGD scorer, or nil.
func FGDScorer(p *scoring.Pipeline) *frag.Scorer {
	for _, s := range p.Scorers() {
		if f, ok := s.Scorer.(*frag.Scorer); ok {
			return f
		}
	}
	return nil
}

// fgdDevice is the GPU FGD scored best for a shared pod on a row.
func fgdDevice(s *frag.Scorer, c *Cluster) DeviceChoice {
	var task scoring.Task
	return func(row int, p Pod) int {
		p.Task(&task)
		return s.Device(&task, c.Table, row)
	}
}
