package frag

import (
	"math/rand/v2"
	"testing"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// benchNodes is n 8-GPU nodes with random usage.
func benchNodes(n int) (*resource.Table, *resource.Devices) {
	schema, _ := resource.NewSchema("cpu", gpu)
	tab := resource.NewTable(schema, n)
	devs, _ := resource.NewDevices(gpu, 1000)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		devs.AddNode(8)
		var used int64
		for j := range 8 {
			take := rng.Int64N(1001)
			devs.Take(i, j, take)
			used += take
		}
		tab.Add("n", resource.Vector{96000, 8000}, resource.Vector{rng.Int64N(96000), used})
	}
	return tab, devs
}

// Scoring a shared task on 1000 nodes: from memory (nothing changed since
// the class was last scored) and from scratch.
func BenchmarkScorer(b *testing.B) {
	tab, devs := benchNodes(1000)
	var classes []Class
	for _, each := range []int64{100, 250, 460, 500, 810, 1000} {
		classes = append(classes, Class{CPU: each * 8, Devices: resource.DeviceRequest{Count: 1, Each: each}, Weight: 1})
	}
	classes = append(classes, Class{CPU: 16000, Devices: resource.DeviceRequest{Count: 2, Each: 1000}, Weight: 1}, Class{CPU: 4000, Weight: 1})
	m, _ := NewMeasure(classes, 1000)
	task := &scoring.Task{Requests: resource.Vector{3000, 810}, Devices: resource.DeviceRequest{Count: 1, Each: 810}}
	out := make([]float64, tab.Len())
	span := scoring.NewSpan(tab, 0, tab.Len())
	for _, mode := range []struct {
		name    string
		scratch bool
	}{{"memory", false}, {"scratch", true}} {
		b.Run(mode.name, func(b *testing.B) {
			s, _ := NewScorer(tab.Schema(), devs, m, Options{FromScratch: mode.scratch})
			s.ScoreNodes(task, span, out)
			b.ReportAllocs()
			for b.Loop() {
				if err := s.ScoreNodes(task, span, out); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tab.Len()), "ns/node")
		})
	}
}

// Scoring a 3g.40gb from scratch on 1000 nodes of 8 A100s with MIG, one to
// three random MIG devices taken on each, under the five profiles as
// classes; beside it the same nodes measured by free amounts alone (the
// classes and the task without partitions), in the same run.
func BenchmarkScorerParts(b *testing.B) {
	l := a100(b)
	schema, _ := resource.NewSchema("cpu", gpu)
	tab := resource.NewTable(schema, 1000)
	devs, _ := resource.NewDevices(gpu, 1000)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 1000 {
		devs.AddNode(8)
		var units []resource.Partitioned
		for j := range 8 {
			left := l.Counters()
			for range rng.IntN(3) + 1 {
				if k := rng.IntN(l.Parts()); l.PartFits(k, left) {
					left = l.Take(k, left)
				}
			}
			units = append(units, resource.Partitioned{Device: j, Layout: l, Left: left})
		}
		devs.SetPartitioned(i, units)
		tab.Add("n", resource.Vector{96000, 8000}, resource.Vector{rng.Int64N(96000), 8000 - devs.FreeTotal(i)})
	}
	profiles := map[string]int64{"1g.10gb": 143, "2g.20gb": 286, "3g.40gb": 500, "4g.40gb": 572, "7g.80gb": 1000}
	for _, partitioned := range []bool{true, false} {
		var classes []Class
		for _, p := range []string{"1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"} {
			c := migClass(p, profiles[p], 1)
			if !partitioned {
				c.Partition = ""
			}
			classes = append(classes, c)
		}
		m, _ := NewMeasure(classes, 1000)
		task := migTask("3g.40gb", 500)
		name := "layouts"
		if !partitioned {
			task.Partition, name = "", "free-amounts"
		}
		out := make([]float64, tab.Len())
		span := scoring.NewSpan(tab, 0, tab.Len())
		b.Run(name, func(b *testing.B) {
			s, _ := NewScorer(schema, devs, m, Options{FromScratch: true})
			b.ReportAllocs()
			for b.Loop() {
				if err := s.ScoreNodes(task, span, out); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tab.Len()), "ns/node")
		})
	}
}
