package sim

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// Slots of the replay's schema.
const (
	SlotCPU = iota
	SlotMemory
	SlotGPU
)

// Schema is the replay's schema: cpu (milli), memory (bytes), GPU (milli).
func Schema() *resource.Schema {
	s, err := resource.NewSchema(resource.CPU, resource.Memory, GPU)
	if err != nil {
		panic(err) // the names are constants
	}
	return s
}

// Cluster is the replay's state: the nodes in a resfit table and a device
// view with the same rows. Rows are in tie-break priority order: when two
// nodes score the same, the lower row wins (scoring.Batch.Top).
type Cluster struct {
	Table *resource.Table
	GPUs  *resource.Devices
	// Nodes are the trace's nodes in row order.
	Nodes []Node
	// CapacityMilliGPU is the cluster's GPU capacity in milli-GPU.
	CapacityMilliGPU int64
	// MaxMilliCPU and MaxMilliGPU are the largest node's cpu and GPU, the
	// normalisers of BestFit and DotProd.
	MaxMilliCPU, MaxMilliGPU int64
	usedBuf                  resource.Vector
}

// NewCluster builds the cluster with nodes[order[0]] in row 0, and so on
// (order nil means as given).
func NewCluster(schema *resource.Schema, nodes []Node, order []int) (*Cluster, error) {
	if order == nil {
		order = make([]int, len(nodes))
		for i := range order {
			order[i] = i
		}
	}
	if len(order) != len(nodes) {
		return nil, fmt.Errorf("cluster: an order of %d rows for %d nodes", len(order), len(nodes))
	}
	gpus, err := resource.NewDevices(GPU, 1000)
	if err != nil {
		return nil, err
	}
	c := &Cluster{
		Table:   resource.NewTable(schema, len(nodes)),
		GPUs:    gpus,
		usedBuf: make(resource.Vector, schema.Len()),
	}
	seen := make([]bool, len(nodes))
	for _, k := range order {
		if k < 0 || k >= len(nodes) || seen[k] {
			return nil, fmt.Errorf("cluster: order is not a permutation of %d nodes", len(nodes))
		}
		seen[k] = true
		n := nodes[k]
		if n.GPUs < 0 || n.GPUs > MaxGPUsPerNode {
			return nil, fmt.Errorf("cluster: node %s has %d GPUs, the replay handles 0 to %d", n.Name, n.GPUs, MaxGPUsPerNode)
		}
		alloc := resource.Vector{n.MilliCPU, n.MemoryMiB << 20, int64(n.GPUs) * 1000}
		if _, err := c.Table.Add(n.Name, alloc, nil); err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
		row, err := c.GPUs.AddNode(n.GPUs)
		if err != nil {
			return nil, fmt.Errorf("cluster: node %s: %w", n.Name, err)
		}
		if err := c.GPUs.SetModel(row, n.Model); err != nil {
			return nil, fmt.Errorf("cluster: node %s: %w", n.Name, err)
		}
		c.Nodes = append(c.Nodes, n)
		c.CapacityMilliGPU += alloc[SlotGPU]
		c.MaxMilliCPU = max(c.MaxMilliCPU, n.MilliCPU)
		c.MaxMilliGPU = max(c.MaxMilliGPU, alloc[SlotGPU])
	}
	return c, nil
}

// Task is the pod as resfit's pipeline sees it: requests per slot and, for
// a GPU pod, its device request.
func (p Pod) Task(t *scoring.Task) {
	t.Name = p.Name
	t.Requests = append(t.Requests[:0], p.MilliCPU, p.MemoryMiB<<20, p.TotalMilliGPU())
	t.Devices = resource.DeviceRequest{}
	if p.NumGPU > 0 {
		t.Devices = resource.DeviceRequest{Count: p.NumGPU, Each: p.GPUMilli}
	}
	t.Models = p.GPUSpec
	t.Ends = 0 // not known: a replay that follows ends sets it
}

// TotalMilliGPU is the pod's GPU request over all its GPUs.
func (p Pod) TotalMilliGPU() int64 { return int64(p.NumGPU) * p.GPUMilli }

// Shared reports whether the pod takes part of one GPU.
func (p Pod) Shared() bool { return p.NumGPU == 1 && p.GPUMilli < 1000 }

// FreeCPU is row i's free milli-cpu.
func (c *Cluster) FreeCPU(i int) int64 {
	return c.Table.Allocatable(i)[SlotCPU] - c.Table.Used(i)[SlotCPU]
}

// Place binds the pod to row i: a shared pod on GPU device (the tightest
// fit when device < 0), whole GPUs on the tightest fitting ones.
func (c *Cluster) Place(i int, p Pod, device int) error {
	used := append(c.usedBuf[:0], c.Table.Used(i)...)
	used[SlotCPU] += p.MilliCPU
	used[SlotMemory] += p.MemoryMiB << 20
	used[SlotGPU] += p.TotalMilliGPU()
	alloc := c.Table.Allocatable(i)
	if used[SlotCPU] > alloc[SlotCPU] || used[SlotMemory] > alloc[SlotMemory] {
		return fmt.Errorf("place %s on %s: cpu or memory does not fit", p.Name, c.Table.Name(i))
	}
	r := resource.DeviceRequest{Count: p.NumGPU, Each: p.GPUMilli}
	switch {
	case p.NumGPU == 0:
	case p.Shared() && device >= 0:
		if err := c.GPUs.Take(i, device, p.GPUMilli); err != nil {
			return fmt.Errorf("place %s: %w", p.Name, err)
		}
	default:
		if _, err := c.GPUs.Allocate(i, r); err != nil {
			return fmt.Errorf("place %s: %w", p.Name, err)
		}
	}
	if err := c.Table.SetUsed(i, used); err != nil {
		return err
	}
	return nil
}

