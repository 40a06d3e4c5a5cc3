package starvation

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
)

// The tests draw small clusters over two slots, cpu (0) and GPU (1, the
// size slot), each node with up to 8 GPUs of 1000, its running pods
// holding whole GPUs or shares of one, some declaring an end, some not,
// some past it; and hold the package to references written apart from it:
// the target's fit found by resource.Devices' own allocation, the shadow
// time by trying every instant a pod ends.

const (
	cpu, gpu  = 0, 1
	perDevice = 1000
)

var t0 = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// drawRequest is a pod's shape: a share of one GPU, whole GPUs, or none.
func drawRequest(t *rapid.T, label string, maxGPUs int) (resource.Vector, resource.DeviceRequest) {
	cores := rapid.Int64Range(0, 32).Draw(t, label+" cores") * 1000
	var d resource.DeviceRequest
	switch rapid.IntRange(0, 2).Draw(t, label+" kind") {
	case 1:
		d = resource.DeviceRequest{Count: 1, Each: rapid.Int64Range(1, 999).Draw(t, label+" share")}
	case 2:
		d = resource.DeviceRequest{Count: rapid.IntRange(1, maxGPUs).Draw(t, label+" gpus"), Each: perDevice}
	}
	return resource.Vector{cores, d.Total()}, d
}

// drawEnd is a declared end: none, past, or ahead (on a few instants, so
// that ends tie).
func drawEnd(t *rapid.T, label string) time.Time {
	switch rapid.IntRange(0, 3).Draw(t, label+" end") {
	case 0:
		return time.Time{}
	case 1:
		return t0.Add(-time.Duration(rapid.IntRange(1, 5).Draw(t, label+" ago")) * time.Hour)
	}
	return t0.Add(time.Duration(rapid.IntRange(0, 6).Draw(t, label+" ahead")) * time.Hour)
}

// drawNode is a node with pods placed on it as resource.Devices places
// them, and some use no listed pod accounts for.
func drawNode(t *rapid.T, name string) Node {
	gpus := rapid.IntRange(0, 8).Draw(t, name+" gpus")
	n := Node{Name: name, Allocatable: resource.Vector{rapid.Int64Range(8, 128).Draw(t, name+" cores") * 1000, int64(gpus) * perDevice}}
	devices, _ := resource.NewDevices(resource.GPU, perDevice)
	devices.AddNode(gpus)
	n.Used = resource.Vector{rapid.Int64Range(0, 4).Draw(t, name+" daemon cores") * 1000, 0}
	for k := range rapid.IntRange(0, 6).Draw(t, name+" pods") {
		label := fmt.Sprintf("%s pod %d", name, k)
		req, dev := drawRequest(t, label, max(gpus, 1))
		if n.Used[cpu]+req[cpu] > n.Allocatable[cpu] || !devices.Fits(0, dev) {
			continue
		}
		got, _ := devices.Allocate(0, dev)
		_ = got
		p := Pod{Name: label, Request: req, Devices: dev, End: drawEnd(t, label)}
		// AllocateInto gives the devices; Allocate returned the first only.
		p.Holds = heldBy(devices.Free(0), n.DeviceFree, gpus, dev)
		n.DeviceFree = slices.Clone(devices.Free(0))
		n.Used[cpu] += req[cpu]
		n.Used[gpu] += req[gpu]
		n.Pods = append(n.Pods, p)
	}
	if n.DeviceFree == nil {
		n.DeviceFree = slices.Clone(devices.Free(0))
	}
	return n
}

// heldBy is what an allocation took: the devices whose free amount fell
// from before (nil: all whole) to after.
func heldBy(after, before []int64, count int, d resource.DeviceRequest) []DeviceHold {
	if before == nil {
		before = make([]int64, count)
		for j := range before {
			before[j] = perDevice
		}
	}
	var holds []DeviceHold
	for j := range after {
		if after[j] < before[j] {
			holds = append(holds, DeviceHold{Device: j, Amount: before[j] - after[j]})
		}
	}
	return holds
}

