package bench

import (
	"fmt"
	"slices"
	"testing"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	resfitconfig "github.com/resfit/resfit/scoring/config"
)

// jobConfig is the job benchmark's policy: resource-strategy-fit packing
// GPUs (MostAllocated, weight 2) and spreading cpu (LeastAllocated, weight
// 1), with Volcano's fit filter.
const jobConfig = `tiers:
- plugins:
  - name: resource-strategy-fit
    arguments:
      resources:
        nvidia.com/gpu: {type: MostAllocated, weight: 2}
        cpu: {type: LeastAllocated, weight: 1}
`

// jobTasks is the job: 1000 tasks of 4 cores, 16 GiB and one GPU.
const jobTasks = 1000

// placeJob places the job on the cluster and returns each task's row.
type placeJob func(b *testing.B, c *Cluster, p *scoring.Pipeline, task *scoring.Task, rows []int) []int

// placeByFullScoring is the loop before Placer: score every node for
// every task, take the best, bind.
func placeByFullScoring(b *testing.B, c *Cluster, p *scoring.Pipeline, task *scoring.Task, rows []int) []int {
	batch := p.NewBatch(c.Table.Len())
	top := make([]int, 0, 1)
	used := make(resource.Vector, c.Schema.Len())
	for range jobTasks {
		if err := p.Score(task, c.Table, batch); err != nil {
			b.Fatal(err)
		}
		row := -1
		if top = batch.Top(1, top); len(top) == 1 {
			row = top[0]
			copy(used, c.Table.Used(row))
			for j, r := range task.Requests {
				used[j] += r
			}
			if err := c.Table.SetUsed(row, used); err != nil {
				b.Fatal(err)
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// placeByPlacer places through a new Placer (its first task scores every
// node).
func placeByPlacer(b *testing.B, c *Cluster, p *scoring.Pipeline, task *scoring.Task, rows []int) []int {
	placer, err := scoring.NewPlacer(p, c.Table, scoring.PlacerOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for range jobTasks {
		row, err := placer.Place(task)
		if err != nil {
			b.Fatal(err)
		}
		rows = append(rows, row)
	}
	return rows
}

// BenchmarkPlaceJob places a 1000-task job on a generated cluster, each
// task on the best node after the ones before it: full (every node scored
// for every task) and placer (scoring.Placer), in the same run. Between
// iterations, untimed, the cluster gets its used amounts back.
func BenchmarkPlaceJob(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		c := cluster(b, n, 3)
		cfg, err := resfitconfig.Load([]byte(jobConfig), resfitconfig.Options{})
		if err != nil {
			b.Fatal(err)
		}
		p, err := cfg.Build(c.Schema)
		if err != nil {
			b.Fatal(err)
		}
		task := &scoring.Task{Name: "worker", Requests: resource.Vector{4000, 16 << 30, 1000}}
		var want []int
		for _, way := range []struct {
			name  string
			place placeJob
		}{{"full", placeByFullScoring}, {"placer", placeByPlacer}} {
			b.Run(fmt.Sprintf("nodes=%d/%s", n, way.name), func(b *testing.B) {
				rows := make([]int, 0, jobTasks)
				b.ReportAllocs()
				for b.Loop() {
					rows = way.place(b, c, p, task, rows[:0])
					b.StopTimer()
					for _, r := range rows {
						if r >= 0 {
							if err := c.Table.AddUsed(r, task.Requests, nil, true); err != nil {
								b.Fatal(err)
							}
						}
					}
					b.StartTimer()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/jobTasks, "ns/task")
				if want == nil {
					want = slices.Clone(rows)
				} else if !slices.Equal(rows, want) {
					b.Fatalf("%s placed the job differently from full scoring", way.name)
				}
			})
		}
	}
}