// DeviceChoice picks the GPU a pod sharing one takes on a row.
type DeviceChoice func(row int, p Pod) int

// PlacePod binds the pod to row as a replay does: a shared pod on the GPU
// the policy chooses (the tightest fit without a choice), whole GPUs on
// the tightest. It returns the GPUs it took (their indices on the node),
// appended to took[:0].
func (c *Cluster) PlacePod(row int, p Pod, device DeviceChoice, took []int) ([]int, error) {
	dev := -1
	if p.Shared() && device != nil {
		dev = device(row, p)
	}
	if p.Shared() && dev < 0 {
		dev = c.GPUs.Tightest(row, p.GPUMilli)
	}
	var before [MaxGPUsPerNode]int64
	n := copy(before[:], c.GPUs.Free(row))
	if err := c.Place(row, p, dev); err != nil {
		return nil, err
	}
	took = took[:0]
	for j, f := range c.GPUs.Free(row)[:n] {
		if f < before[j] {
			took = append(took, j)
		}
	}
	return took, nil
}

// Remove takes a pod placed on row i off it: its requests, and the GPUs
// it holds there (their indices: the one it shares, or its whole ones).
func (c *Cluster) Remove(i int, p Pod, holds []int) error {
	used := append(c.usedBuf[:0], c.Table.Used(i)...)
	used[SlotCPU] -= p.MilliCPU
	used[SlotMemory] -= p.MemoryMiB << 20
	used[SlotGPU] -= p.TotalMilliGPU()
	if used[SlotCPU] < 0 || used[SlotMemory] < 0 || used[SlotGPU] < 0 || len(holds) != p.NumGPU {
		return fmt.Errorf("remove %s from %s: it does not hold what it asks for there", p.Name, c.Table.Name(i))
	}
	for _, j := range holds {
		if err := c.GPUs.Return(i, j, p.GPUMilli); err != nil {
			return fmt.Errorf("remove %s: %w", p.Name, err)
		}
	}
	return c.Table.SetUsed(i, used)
}

// Restore puts a pod Remove took off row i back on it, on the same GPUs.
func (c *Cluster) Restore(i int, p Pod, holds []int) error {
	used := append(c.usedBuf[:0], c.Table.Used(i)...)
	used[SlotCPU] += p.MilliCPU
	used[SlotMemory] += p.MemoryMiB << 20
	used[SlotGPU] += p.TotalMilliGPU()
	for _, j := range holds {
		if err := c.GPUs.Take(i, j, p.GPUMilli); err != nil {
			return fmt.Errorf("restore %s: %w", p.Name, err)
		}
	}
	return c.Table.SetUsed(i, used)
}

// Fits reports whether the pod's requests fit row i as NodeResourcesFit
// and DeviceShare check them: cpu, memory and GPU left, its GPUs one by
// one, and its GPU models.
func (c *Cluster) Fits(i int, p Pod) bool {
	used := c.Table.Used(i)
	return FitsAmounts(c.Table.Allocatable(i), used[SlotCPU], used[SlotMemory], used[SlotGPU], p) &&
		c.GPUs.Fits(i, resource.DeviceRequest{Count: p.NumGPU, Each: p.GPUMilli}) && (p.NumGPU == 0 || p.GPUSpec.Accepts(c.GPUs.Model(i)))
}

// FitsAmounts reports whether pod p's cpu, memory and GPU fit within alloc
// with cpu, mem and gpu used.
func FitsAmounts(alloc resource.Vector, cpu, mem, gpu int64, p Pod) bool {
	return cpu+p.MilliCPU <= alloc[SlotCPU] && mem+p.MemoryMiB<<20 <= alloc[SlotMemory] && gpu+p.TotalMilliGPU() <= alloc[SlotGPU]
}

// FitsEmpty reports whether pod p would fit row i with nothing on it: its
// cpu, memory and GPUs within the node's, and the GPU model one it accepts.
func (c *Cluster) FitsEmpty(i int, p Pod) bool {
	alloc := c.Table.Allocatable(i)
	return p.MilliCPU <= alloc[SlotCPU] && p.MemoryMiB<<20 <= alloc[SlotMemory] && p.TotalMilliGPU() <= alloc[SlotGPU] &&
		(p.NumGPU == 0 || p.NumGPU <= len(c.GPUs.Free(i)) && p.GPUSpec.Accepts(c.GPUs.Model(i)))
}

// RequireTraceEnv names the environment variable that, when set, makes the
// tests that read the openb trace fail without it instead of skipping:
// .ci/run sets it where the trace is kept beside the repository.
const RequireTraceEnv = "RESFIT_REQUIRE_TRACE"

// FindTrace returns the default trace directory: ../shared/traces/openb
// seen from the repository root, found by walking up from the working
// directory. It returns "" when there is none.
func FindTrace() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		cand := filepath.Join(dir, "..", "shared", "traces", "openb")
		if _, err := os.Stat(filepath.Join(cand, "openb_node_list_gpu_node.csv")); err == nil {
			return filepath.Clean(cand)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
