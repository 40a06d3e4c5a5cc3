package figure

import (
	"math"
	"testing"
)

// NiceStep divides a span into 4 to 10 steps of 1, 2 or 5 times a power
// of ten.
func TestNiceStep(t *testing.T) {
	for _, c := range []struct{ lo, hi, want float64 }{
		{2.7, 3.1, 0.05}, {0, 10, 1}, {4.2, 13.9, 1}, {0, 30, 5}, {3, 3, 1}, {0, 0.9, 0.1},
	} {
		if got := NiceStep(c.lo, c.hi); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("NiceStep(%v, %v) = %v, want %v", c.lo, c.hi, got, c.want)
		}
	}
}