// refFits is whether the extra pods fit node n with the pods marked gone
// taken off, counted on a resource.Devices: their devices given back, then
// each extra pod allocated by the view's own rule.
func refFits(n Node, gone []bool, extra ...Pod) bool {
	devices, _ := resource.NewDevices(resource.GPU, perDevice)
	devices.AddNode(len(n.DeviceFree))
	if err := devices.SetFree(0, n.DeviceFree); err != nil {
		panic(err)
	}
	used := slices.Clone(n.Used)
	for i, p := range n.Pods {
		if i < len(gone) && gone[i] {
			used[cpu] -= p.Request[cpu]
			used[gpu] -= p.Request[gpu]
			for _, h := range p.Holds {
				if err := devices.Return(0, h.Device, h.Amount); err != nil {
					panic(err)
				}
			}
		}
	}
	for _, p := range extra {
		for s := range used {
			if p.Request[s] > 0 && used[s]+p.Request[s] > n.Allocatable[s] {
				return false
			}
			used[s] += p.Request[s]
		}
		if _, err := devices.Allocate(0, p.Devices); err != nil && p.Devices.Count > 0 {
			return false
		}
	}
	return true
}

// refFreeAt is the earliest instant, now or a declared end, at which the
// target fits with the pods that have ended by then gone (a pod past its
// end ends now); zero with ok when it fits only once pods that declare no
// end go too; not ok when it never fits.
func refFreeAt(target Pod, n Node, now time.Time) (time.Time, bool) {
	instants := []time.Time{now}
	for _, p := range n.Pods {
		if !p.End.IsZero() {
			instants = append(instants, maxTime(p.End, now))
		}
	}
	slices.SortFunc(instants, func(a, b time.Time) int { return a.Compare(b) })
	for _, at := range instants {
		gone := make([]bool, len(n.Pods))
		for i, p := range n.Pods {
			gone[i] = !p.End.IsZero() && !maxTime(p.End, now).After(at)
		}
		if refFits(n, gone, target) {
			return at, true
		}
	}
	all := make([]bool, len(n.Pods))
	for i := range all {
		all[i] = true
	}
	return time.Time{}, refFits(n, all, target)
}

func maxTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return b
	}
	return a
}

func drawWaiting(t *rapid.T, label string) Waiting {
	req, dev := drawRequest(t, label, 8)
	return Waiting{Pod: Pod{Name: label, Request: req, Devices: dev},
		Since: t0.Add(-time.Duration(rapid.IntRange(0, 48).Draw(t, label+" waited")) * time.Hour)}
}

// Plan's hold: FreeAt is the reference's shadow time; the pods in its way
// are, all gone, what lets the target in, and one fewer is not; each that
// declares an end ends by FreeAt; a node the target never fits is an
// ErrNeverFits.
func TestPlanIsTheShadowTime(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := drawNode(t, "n")
		target := drawWaiting(t, "target")
		want, fitsSomeday := refFreeAt(target.Pod, n, t0)
		h, err := Plan(target, n, 0, t0, gpu)
		if !fitsSomeday {
			if err == nil {
				t.Fatalf("a hold %+v where the target never fits", h)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if !h.FreeAt.Equal(want) {
			t.Fatalf("FreeAt %v, reference %v", h.FreeAt, want)
		}
		gone := make([]bool, len(n.Pods))
		for _, k := range h.InTheWay {
			gone[k] = true
			if e := n.Pods[k].End; !e.IsZero() && !h.FreeAt.IsZero() && maxTime(e, t0).After(h.FreeAt) {
				t.Fatalf("pod %d in the way ends at %v, after FreeAt %v", k, e, h.FreeAt)
			}
		}
		if !refFits(n, gone, target.Pod) {
			t.Fatalf("the target does not fit with the pods in the way %v gone", h.InTheWay)
		}
		if k := len(h.InTheWay); k > 0 {
			gone[h.InTheWay[k-1]] = false
			if refFits(n, gone, target.Pod) {
				t.Fatalf("the target fits without the last pod in the way gone: %v", h.InTheWay)
			}
		}
	})
}

