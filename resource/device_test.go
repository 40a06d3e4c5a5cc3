package resource

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestDevicesSharedAndWhole(t *testing.T) {
	d, err := NewDevices("nvidia.com/gpu", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.AddNode(4); err != nil {
		t.Fatal(err)
	}
	n1, _ := d.AddNode(0)
	if n1 != 1 || d.Len() != 2 || len(d.Free(1)) != 0 {
		t.Fatalf("rows: %d %d %v", n1, d.Len(), d.Free(1))
	}
	// Two 300-milli pods share device 0 (the tightest after the first),
	// then an 810-milli pod cannot go there (400 free) and takes device 1.
	for _, r := range []DeviceRequest{{1, 300}, {1, 300}, {1, 810}} {
		if _, err := d.Allocate(0, r); err != nil {
			t.Fatal(err)
		}
	}
	if got := d.Free(0); !slices.Equal(got, []int64{400, 190, 1000, 1000}) {
		t.Fatalf("free %v", got)
	}
	if d.FreeTotal(0) != 2590 {
		t.Fatalf("total %d", d.FreeTotal(0))
	}
	if d.Tightest(0, 150) != 1 || d.Tightest(0, 200) != 0 || d.Tightest(0, 1001) != -1 {
		t.Fatal("tightest")
	}
	if !d.Fits(0, DeviceRequest{2, 1000}) || d.Fits(0, DeviceRequest{3, 1000}) || !d.Fits(1, DeviceRequest{}) || d.Fits(1, DeviceRequest{1, 1}) {
		t.Fatal("fits")
	}
	// A two-GPU pod takes both whole devices; nothing changes on failure.
	if first, err := d.Allocate(0, DeviceRequest{2, 1000}); err != nil || first != 2 {
		t.Fatal(first, err)
	}
	if _, err := d.Allocate(0, DeviceRequest{1, 500}); err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Fatalf("want a does-not-fit error, got %v", err)
	}
	if got := d.Free(0); !slices.Equal(got, []int64{400, 190, 0, 0}) {
		t.Fatalf("free %v", got)
	}
	if err := d.Take(0, 0, 401); err == nil {
		t.Fatal("took more than free")
	}
	if err := d.Take(0, 4, 1); err == nil {
		t.Fatal("took from a missing device")
	}
	// Four changes so far (three shared pods, one two-GPU pod); failed
	// ones do not count.
	if d.Version(0) != 4 || d.Version(1) != 0 {
		t.Fatalf("versions %d %d", d.Version(0), d.Version(1))
	}
	if err := d.Take(0, 0, 400); err != nil || d.FreeTotal(0) != 190 || d.Version(0) != 5 {
		t.Fatal(err, d.Version(0))
	}
}

func TestDevicesBadInput(t *testing.T) {
	for _, c := range []struct {
		name string
		per  int64
		want string
	}{
		{"nvidia.com/gpu", 0, "amount per device"},
		{"nvidia.com/gpu", -1, "amount per device"},
		{"Bad Name", 1000, "devices"},
	} {
		if _, err := NewDevices(c.name, c.per); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewDevices(%q, %d) = %v, want %q", c.name, c.per, err, c.want)
		}
	}
	d, _ := NewDevices("nvidia.com/gpu", 1000)
	if _, err := d.AddNode(-1); err == nil {
		t.Error("negative device count accepted")
	}
	d.AddNode(1)
	for _, r := range []DeviceRequest{{-1, 100}, {0, 5}, {1, 0}, {1, 1001}} {
		if err := d.Check(r); err == nil {
			t.Errorf("Check(%v) accepted", r)
		}
		if _, err := d.Allocate(0, r); err == nil {
			t.Errorf("Allocate(%v) accepted", r)
		}
	}
	if d.FreeTotal(0) != 1000 {
		t.Fatal("a rejected request changed the node")
	}
}

