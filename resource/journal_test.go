package resource

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func journalTable(t *testing.T, n int) *Table {
	t.Helper()
	s, _ := NewSchema("cpu", "memory")
	tab := NewTable(s, n)
	for i := range n {
		if _, err := tab.Add(fmt.Sprint("n", i), Vector{8000, 1 << 30}, nil); err != nil {
			t.Fatal(err)
		}
	}
	return tab
}

// ChangedSince lists the rows changed after a clock reading, each once,
// newest first.
func TestChangedSince(t *testing.T) {
	tab := journalTable(t, 3)
	if tab.Clock() != 3 {
		t.Fatalf("clock %d after three adds", tab.Clock())
	}
	rows, ok := tab.ChangedSince(0, nil)
	if !ok || !slices.Equal(rows, []int{2, 1, 0}) {
		t.Errorf("since 0: %v %v", rows, ok)
	}
	at := tab.Clock()
	tab.SetUsed(2, Vector{1000, 0})
	tab.AddUsed(0, Vector{1000, 0}, nil, false)
	tab.SetUsed(2, Vector{2000, 0})
	if rows, ok = tab.ChangedSince(at, rows); !ok || !slices.Equal(rows, []int{2, 0}) {
		t.Errorf("since %d: %v %v, want [2 0]", at, rows, ok)
	}
	tab.Remove(1) // row 2 moves into 1
	if rows, ok = tab.ChangedSince(at, rows); !ok || !slices.Equal(rows, []int{1, 0}) {
		t.Errorf("since %d, after a remove: %v %v, want [1 0]", at, rows, ok)
	}
	if rows, ok = tab.ChangedSince(tab.Clock(), rows); !ok || len(rows) != 0 {
		t.Errorf("since now: %v %v", rows, ok)
	}
	if _, ok = tab.ChangedSince(tab.Clock()+1, rows); ok {
		t.Error("a clock from the future is answered")
	}
	// However many changes since, each row once.
	for k := range 10000 {
		tab.SetUsed(k%2, Vector{int64(k), 0})
	}
	if rows, ok = tab.ChangedSince(at, rows); !ok || !slices.Equal(rows, []int{1, 0}) {
		t.Errorf("10,000 changes later: %v %v, want [1 0]", rows, ok)
	}
}

// ChangedSince is every row whose Version is past the reading, newest
// first, after any sequence of changes.
func TestChangedSinceAgreesWithVersions(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, _ := NewSchema("cpu")
		tab := NewTable(s, 0)
		var readings []uint64
		for range rapid.IntRange(0, 60).Draw(t, "changes") {
			n := tab.Len()
			switch op := rapid.IntRange(0, 4).Draw(t, "op"); {
			case op == 0 || n == 0:
				tab.Add(fmt.Sprint("n", tab.Clock()), Vector{8000}, nil)
			case op == 1:
				tab.SetUsed(rapid.IntRange(0, n-1).Draw(t, "row"), Vector{rapid.Int64Range(0, 8000).Draw(t, "used")})
			case op == 2:
				tab.AddUsed(rapid.IntRange(0, n-1).Draw(t, "row"), Vector{1}, nil, false)
			case op == 3:
				tab.SetAllocatable(rapid.IntRange(0, n-1).Draw(t, "row"), Vector{9000})
			default:
				tab.Remove(rapid.IntRange(0, n-1).Draw(t, "row"))
			}
			readings = append(readings, tab.Clock())
		}
		readings = append(readings, 0)
		since := readings[rapid.IntRange(0, len(readings)-1).Draw(t, "reading")]
		var want []int
		for r := range tab.Len() {
			if tab.Version(r) > since {
				want = append(want, r)
			}
		}
		slices.SortFunc(want, func(a, b int) int { return cmp.Compare(tab.Version(b), tab.Version(a)) })
		got, ok := tab.ChangedSince(since, nil)
		if !ok || !slices.Equal(got, want) {
			t.Fatalf("since %d: %v %v, want %v", since, got, ok, want)
		}
	})
}

// AddUsed adds and takes back a binding in one change; the non-zero
// amounts follow their own requests; nothing leaves [0, MaxAmount].
func TestAddUsed(t *testing.T) {
	tab := journalTable(t, 2)
	v := tab.Version(1)
	if err := tab.AddUsed(1, Vector{0, 0}, Vector{100, 200 << 20}, false); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tab.Used(1), Vector{0, 0}) || !slices.Equal(tab.NonZeroUsed(1), Vector{100, 200 << 20}) || !slices.Equal(tab.NonZeroUsed(0), Vector{0, 0}) || tab.Version(1) == v {
		t.Errorf("used %v non-zero %v version %d→%d", tab.Used(1), tab.NonZeroUsed(1), v, tab.Version(1))
	}
	if err := tab.AddUsed(1, Vector{500, 0}, nil, false); err != nil {
		t.Fatal(err)
	}
	if err := tab.AddUsed(1, Vector{500, 0}, nil, true); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tab.Used(1), Vector{0, 0}) || !slices.Equal(tab.NonZeroUsed(1), Vector{100, 200 << 20}) {
		t.Errorf("after add and release: used %v non-zero %v", tab.Used(1), tab.NonZeroUsed(1))
	}
	for name, c := range map[string]struct {
		row     int
		req     Vector
		release bool
		want    string
	}{
		"below 0":     {1, Vector{1, 0}, true, `node "n1": cpu used would leave [0, 9007199254740992]`},
		"above max":   {0, Vector{MaxAmount, 0}, false, ""},
		"outside":     {2, Vector{1, 0}, false, "node row 2 is outside [0, 2)"},
		"bad request": {0, Vector{-1, 0}, false, "requests: cpu: amount -1"},
	} {
		err := tab.AddUsed(c.row, c.req, nil, c.release)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	if err := tab.AddUsed(0, Vector{1, 0}, nil, false); err == nil {
		t.Error("used above MaxAmount accepted")
	}
}