// Admits is EASY's rule where every pod declares an end: a pod may start
// on the held node exactly when, as it would run there (its devices taken
// as the node allocates them, leaving at its end), the target's shadow
// time does not move. Where some do not declare, it is admitted exactly
// when the target fits with the pods in the way gone, the pods ending by
// the shadow time gone, and it staying unless it ends by then.
func TestAdmitsDelaysNothing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n, target, h := drawHold(t)
		req, dev := drawRequest(t, "p", 8)
		p := Pod{Name: "p", Request: req, Devices: dev, End: drawEnd(t, "p")}
		got := h.Admits(p, n, t0)

		// p running on the node, by the view's own allocation.
		devices, _ := resource.NewDevices(resource.GPU, perDevice)
		devices.AddNode(len(n.DeviceFree))
		devices.SetFree(0, n.DeviceFree)
		if dev.Count > 0 && !devices.Fits(0, dev) {
			if got {
				t.Fatal("admitted a pod whose devices the node does not have free")
			}
			return
		}
		picked, _ := devices.AllocateInto(0, dev, nil)
		with := n
		with.Used = resource.Vector{n.Used[cpu] + req[cpu], n.Used[gpu] + req[gpu]}
		with.DeviceFree = slices.Clone(devices.Free(0))
		q := p
		for _, j := range picked {
			q.Holds = append(q.Holds, DeviceHold{Device: j, Amount: dev.Each})
		}
		with.Pods = append(slices.Clip(n.Pods), q)

		declared := !p.End.IsZero()
		for _, r := range n.Pods {
			declared = declared && !r.End.IsZero()
		}
		var want bool
		if declared {
			at, ok := refFreeAt(target.Pod, with, t0)
			want = ok && !at.IsZero() && !at.After(h.FreeAt)
		} else {
			gone := make([]bool, len(with.Pods))
			for _, k := range h.InTheWay {
				gone[k] = true
			}
			if !h.FreeAt.IsZero() {
				for i, r := range with.Pods {
					gone[i] = gone[i] || !r.End.IsZero() && !maxTime(r.End, t0).After(h.FreeAt)
				}
			}
			want = refFits(with, gone, target.Pod)
		}
		if got != want {
			t.Fatalf("admits %v, reference %v (hold %+v, declared %v)", got, want, h, declared)
		}
	})
}

// Elect is the reference's pick: the current target while it is over the
// line, else the candidates sorted by size (descending), wait, name.
func TestElectPicksTheLargestLongestWaiting(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var ws []Waiting
		for k := range rapid.IntRange(0, 8).Draw(t, "waiting") {
			ws = append(ws, drawWaiting(t, fmt.Sprint("w", k)))
		}
		e := Election{MinWait: time.Duration(rapid.IntRange(0, 30).Draw(t, "min wait")) * time.Hour, Size: gpu}
		current := ""
		if len(ws) > 0 && rapid.Bool().Draw(t, "a current target") {
			current = ws[rapid.IntRange(0, len(ws)-1).Draw(t, "current")].Name
		}
		var over []int
		for i, w := range ws {
			if t0.Sub(w.Since) > e.MinWait {
				over = append(over, i)
			}
		}
		want := -1
		if i := slices.IndexFunc(over, func(i int) bool { return ws[i].Name == current }); i >= 0 {
			want = over[i]
		} else if len(over) > 0 {
			slices.SortFunc(over, func(a, b int) int {
				return cmp.Or(cmp.Compare(ws[b].Request[gpu], ws[a].Request[gpu]), ws[a].Since.Compare(ws[b].Since), cmp.Compare(ws[a].Name, ws[b].Name))
			})
			want = over[0]
		}
		got, ok := Elect(ws, t0, e, current)
		if ok != (want >= 0) || ok && got != want {
			t.Fatalf("elected %d (%v), reference %d", got, ok, want)
		}
		// Rank is every pod over the line, in the reference's order.
		ref := slices.Clone(over)
		slices.SortStableFunc(ref, func(a, b int) int {
			return cmp.Or(cmp.Compare(ws[b].Request[gpu], ws[a].Request[gpu]), ws[a].Since.Compare(ws[b].Since), cmp.Compare(ws[a].Name, ws[b].Name))
		})
		if got := Rank(ws, t0, e); !slices.Equal(got, ref) {
			t.Fatalf("rank %v, reference %v", got, ref)
		}
	})
}

