package scoring

import (
	"fmt"
	"sort"
	"testing"

	"pgregory.net/rapid"
)

// Top agrees with a full sort (total descending, row ascending) and never
// returns a rejected node.
func TestTopMatchesSort(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 40).Draw(t, "n")
		p := &Pipeline{}
		b := &Batch{pipe: p}
		b.resize(n)
		for i := range n {
			b.totals[i] = float64(rapid.IntRange(0, 5).Draw(t, "total"))
			if rapid.IntRange(0, 4).Draw(t, "reject") == 0 {
				b.rejectedBy[i] = 1
			}
		}
		k := rapid.IntRange(0, n+2).Draw(t, "k")
		var want []int
		for i := range n {
			if b.rejectedBy[i] == 0 {
				want = append(want, i)
			}
		}
		sort.SliceStable(want, func(x, y int) bool { return b.totals[want[x]] > b.totals[want[y]] })
		if len(want) > k {
			want = want[:k]
		}
		got := b.Top(k, nil)
		if fmt.Sprint(got) != fmt.Sprint(want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("Top(%d) = %v, want %v", k, got, want)
		}
	})
}