// TestDevicesAllocateProperties compares Allocate with a slow reference:
// sort the fitting devices by (free, index) and take the first Count.
func TestDevicesAllocateProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		free := rapid.SliceOfN(rapid.Int64Range(0, 1000), 0, 8).Draw(t, "free")
		r := DeviceRequest{Count: rapid.IntRange(0, 4).Draw(t, "count")}
		if r.Count > 0 {
			r.Each = rapid.Int64Range(1, 1000).Draw(t, "each")
		}
		d, _ := NewDevices("nvidia.com/gpu", 1000)
		d.AddNode(len(free))
		for j, f := range free {
			if err := d.Take(0, j, 1000-f); err != nil {
				t.Fatal(err)
			}
		}
		var fit []int
		for j, f := range free {
			if f >= r.Each {
				fit = append(fit, j)
			}
		}
		sort.SliceStable(fit, func(a, b int) bool { return free[fit[a]] < free[fit[b]] })
		want := slices.Clone(free)
		wantFits := len(fit) >= r.Count
		if wantFits {
			for _, j := range fit[:r.Count] {
				want[j] -= r.Each
			}
		}
		if d.Fits(0, r) != wantFits {
			t.Fatalf("Fits = %v, want %v", !wantFits, wantFits)
		}
		if r.Count > 0 && wantFits && d.Tightest(0, r.Each) != fit[0] {
			t.Fatalf("Tightest = %d, want %d", d.Tightest(0, r.Each), fit[0])
		}
		first, err := d.Allocate(0, r)
		if (err == nil) != wantFits {
			t.Fatalf("Allocate error %v, fits %v", err, wantFits)
		}
		if !wantFits {
			want = free
		}
		if !slices.Equal(d.Free(0), want) {
			t.Fatalf("free %v, want %v", d.Free(0), want)
		}
		if wantFits && r.Count > 0 && first != fit[0] {
			t.Fatalf("first %d, want %d", first, fit[0])
		}
	})
}

func TestDevicesRowOutsideTheViewIsAnError(t *testing.T) {
	d, _ := NewDevices("nvidia.com/gpu", 1000)
	d.AddNode(2)
	for _, row := range []int{-1, 1, 1 << 40} {
		if err := d.Take(row, 0, 100); err == nil || !strings.Contains(err.Error(), "outside") {
			t.Errorf("Take(row %d): %v", row, err)
		}
		if _, err := d.Allocate(row, DeviceRequest{Count: 1, Each: 100}); err == nil || !strings.Contains(err.Error(), "outside") {
			t.Errorf("Allocate(row %d): %v", row, err)
		}
	}
	if err := d.Take(0, 2, 100); err == nil {
		t.Error("Take of a device the node lacks accepted")
	}
}

// Fits agrees with counting the devices that have enough free, on every
// node, after any sequence of Take, Allocate and SetFree.
func TestDevicesFitsAfterChanges(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d, _ := NewDevices("nvidia.com/gpu", 1000)
		for range rapid.IntRange(1, 4).Draw(t, "nodes") {
			d.AddNode(rapid.IntRange(0, 8).Draw(t, "devices"))
		}
		request := func(label string) DeviceRequest {
			r := DeviceRequest{Count: rapid.IntRange(0, 9).Draw(t, label+" count")}
			if r.Count > 0 {
				r.Each = rapid.Int64Range(1, 1000).Draw(t, label+" each")
			}
			return r
		}
		for range rapid.IntRange(0, 30).Draw(t, "changes") {
			i := rapid.IntRange(0, d.Len()-1).Draw(t, "node")
			n := len(d.Free(i))
			switch rapid.IntRange(0, 2).Draw(t, "op") {
			case 0:
				if n > 0 {
					j := rapid.IntRange(0, n-1).Draw(t, "device")
					d.Take(i, j, rapid.Int64Range(0, d.Free(i)[j]).Draw(t, "amount"))
				}
			case 1:
				d.Allocate(i, request("allocate"))
			default:
				free := make([]int64, n)
				for j := range free {
					free[j] = rapid.Int64Range(0, 1000).Draw(t, "free")
				}
				d.SetFree(i, free)
			}
			var sum int64
			for k := range d.Len() {
				for _, f := range d.Free(k) {
					sum += f
				}
			}
			if d.FreeSum() != sum {
				t.Fatalf("FreeSum %d, the free amounts sum to %d", d.FreeSum(), sum)
			}
			r := request("check")
			for k := range d.Len() {
				have := 0
				for _, f := range d.Free(k) {
					if f >= r.Each {
						have++
					}
				}
				if want := have >= r.Count; d.Fits(k, r) != want {
					t.Fatalf("node %d free %v: Fits(%v) = %v, want %v", k, d.Free(k), r, !want, want)
				}
			}
		}
	})
}