// Targets is the reference's list cut to holds: the held pods over the
// line, then every pod over it, each once. held draws indices that are
// over the line, others, and repeats.
func TestTargetsKeepTheHeldFirst(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 10).Draw(t, "waiting")
		var over []int
		for i := range n {
			if rapid.Bool().Draw(t, fmt.Sprint("over ", i)) {
				over = append(over, i)
			}
		}
		over = rapid.Permutation(over).Draw(t, "over")
		held := rapid.SliceOfN(rapid.IntRange(0, n+2), 0, 6).Draw(t, "held")
		holds := rapid.IntRange(-1, 6).Draw(t, "holds")
		var ref []int
		for _, i := range append(slices.DeleteFunc(slices.Clone(held), func(i int) bool { return !slices.Contains(over, i) }), over...) {
			if !slices.Contains(ref, i) {
				ref = append(ref, i)
			}
		}
		ref = ref[:min(len(ref), max(holds, 0))]
		if got := Targets(over, held, holds); !slices.Equal(got, ref) {
			t.Fatalf("targets %v, reference %v (over %v, held %v, holds %d)", got, ref, over, held, holds)
		}
	})
}

// Choose is the best of Plan's holds by the reference's order: known
// FreeAt before unknown, earlier first, then fewer pods in the way, then
// less of the size slot in the way, then the lower index.
func TestChooseTakesTheNodeFreeFirst(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var nodes []Node
		for k := range rapid.IntRange(1, 4).Draw(t, "nodes") {
			nodes = append(nodes, drawNode(t, fmt.Sprint("n", k)))
		}
		target := drawWaiting(t, "target")
		skip := rapid.IntRange(-1, len(nodes)-1).Draw(t, "unusable")
		usable := func(i int) bool { return i != skip }
		type cand struct {
			i        int
			at       time.Time
			pods     int
			gpusUsed int64
		}
		var cands []cand
		for i, n := range nodes {
			if !usable(i) {
				continue
			}
			h, err := Plan(target, n, i, t0, gpu)
			if err != nil {
				continue
			}
			c := cand{i: i, at: h.FreeAt, pods: len(h.InTheWay)}
			for _, k := range h.InTheWay {
				c.gpusUsed += n.Pods[k].Request[gpu]
			}
			cands = append(cands, c)
		}
		slices.SortStableFunc(cands, func(a, b cand) int {
			if a.at.IsZero() != b.at.IsZero() {
				if a.at.IsZero() {
					return 1
				}
				return -1
			}
			return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.pods, b.pods), cmp.Compare(a.gpusUsed, b.gpusUsed), cmp.Compare(a.i, b.i))
		})
		h, ok := Choose(target, nodes, t0, gpu, usable)
		if ok != (len(cands) > 0) || ok && h.Index != cands[0].i {
			t.Fatalf("chose %d (%v), reference %+v", h.Index, ok, cands)
		}
	})
}

