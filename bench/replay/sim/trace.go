package sim

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/resfit/resfit/resource"
)

// GPU is the resource name the replay gives the trace's GPUs, counted in
// milli-GPU (1000 per GPU) in the table and per device.
const GPU = "nvidia.com/gpu"

// MaxGPUsPerNode bounds a node's GPUs, so that a what-if copy of a node's
// devices fits in a fixed array.
const MaxGPUsPerNode = 64

// Node is one node of the trace.
type Node struct {
	Name      string
	MilliCPU  int64
	MemoryMiB int64
	GPUs      int
	Model     string
}

// Pod is one pod of the trace: NumGPU GPUs, each with GPUMilli thousandths
// of a GPU (a pod sharing one GPU has NumGPU 1 and GPUMilli below 1000).
type Pod struct {
	Name      string
	MilliCPU  int64
	MemoryMiB int64
	NumGPU    int
	GPUMilli  int64
	// GPUSpec are the GPU models the pod accepts (the trace's gpu_spec,
	// "V100M16|V100M32"); empty accepts any.
	GPUSpec resource.ModelSet
	// Lifetime is how long the pod lived in the trace, in seconds
	// (deletion_time − creation_time), -1 when the list does not say or
	// the pod never ran (pod_phase Pending). A pod still running at the
	// trace's end has its deletion_time there: its lifetime is a lower
	// bound.
	Lifetime int64
}

