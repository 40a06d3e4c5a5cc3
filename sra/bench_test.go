package sra

import (
	"testing"

	"github.com/resfit/resfit/resource"
)

// BenchmarkSizeBesideRetention scores 4,096 nodes with Size and, in the
// same run, with Volcano's retention score, the other score of the package
// that reads allocatable amounts alone.
func BenchmarkSizeBesideRetention(b *testing.B) {
	schema, err := resource.NewSchema(resource.CPU, resource.Memory, "nvidia.com/gpu")
	if err != nil {
		b.Fatal(err)
	}
	const n = 4096
	rows := resource.Rows{Stride: 3, Allocatable: make([]int64, 3*n)}
	for i := range n {
		copy(rows.Allocatable[3*i:], []int64{int64(8000 + 1000*(i%120)), int64(i%7+1) << 36, int64(1000 * (i % 9))})
	}
	out := make([]float64, n)
	size, err := NewSize(schema, resource.Vector{128000, 8 << 36, 8000})
	if err != nil {
		b.Fatal(err)
	}
	ret, err := NewRetention(schema, 1, []Weighted{{"nvidia.com/gpu", 1}})
	if err != nil {
		b.Fatal(err)
	}
	req := resource.Vector{1000, 1 << 30, 0}
	b.Run("Size", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := size.ScoreRows(rows, out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Retention", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := ret.ScoreNodes(req, rows.Allocatable, out); err != nil {
				b.Fatal(err)
			}
		}
	})
}