// The examples of the package's design, worked by hand: a node of 8 GPUs
// whose four 2-GPU pods end at 1, 2, 3 and 4 h frees for an 8-GPU target
// at 4 h; a 1-GPU pod ending by then backfills, one running past it does
// not, nor does a pod that declares nothing; on a node of 8 GPUs with 6
// held by one pod that declares no end, a 1-GPU pod fits beside a 7-GPU
// target, a 2-GPU pod does not.
func TestEASYExamples(t *testing.T) {
	two := resource.DeviceRequest{Count: 2, Each: perDevice}
	node := Node{Name: "gpu-a", Allocatable: resource.Vector{96000, 8000}, Used: resource.Vector{32000, 8000}, DeviceFree: make([]int64, 8)}
	for k := range 4 {
		node.Pods = append(node.Pods, Pod{Name: fmt.Sprint("job-", k), Request: resource.Vector{8000, 2000}, Devices: two,
			Holds: []DeviceHold{{2 * k, perDevice}, {2*k + 1, perDevice}}, End: t0.Add(time.Duration(k+1) * time.Hour)})
	}
	target := Waiting{Pod: Pod{Name: "train", Request: resource.Vector{64000, 8000}, Devices: resource.DeviceRequest{Count: 8, Each: perDevice}}}
	h, err := Plan(target, node, 0, t0, gpu)
	if err != nil || !h.FreeAt.Equal(t0.Add(4*time.Hour)) || !slices.Equal(h.InTheWay, []int{0, 1, 2, 3}) {
		t.Fatalf("hold %+v, %v", h, err)
	}
	one := resource.DeviceRequest{Count: 1, Each: perDevice}
	for _, c := range []struct {
		end  time.Time
		want bool
	}{{t0.Add(3 * time.Hour), true}, {t0.Add(4 * time.Hour), true}, {t0.Add(5 * time.Hour), false}, {time.Time{}, false}} {
		// (The node has no GPU free now: the host's filter would keep the
		// pod off; Admits says whether it would delay the target.)
		free := node
		free.DeviceFree = slices.Clone(node.DeviceFree)
		free.DeviceFree[7] = perDevice
		free.Used = resource.Vector{32000, 7000}
		free.Pods = slices.Clone(node.Pods)
		free.Pods[3].Holds = free.Pods[3].Holds[:1]
		free.Pods[3].Request = resource.Vector{8000, 1000}
		hf, _ := Plan(target, free, 0, t0, gpu)
		if got := hf.Admits(Pod{Name: "short", Request: resource.Vector{4000, 1000}, Devices: one, End: c.end}, free, t0); got != c.want {
			t.Errorf("a 1-GPU pod ending at %v: admitted %v, want %v", c.end, got, c.want)
		}
	}
	if !h.Admits(Pod{Name: "train"}, node, t0) {
		t.Error("the target itself is not admitted")
	}
	if h.Overdue(t0, 5*time.Hour) || !h.Overdue(t0, 3*time.Hour) {
		t.Error("a hold freeing in 4 h: overdue within 5 h, or not within 3 h")
	}

	blocked := Node{Name: "gpu-b", Allocatable: resource.Vector{96000, 8000}, Used: resource.Vector{48000, 6000}, DeviceFree: []int64{0, 0, 0, 0, 0, 0, perDevice, perDevice},
		Pods: []Pod{{Name: "long", Request: resource.Vector{48000, 6000}, Devices: resource.DeviceRequest{Count: 6, Each: perDevice},
			Holds: []DeviceHold{{0, perDevice}, {1, perDevice}, {2, perDevice}, {3, perDevice}, {4, perDevice}, {5, perDevice}}}}}
	small := Waiting{Pod: Pod{Name: "pair", Request: resource.Vector{8000, 2000}, Devices: two}}
	hb, err := Plan(Waiting{Pod: Pod{Name: "seven", Request: resource.Vector{8000, 7000}, Devices: resource.DeviceRequest{Count: 7, Each: perDevice}}}, blocked, 0, t0, gpu)
	if err != nil || !hb.FreeAt.IsZero() || !slices.Equal(hb.InTheWay, []int{0}) || !hb.Overdue(t0, 100*time.Hour) {
		t.Fatalf("blocked hold %+v, %v", hb, err)
	}
	if order := hb.DrainOrder(blocked, t0, gpu); !slices.Equal(order, []int{0}) {
		t.Errorf("drain order %v", order)
	}
	if !hb.Admits(Pod{Name: "one", Request: resource.Vector{4000, 1000}, Devices: one}, blocked, t0) {
		t.Error("a 1-GPU pod beside a 7-GPU target on 8 GPUs, the long pod in the way: refused")
	}
	if hb.Admits(small.Pod, blocked, t0) {
		t.Error("a 2-GPU pod beside a 7-GPU target on 8 GPUs: admitted")
	}

	// Devices, not amounts: on 3 GPUs with 1000, 300 and 300 free, a
	// 500-milli share lands on the whole GPU (the least free that fits)
	// and leaves no whole one for a 1-GPU target, though 1100 is free.
	shared := Node{Name: "gpu-c", Allocatable: resource.Vector{32000, 3000}, Used: resource.Vector{2000, 1400}, DeviceFree: []int64{perDevice, 300, 300},
		Pods: []Pod{{Name: "a", Request: resource.Vector{1000, 700}, Devices: resource.DeviceRequest{Count: 1, Each: 700}, Holds: []DeviceHold{{1, 700}}},
			{Name: "b", Request: resource.Vector{1000, 700}, Devices: resource.DeviceRequest{Count: 1, Each: 700}, Holds: []DeviceHold{{2, 700}}}}}
	hs, err := Plan(Waiting{Pod: Pod{Name: "single", Request: resource.Vector{1000, 1000}, Devices: one}}, shared, 0, t0, gpu)
	if err != nil || !hs.FreeAt.Equal(t0) || len(hs.InTheWay) != 0 {
		t.Fatalf("shared hold %+v, %v", hs, err)
	}
	if hs.Admits(Pod{Name: "share", Request: resource.Vector{1000, 500}, Devices: resource.DeviceRequest{Count: 1, Each: 500}}, shared, t0) {
		t.Error("a share that takes the only whole GPU: admitted")
	}
	if !hs.Admits(Pod{Name: "sliver", Request: resource.Vector{1000, 200}, Devices: resource.DeviceRequest{Count: 1, Each: 200}}, shared, t0) {
		t.Error("a share that fits a shared GPU: refused")
	}
	if _, err := Plan(Waiting{Pod: Pod{Name: "nine", Request: resource.Vector{0, 9000}, Devices: resource.DeviceRequest{Count: 9, Each: perDevice}}}, blocked, 0, t0, gpu); err == nil {
		t.Error("9 GPUs on a node of 8: no error")
	}
}