// ReadNodes reads a node list: sn,cpu_milli,memory_mib,gpu,model.
func ReadNodes(r io.Reader) ([]Node, error) {
	rows, err := readCSV(r, []string{"sn", "cpu_milli", "memory_mib", "gpu", "model"})
	if err != nil {
		return nil, fmt.Errorf("node list: %w", err)
	}
	nodes := make([]Node, 0, len(rows))
	for i, row := range rows {
		var n Node
		var errs []error
		n.Name, n.Model = row["sn"], row["model"]
		n.MilliCPU, errs = number(row, "cpu_milli", errs)
		n.MemoryMiB, errs = number(row, "memory_mib", errs)
		gpus, errs := number(row, "gpu", errs)
		if len(errs) > 0 {
			return nil, fmt.Errorf("node list, line %d: %v", i+2, errs[0])
		}
		if gpus > MaxGPUsPerNode {
			return nil, fmt.Errorf("node list, line %d: gpu must be at most %d, got %d", i+2, MaxGPUsPerNode, gpus)
		}
		n.GPUs = int(gpus)
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// ReadPods reads a pod list: name,cpu_milli,memory_mib,num_gpu,gpu_milli,
// and gpu_spec when the list has it (further columns are allowed and
// ignored). gpu_milli must be in [0, 1000],
// 0 exactly when num_gpu is 0, and 1000 when num_gpu is above 1 (a pod
// shares at most one GPU); num_gpu is at most MaxGPUsPerNode.
func ReadPods(r io.Reader) ([]Pod, error) {
	rows, err := readCSV(r, []string{"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"}, "gpu_spec", "pod_phase", "creation_time", "deletion_time")
	if err != nil {
		return nil, fmt.Errorf("pod list: %w", err)
	}
	pods := make([]Pod, 0, len(rows))
	for i, row := range rows {
		var p Pod
		var errs []error
		p.Name = row["name"]
		p.MilliCPU, errs = number(row, "cpu_milli", errs)
		p.MemoryMiB, errs = number(row, "memory_mib", errs)
		gpus, errs := number(row, "num_gpu", errs)
		p.GPUMilli, errs = number(row, "gpu_milli", errs)
		switch {
		case len(errs) > 0:
			return nil, fmt.Errorf("pod list, line %d: %v", i+2, errs[0])
		case p.GPUMilli > 1000:
			return nil, fmt.Errorf("pod list, line %d: gpu_milli must be at most 1000, got %d", i+2, p.GPUMilli)
		case gpus == 0 && p.GPUMilli != 0:
			return nil, fmt.Errorf("pod list, line %d: gpu_milli %d without a GPU", i+2, p.GPUMilli)
		case gpus > 0 && p.GPUMilli == 0:
			return nil, fmt.Errorf("pod list, line %d: %d GPUs with gpu_milli 0", i+2, gpus)
		case gpus > MaxGPUsPerNode:
			return nil, fmt.Errorf("pod list, line %d: num_gpu must be at most %d, got %d", i+2, MaxGPUsPerNode, gpus)
		case gpus > 1 && p.GPUMilli < 1000:
			return nil, fmt.Errorf("pod list, line %d: a share of a GPU (gpu_milli %d) with num_gpu %d; sharing is for one GPU", i+2, p.GPUMilli, gpus)
		}
		p.NumGPU = int(gpus)
		if p.GPUSpec, err = resource.ParseModelSet(row["gpu_spec"]); err != nil {
			return nil, fmt.Errorf("pod list, line %d: gpu_spec: %v", i+2, err)
		}
		if p.Lifetime, err = lifetimeOf(row); err != nil {
			return nil, fmt.Errorf("pod list, line %d: %v", i+2, err)
		}
		pods = append(pods, p)
	}
	return pods, nil
}

// lifetimeOf is a pod list row's deletion_time − creation_time, -1 when the
// list has no times or the pod never ran (pod_phase Pending). Times are
// whole seconds from 0, a deletion not before the creation.
func lifetimeOf(row map[string]string) (int64, error) {
	created, okC := row["creation_time"]
	deleted, okD := row["deletion_time"]
	if !okC || !okD || row["pod_phase"] == "Pending" {
		return -1, nil
	}
	c, errC := strconv.ParseInt(created, 10, 64)
	d, errD := strconv.ParseInt(deleted, 10, 64)
	switch {
	case errC != nil || c < 0:
		return 0, fmt.Errorf("creation_time: want whole seconds from 0, got %q", created)
	case errD != nil || d < c:
		return 0, fmt.Errorf("deletion_time: want whole seconds, not before creation_time %d, got %q", c, deleted)
	}
	return d - c, nil
}

// readCSV reads a CSV with a header holding at least the wanted columns;
// an optional column is read when the header has it ("" otherwise).
func readCSV(r io.Reader, want []string, optional ...string) ([]map[string]string, error) {
	cr := csv.NewReader(r)
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	index := map[string]int{}
	for i, h := range header {
		index[h] = i
	}
	for _, w := range want {
		if _, ok := index[w]; !ok {
			return nil, fmt.Errorf("header %v lacks column %q", header, w)
		}
	}
	for _, o := range optional {
		if _, ok := index[o]; ok {
			want = append(want, o)
		}
	}
	var rows []map[string]string
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		row := make(map[string]string, len(want))
		for _, w := range want {
			row[w] = rec[index[w]]
		}
		rows = append(rows, row)
	}
}

// number parses a non-negative integer column, collecting the first error.
func number(row map[string]string, col string, errs []error) (int64, []error) {
	v, err := strconv.ParseInt(row[col], 10, 64)
	switch {
	case err != nil:
		return 0, append(errs, fmt.Errorf("%s: not a whole number: %q", col, row[col]))
	case v < 0 || v > 1<<40:
		return 0, append(errs, fmt.Errorf("%s: %d is out of range", col, v))
	}
	return v, errs
}

// Shape is a pod class: cpu, per-GPU milli, GPU count and accepted GPU
// models (memory is not part of it, as in the paper).
type Shape struct {
	MilliCPU int64
	GPUMilli int64
	NumGPU   int
	Models   resource.ModelSet
}

// Class is a typical pod class with its share of the workload.
type Class struct {
	Shape
	Weight float64
	// Count is how many pods of the trace have the shape; Weight is it
	// over the count of every class's pods.
	Count int
}

// TypicalClasses counts the pods' shapes, takes the most frequent (ties by
// shape, ascending) until they cover coverage of all pods (the paper uses
// 0.95), and renormalises their frequencies to sum to 1. CPU-only pods form
// classes like any other.
func TypicalClasses(pods []Pod, coverage float64) []Class {
	counts := map[Shape]int{}
	for _, p := range pods {
		counts[Shape{MilliCPU: p.MilliCPU, GPUMilli: p.GPUMilli, NumGPU: p.NumGPU, Models: p.GPUSpec}]++
	}
	shapes := make([]Shape, 0, len(counts))
	for s := range counts {
		shapes = append(shapes, s)
	}
	slices.SortFunc(shapes, func(a, b Shape) int {
		if c := cmp.Compare(counts[b], counts[a]); c != 0 {
			return c
		}
		if c := cmp.Compare(a.NumGPU, b.NumGPU); c != 0 {
			return c
		}
		if c := cmp.Compare(a.GPUMilli, b.GPUMilli); c != 0 {
			return c
		}
		if c := cmp.Compare(a.MilliCPU, b.MilliCPU); c != 0 {
			return c
		}
		return cmp.Compare(a.Models, b.Models)
	})
	var classes []Class
	covered := 0
	for _, s := range shapes {
		if len(pods) > 0 && float64(covered) >= coverage*float64(len(pods)) {
			break
		}
		classes = append(classes, Class{Shape: s, Weight: float64(counts[s]), Count: counts[s]})
		covered += counts[s]
	}
	for i := range classes {
		classes[i].Weight /= float64(covered)
	}
	return classes
}
