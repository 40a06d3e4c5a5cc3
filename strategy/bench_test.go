package strategy

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/resfit/resfit/resource"
)

func benchMatrices(n, k int) (req, alloc, used []int64) {
	r := rand.New(rand.NewPCG(7, 8))
	req = make([]int64, k)
	for j := range req {
		req[j] = 1000 + r.Int64N(4000)
	}
	alloc = make([]int64, n*k)
	used = make([]int64, n*k)
	for i := range n * k {
		alloc[i] = 64000 + r.Int64N(64000)
		used[i] = r.Int64N(alloc[i])
	}
	return req, alloc, used
}

func BenchmarkKubeFitScoreNodes(b *testing.B) {
	names := []string{"cpu", "memory", "nvidia.com/gpu", "example.com/a", "example.com/b", "example.com/c", "example.com/d", "example.com/e"}
	for _, k := range []int{3, 8} {
		for _, n := range []int{10000, 100000} {
			b.Run(fmt.Sprintf("resources=%d/nodes=%d", k, n), func(b *testing.B) {
				s, _ := resource.NewSchema(names[:k]...)
				rs := make([]Resource, k)
				for j := range rs {
					rs[j] = Resource{Name: names[j], Weight: int64(j + 1)}
				}
				f, _ := NewKubeFit(s, MostAllocated, rs)
				req, alloc, used := benchMatrices(n, k)
				rows, _ := resource.RowsOf(k, alloc, used)
				out := make([]float64, n)
				b.ReportAllocs()
				for b.Loop() {
					f.ScoreNodes(req, rows, out)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
			})
		}
	}
}