// drawHold is a node, a target, and the target's hold of the node; a draw
// where the target never fits the node is skipped.
func drawHold(t *rapid.T) (Node, Waiting, Hold) {
	n := drawNode(t, "n")
	target := drawWaiting(t, "target")
	h, err := Plan(target, n, 0, t0, gpu)
	if err != nil {
		t.Skip("the target never fits")
	}
	return n, target, h
}

// Freed is where a drain stops: the target fits with exactly the pods
// gone taken off, as the reference counts it; every prefix of DrainOrder
// after which it fits is a point a drain may stop at.
func TestFreedIsTheReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n, target, h := drawHold(t)
		order := h.DrainOrder(n, t0, gpu)
		gone := make([]bool, len(n.Pods))
		for k := 0; k <= len(order); k++ {
			if got, want := h.Freed(n, order[:k]), refFits(n, gone, target.Pod); got != want {
				t.Fatalf("Freed after %v: %v, reference %v", order[:k], got, want)
			}
			if k < len(order) {
				gone[order[k]] = true
			}
		}
		if len(order) > 0 && !h.Freed(n, order) {
			t.Fatalf("the target does not fit with every pod in its way %v gone", order)
		}
	})
}

// The hold: p1 (2 GPUs, no end), p2 (4 GPUs, no end) and p3 (1
// GPU, ends in an hour) in the way of a 4-GPU target on an 8-GPU node.
// The drain moves p2 first, after which the target fits: p3 stays.
func TestDrainStopsWhenTheTargetFits(t *testing.T) {
	whole := func(name string, from, count int, end time.Time) Pod {
		p := Pod{Name: name, Request: resource.Vector{1000, int64(count) * perDevice}, Devices: resource.DeviceRequest{Count: count, Each: perDevice}, End: end}
		for j := from; j < from+count; j++ {
			p.Holds = append(p.Holds, DeviceHold{Device: j, Amount: perDevice})
		}
		return p
	}
	n := Node{Name: "gpu-a", Allocatable: resource.Vector{64000, 8 * perDevice}, Used: resource.Vector{3000, 7 * perDevice},
		DeviceFree: []int64{0, 0, 0, 0, 0, 0, 0, perDevice},
		Pods:       []Pod{whole("p1", 0, 2, time.Time{}), whole("p2", 2, 4, time.Time{}), whole("p3", 6, 1, t0.Add(time.Hour))}}
	target := Waiting{Pod: Pod{Name: "target", Request: resource.Vector{1000, 4 * perDevice}, Devices: resource.DeviceRequest{Count: 4, Each: perDevice}}}
	h, err := Plan(target, n, 0, t0, gpu)
	if err != nil {
		t.Fatal(err)
	}
	order := h.DrainOrder(n, t0, gpu)
	if !slices.Equal(order, []int{1, 2}) || h.Freed(n, nil) || !h.Freed(n, order[:1]) {
		t.Errorf("drain order %v (want p2, p3); fits with none gone %v, with p2 gone %v (want false, true)", order, h.Freed(n, nil), h.Freed(n, order[:1]))
	}
}

