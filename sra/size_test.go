package sra

import (
	"math"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
)

// The openb trace's node kinds (bench/replay): the largest node has 128
// cores, 786,432 MiB and 8 GPUs, over its G3 nodes and its 8-GPU V100s.
func TestSizeOrdersOpenbNodeKinds(t *testing.T) {
	schema, err := resource.NewSchema(resource.CPU, resource.Memory, "nvidia.com/gpu")
	if err != nil {
		t.Fatal(err)
	}
	const mib = 1 << 20
	node := func(cores, memMiB, gpus int64) resource.Vector {
		return resource.Vector{cores * 1000, memMiB * mib, gpus * 1000}
	}
	s, err := NewSize(schema, node(128, 786432, 8))
	if err != nil {
		t.Fatal(err)
	}
	// score works the definition out in float64 at run time, from the
	// node's shares of the reference's cpu, memory and GPUs.
	score := func(cpu, mem, gpu float64) float64 { return 100 * (1 - (cpu+mem+gpu)/3) }
	for _, c := range []struct {
		name string
		node resource.Vector
		want float64
	}{
		{"G3, the reference", node(128, 786432, 8), 0},
		{"V100M32 8-GPU", node(96, 786432, 8), score(0.75, 1, 1)},
		{"G2 8-GPU", node(96, 393216, 8), 25},
		{"T4 2-GPU", node(104, 524288, 2), score(104/128.0, 524288/786432.0, 0.25)},
		{"P100 2-GPU, 16 cores", node(16, 122880, 2), score(0.125, 122880/786432.0, 0.25)},
		{"CPU-only, larger than the reference in cpu", node(256, 262144, 0), score(1, 262144/786432.0, 0)},
		{"nothing", node(0, 0, 0), 100},
	} {
		if got := s.ScoreNode(c.node); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// Of the 8-GPU nodes a pod that fits both takes the G2, and the G3
	// stays for the pods of 120 cores that fit nowhere else.
	if g2, g3 := s.ScoreNode(node(96, 393216, 8)), s.ScoreNode(node(128, 786432, 8)); g2 <= g3 {
		t.Errorf("G2 scores %v, G3 %v: the smaller must score higher", g2, g3)
	}
}

func TestSizeRejects(t *testing.T) {
	schema, err := resource.NewSchema(resource.CPU, "nvidia.com/gpu")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		largest resource.Vector
		want    string
	}{
		{resource.Vector{1000}, "1 amounts, the schema 2"},
		{resource.Vector{-1, 8000}, "cpu is -1"},
		{resource.Vector{0, 0}, "no resource above 0"},
	} {
		if _, err := NewSize(schema, c.largest); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewSize(%v): %v, want an error with %q", c.largest, err, c.want)
		}
	}
	s, err := NewSize(schema, resource.Vector{8000, 8000})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ScoreRows(resource.Rows{Stride: 2, Allocatable: make([]int64, 3)}, make([]float64, 2)); err == nil {
		t.Error("ScoreRows took 3 amounts for 2 nodes of 2 resources")
	}
}

func TestLargestIsEachResourcesMaximum(t *testing.T) {
	schema, err := resource.NewSchema(resource.CPU, "nvidia.com/gpu")
	if err != nil {
		t.Fatal(err)
	}
	tab := resource.NewTable(schema, 3)
	for _, alloc := range []resource.Vector{{96000, 8000}, {128000, 2000}, {4000, 0}} {
		if _, err := tab.Add("n", alloc, make(resource.Vector, 2)); err != nil {
			t.Fatal(err)
		}
	}
	if got := Largest(tab); got[0] != 128000 || got[1] != 8000 {
		t.Errorf("Largest = %v, want [128000 8000]", got)
	}
}

// refSize is the definition, resource by resource over the schema.
func refSize(largest, alloc []int64) float64 {
	var sum float64
	n := 0
	for r, l := range largest {
		if l == 0 {
			continue
		}
		n++
		sum += math.Min(float64(alloc[r]), float64(l)) / float64(l)
	}
	return 100 * (1 - sum/float64(n))
}

func TestSizeProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		schema := propSchema(t)
		largest := drawVec(t, "largest", 1<<40)
		s, err := NewSize(schema, largest)
		n := rapid.IntRange(1, 6).Draw(t, "nodes")
		alloc := make([]int64, 0, n*len(propNames))
		for range n {
			alloc = append(alloc, drawVec(t, "alloc", 1<<41)...)
		}
		rows := resource.Rows{Stride: len(propNames), Allocatable: alloc}
		// SizeRows, the reference given with the call, scores as Size
		// built with it; beside a reference of nothing, 100 everywhere.
		against := make([]float64, n)
		if err := SizeRows(largest, rows, against); err != nil {
			t.Fatal(err)
		}
		if allZero := !slicesAny(largest); allZero {
			if err == nil {
				t.Fatal("NewSize took a largest node of nothing")
			}
			for i, got := range against {
				if got != MaxNodeScore {
					t.Fatalf("node %d beside a reference of nothing: %v, want %v", i, got, float64(MaxNodeScore))
				}
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, n)
		if err := s.ScoreRows(rows, out); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out, against) {
			t.Fatalf("SizeRows %v, Size.ScoreRows %v", against, out)
		}
		k := len(propNames)
		for i, got := range out {
			a := alloc[i*k : (i+1)*k]
			if want := refSize(largest, a); got != want {
				t.Fatalf("node %d %v: %v, the definition %v", i, a, got, want)
			}
			if one := s.ScoreNode(a); one != got {
				t.Fatalf("node %d: ScoreNode %v, ScoreRows %v", i, one, got)
			}
			if !(got >= 0 && got <= s.MaxScore()) {
				t.Fatalf("node %d %v: %v outside [0, 100]", i, a, got)
			}
			// A node no larger in any resource scores no lower.
			smaller := append([]int64(nil), a...)
			r := rapid.IntRange(0, k-1).Draw(t, "shrink")
			smaller[r] = rapid.Int64Range(0, a[r]).Draw(t, "to")
			if s.ScoreNode(smaller) < got {
				t.Fatalf("node %v scores %v, the smaller %v %v", a, got, smaller, s.ScoreNode(smaller))
			}
		}
	})
}

func slicesAny(v []int64) bool {
	for _, a := range v {
		if a != 0 {
			return true
		}
	}
	return false
}
