package defrag

import (
	"fmt"
	"testing"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// bigCluster is 5000 nodes of 8 GPUs and 64 cores with 20,000 pods, four
// per node: two of 3 whole GPUs, and a half-GPU pod on each of the other
// two GPUs. No GPU is whole anywhere, so a pod asking for 2 whole GPUs
// fits nowhere: one move (a 3-GPU pod) would free room but has nowhere to
// go; two moves (a node's two half-GPU pods, to another node's halves)
// make room.
func bigCluster(b testing.TB, nodes int) (*Cluster, *scoring.Task) {
	schema := gpuSchema(b)
	table := resource.NewTable(schema, nodes)
	devices, err := resource.NewDevices("nvidia.com/gpu", 1000)
	if err != nil {
		b.Fatal(err)
	}
	c := &Cluster{Table: table, Devices: devices}
	three := &scoring.Task{Name: "three", Requests: resource.Vector{8000, 32 << 30, 3000}, Devices: resource.DeviceRequest{Count: 3, Each: 1000}}
	half := &scoring.Task{Name: "half", Requests: resource.Vector{2000, 8 << 30, 500}, Devices: resource.DeviceRequest{Count: 1, Each: 500}}
	for i := range nodes {
		row, err := table.Add(fmt.Sprint("node-", i), resource.Vector{64000, 512 << 30, 8000}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := devices.AddNode(8); err != nil {
			b.Fatal(err)
		}
		for _, p := range []Pod{{Task: three, Holds: []int{0, 1, 2}}, {Task: three, Holds: []int{3, 4, 5}}, {Task: half, Holds: []int{6}}, {Task: half, Holds: []int{7}}} {
			p.Row, p.Movable = row, true
			if err := table.AddUsed(row, p.Task.Requests, nil, false); err != nil {
				b.Fatal(err)
			}
			for _, j := range p.Holds {
				if err := devices.Take(row, j, p.Task.Devices.Each); err != nil {
					b.Fatal(err)
				}
			}
			c.Pods = append(c.Pods, p)
		}
	}
	c.Pipeline = pipeline(b, schema, devices)
	return c, &scoring.Task{Name: "pending", Requests: resource.Vector{4000, 16 << 30, 2000}, Devices: resource.DeviceRequest{Count: 2, Each: 1000}}
}

// BenchmarkMakeRoom plans room for one pending pod on 5000 nodes with
// 20,000 pods, within 2 moves: cold makes its placer (scoring every node
// for each pod shape it asks about), warm keeps one across plans as a
// scheduler would. The plan is checked: two half-GPU pods off one node.
// score-once, the baseline, is the pipeline scoring the pending pod on
// every node once: what one scheduling cycle spends on it.
func BenchmarkMakeRoom(b *testing.B) {
	b.Run("score-once", func(b *testing.B) {
		c, task := bigCluster(b, 5000)
		batch := c.Pipeline.NewBatch(c.Table.Len())
		b.ReportAllocs()
		for b.Loop() {
			if err := c.Pipeline.Score(task, c.Table, batch); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, warm := range []bool{false, true} {
		b.Run(map[bool]string{false: "cold", true: "warm"}[warm], func(b *testing.B) {
			c, task := bigCluster(b, 5000)
			if warm {
				var err error
				if c.Placer, err = scoring.NewPlacer(c.Pipeline, c.Table, scoring.PlacerOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				plan, err := MakeRoom(c, task, Options{MaxMoves: 2})
				if err != nil {
					b.Fatal(err)
				}
				if !plan.Found || len(plan.Moves) != 2 || !plan.Minimal || c.Pods[plan.Moves[0].Pod].Task.Name != "half" {
					b.Fatalf("%+v", plan)
				}
			}
		})
	}
}

// BenchmarkBoundShareWaste is the bound on the shares an openb replay held
// at load 1.0 after four days (ResfitFrag, drain moves): 1,938 shares of
// 20 sizes, seven sizes waiting.
func BenchmarkBoundShareWaste(b *testing.B) {
	held := map[int64]int{50: 9, 110: 15, 140: 1, 160: 51, 220: 35, 230: 91, 270: 1, 290: 2, 320: 202, 330: 8,
		350: 3, 370: 28, 440: 2, 460: 75, 470: 454, 480: 5, 550: 45, 590: 48, 650: 183, 810: 680}
	waiting := []int64{460, 470, 480, 550, 590, 650, 810}
	for b.Loop() {
		waste, err := shareWaste(1000, held, waiting)
		if err != nil || waste != 145870 {
			b.Fatalf("waste %d, %v", waste, err)
		}
	}
}