// Amounts past resource.MaxAmount, or negative, are refused, not summed
// into an overflow: a request of MaxInt64 does not fit; pods whose
// requests sum past MaxInt64 do not check; a pod asking for -1000 cpu is
// not admitted; DrainOrder on a node with fewer pods than the hold's
// leaves the missing ones out.
func TestAmountsOutOfRangeAreRefused(t *testing.T) {
	n := Node{Name: "n", Allocatable: resource.Vector{64000, 8 * perDevice}, Used: resource.Vector{0, 0}, DeviceFree: make([]int64, 8)}
	for j := range n.DeviceFree {
		n.DeviceFree[j] = perDevice
	}
	huge := Waiting{Pod: Pod{Name: "huge", Request: resource.Vector{math.MaxInt64, 0}}}
	if h, err := Plan(huge, n, 0, t0, gpu); err == nil || !strings.Contains(err.Error(), "pod huge requests 9223372036854775807 of slot 0, outside [0, 9007199254740992]") {
		t.Errorf("a MaxInt64 request: %+v, %v", h, err)
	}
	over := n
	over.Used = resource.Vector{math.MaxInt64, 0}
	over.Pods = []Pod{{Name: "a", Request: resource.Vector{math.MaxInt64/2 + 1, 0}}, {Name: "b", Request: resource.Vector{math.MaxInt64/2 + 1, 0}}}
	if err := over.Check(2); err == nil {
		t.Error("requests summing past MaxInt64 checked")
	}
	over.Used = resource.Vector{resource.MaxAmount, 0}
	over.Pods = []Pod{{Name: "a", Request: resource.Vector{resource.MaxAmount, 0}}, {Name: "b", Request: resource.Vector{resource.MaxAmount, 0}}}
	if err := over.Check(2); err == nil || !strings.Contains(err.Error(), "more than the 9007199254740992 in use") {
		t.Errorf("requests summing past what is used: %v", err)
	}
	target := Waiting{Pod: Pod{Name: "target", Request: resource.Vector{8000, 8 * perDevice}, Devices: resource.DeviceRequest{Count: 8, Each: perDevice}}}
	h, err := Plan(target, n, 0, t0, gpu)
	if err != nil {
		t.Fatal(err)
	}
	if h.Admits(Pod{Name: "negative", Request: resource.Vector{-1000, 0}, End: t0.Add(time.Minute)}, n, t0) {
		t.Error("a pod asking for -1000 cpu admitted")
	}
	if !h.Admits(Pod{Name: "quick", Request: resource.Vector{1000, 0}, End: t0}, n, t0) {
		t.Error("a pod ending now not admitted")
	}
	h.InTheWay = []int{0, 3, -1}
	small := Node{Name: "n", Allocatable: n.Allocatable, Used: resource.Vector{1000, 0}, DeviceFree: n.DeviceFree, Pods: []Pod{{Name: "a", Request: resource.Vector{1000, 0}}}}
	if got := h.DrainOrder(small, t0, gpu); !slices.Equal(got, []int{0}) {
		t.Errorf("DrainOrder on a node with one pod: %v", got)
	}
}