// The operations a cache of pods needs — AllocateInto, Return, SetCount,
// Remove — agree with a plain list of free amounts per node: every device
// AllocateInto reports is one Allocate would have taken from, Return
// gives exactly those back, SetCount resets a node, Remove moves the last
// node into the row; Fits agrees with counting, FreeTotal, FreeSum and
// Capacity with summing, and every change that may make room raises Freed.
func TestDevicesKeepPodsAgainstAReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d, _ := NewDevices("nvidia.com/gpu", 1000)
		var ref [][]int64
		type held struct {
			node    int
			devices []int
			each    int64
		}
		var pods []held
		for range rapid.IntRange(1, 60).Draw(t, "ops") {
			freed := d.Freed()
			switch op := rapid.IntRange(0, 4).Draw(t, "op"); {
			case op == 0 || len(ref) == 0:
				n := rapid.IntRange(0, 8).Draw(t, "count")
				if _, err := d.AddNode(n); err != nil {
					t.Fatal(err)
				}
				ref = append(ref, slices.Repeat([]int64{1000}, n))
			case op == 1:
				i := rapid.IntRange(0, len(ref)-1).Draw(t, "node")
				r := DeviceRequest{Count: rapid.IntRange(1, 3).Draw(t, "n"), Each: rapid.Int64Range(1, 1000).Draw(t, "each")}
				before := slices.Clone(ref[i])
				got, err := d.AllocateInto(i, r, nil)
				if fits := countFitting(before, r.Each) >= r.Count; (err == nil) != fits {
					t.Fatalf("AllocateInto %+v on %v: %v", r, before, err)
				}
				if err != nil {
					continue
				}
				for _, j := range got {
					ref[i][j] -= r.Each
				}
				pods = append(pods, held{i, got, r.Each})
			case op == 2 && len(pods) > 0:
				k := rapid.IntRange(0, len(pods)-1).Draw(t, "pod")
				p := pods[k]
				pods = slices.Delete(pods, k, k+1)
				for _, j := range p.devices {
					if err := d.Return(p.node, j, p.each); err != nil {
						t.Fatal(err)
					}
				}
				for _, j := range p.devices {
					ref[p.node][j] += p.each
				}
				if d.Freed() == freed {
					t.Fatal("Return did not count as freeing")
				}
			case op == 3:
				i := rapid.IntRange(0, len(ref)-1).Draw(t, "node")
				n := rapid.IntRange(0, 8).Draw(t, "count")
				if err := d.SetCount(i, n); err != nil {
					t.Fatal(err)
				}
				ref[i] = slices.Repeat([]int64{1000}, n)
				pods = slices.DeleteFunc(pods, func(p held) bool { return p.node == i })
			default:
				i := rapid.IntRange(0, len(ref)-1).Draw(t, "node")
				last := len(ref) - 1
				if moved, err := d.Remove(i); err != nil || moved != last {
					t.Fatalf("Remove(%d): %d, %v", i, moved, err)
				}
				ref[i] = ref[last]
				ref = ref[:last]
				pods = slices.DeleteFunc(pods, func(p held) bool { return p.node == i })
				for k := range pods {
					if pods[k].node == last {
						pods[k].node = i
					}
				}
			}
			if d.Len() != len(ref) {
				t.Fatalf("%d nodes, want %d", d.Len(), len(ref))
			}
			var sum, capacity int64
			for i, want := range ref {
				if !slices.Equal(d.Free(i), want) {
					t.Fatalf("node %d free %v, want %v", i, d.Free(i), want)
				}
				var total int64
				for _, f := range want {
					total += f
				}
				if d.FreeTotal(i) != total {
					t.Fatalf("node %d free %v: FreeTotal %d, want %d", i, want, d.FreeTotal(i), total)
				}
				sum += total
				capacity += int64(len(want)) * 1000
				for each := int64(1); each <= 1000; each += 333 {
					for count := 1; count <= 3; count++ {
						if d.Fits(i, DeviceRequest{count, each}) != (countFitting(want, each) >= count) {
							t.Fatalf("node %d %v: Fits(%d × %d) disagrees", i, want, count, each)
						}
					}
				}
			}
			if d.FreeSum() != sum || d.Capacity() != capacity {
				t.Fatalf("FreeSum %d, Capacity %d; want %d, %d", d.FreeSum(), d.Capacity(), sum, capacity)
			}
		}
		// A released device past its size is refused.
		if len(ref) > 0 && len(ref[0]) > 0 && ref[0][0] == 1000 {
			if err := d.Return(0, 0, 1); err == nil {
				t.Fatal("returned past a device's size")
			}
		}
	})
}

func countFitting(free []int64, each int64) int {
	n := 0
	for _, f := range free {
		if f >= each {
			n++
		}
	}
	return n
}