func TestSetFree(t *testing.T) {
	d, _ := NewDevices("nvidia.com/gpu", 1000)
	d.AddNode(2)
	d.Take(0, 1, 300)
	saved := slices.Clone(d.Free(0))
	d.Allocate(0, DeviceRequest{Count: 1, Each: 1000})
	v := d.Version(0)
	if err := d.SetFree(0, saved); err != nil || !slices.Equal(d.Free(0), []int64{1000, 700}) || d.Version(0) == v {
		t.Errorf("SetFree: %v, free %v", err, d.Free(0))
	}
	for _, bad := range [][]int64{{1000}, {1001, 0}, {-1, 0}} {
		if err := d.SetFree(0, bad); err == nil {
			t.Errorf("SetFree(%v) accepted", bad)
		}
	}
	if err := d.SetFree(1, saved); err == nil {
		t.Error("SetFree of a row outside accepted")
	}
}

// LastFreed moves with a change that may make room on the node, and stays
// with one that only fills it up.
func TestLastFreed(t *testing.T) {
	tab := journalTable(t, 3) // 8 cores and 1 GiB each
	if tab.LastFreed(0) != tab.Version(0) || tab.LastFreed(1) != tab.Version(1) {
		t.Fatalf("a new node: LastFreed %d, %d, want its versions %d, %d", tab.LastFreed(0), tab.LastFreed(1), tab.Version(0), tab.Version(1))
	}
	added := tab.LastFreed(0)
	steps := []struct {
		name  string
		apply func() error
		freed bool
	}{
		{"AddUsed adding", func() error { return tab.AddUsed(0, Vector{1000, 256 << 20}, nil, false) }, false},
		{"SetUsed raising", func() error { return tab.SetUsed(0, Vector{3000, 256 << 20}) }, false},
		{"SetUsed keeping", func() error { return tab.SetUsed(0, Vector{3000, 256 << 20}) }, false},
		{"SetNonZeroUsed raising", func() error { return tab.SetNonZeroUsed(0, Vector{3100, 512 << 20}) }, false},

		{"SetUsed lowering one amount", func() error { return tab.SetUsed(0, Vector{4000, 0}) }, true},
		{"AddUsed releasing", func() error { return tab.AddUsed(0, Vector{1000, 0}, nil, true) }, true},
		{"SetNonZeroUsed lowering", func() error { return tab.SetNonZeroUsed(0, Vector{1000, 512 << 20}) }, true},
		{"SetAllocatable raising", func() error { return tab.SetAllocatable(0, Vector{9000, 2 << 30}) }, true},
		{"SetAllocatable lowering", func() error { return tab.SetAllocatable(0, Vector{6000, 2 << 30}) }, true},
	}
	last := added
	for _, s := range steps {
		if err := s.apply(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		want := last
		if s.freed {
			want = tab.Version(0)
		}
		if got := tab.LastFreed(0); got != want {
			t.Errorf("%s: LastFreed %d, want %d (version %d)", s.name, got, want, tab.Version(0))
		}
		last = tab.LastFreed(0)
	}
	if tab.LastFreed(1) == last {
		t.Error("changes to row 0 moved row 1's LastFreed")
	}
	// Removing row 0 moves n2 into it: a node put in its row.
	if _, err := tab.Remove(0); err != nil {
		t.Fatal(err)
	}
	if tab.LastFreed(0) != tab.Version(0) || tab.Name(0) != "n2" {
		t.Errorf("moved row: LastFreed %d, version %d", tab.LastFreed(0), tab.Version(0))
	}
}

// Devices.Freed counts the changes that may make room: a new node, a new
// model, free amounts raised; taking leaves it.
func TestDevicesFreed(t *testing.T) {
	d, _ := NewDevices("nvidia.com/gpu", 1000)
	d.AddNode(2)
	steps := []struct {
		name  string
		apply func() error
		freed bool
	}{
		{"Take", func() error { return d.Take(0, 0, 500) }, false},
		{"Allocate", func() error { _, err := d.Allocate(0, DeviceRequest{Count: 1, Each: 1000}); return err }, false},
		{"SetFree keeping", func() error { return d.SetFree(0, []int64{500, 0}) }, false},
		{"SetFree lowering", func() error { return d.SetFree(0, []int64{0, 0}) }, false},
		{"SetFree raising one", func() error { return d.SetFree(0, []int64{0, 1000}) }, true},
		{"SetModel same", func() error { return d.SetModel(0, "") }, false},
		{"SetModel", func() error { return d.SetModel(0, "A100") }, true},
		{"AddNode", func() error { _, err := d.AddNode(1); return err }, true},
	}
	for _, s := range steps {
		before := d.Freed()
		if err := s.apply(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if moved := d.Freed() != before; moved != s.freed {
			t.Errorf("%s: Freed moved %v, want %v", s.name, moved, s.freed)
		}
	}
}
