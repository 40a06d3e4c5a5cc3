package resource

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// quantityNear draws a quantity string around where int64 arithmetic
// stops being enough: 1 to 25 digits, a decimal point anywhere or none,
// any suffix or an exponent from -40 to 40, an optional sign.
func quantityNear(t *rapid.T) string {
	var b strings.Builder
	b.WriteString(rapid.SampledFrom([]string{"", "", "-", "+"}).Draw(t, "sign"))
	n := rapid.IntRange(1, 25).Draw(t, "digits")
	digits := rapid.SliceOfN(rapid.SampledFrom([]byte("0123456789999")), n, n).Draw(t, "mantissa")
	point := rapid.IntRange(-1, n).Draw(t, "point")
	for i, c := range digits {
		if i == point {
			b.WriteByte('.')
		}
		b.WriteByte(c)
	}
	if rapid.Bool().Draw(t, "exponent") {
		fmt.Fprintf(&b, "e%d", rapid.IntRange(-40, 40).Draw(t, "exp"))
	} else {
		b.WriteString(rapid.SampledFrom([]string{"", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}).Draw(t, "suffix"))
	}
	return b.String()
}

// ScaledValue's int64 path gives what exact arithmetic gives, and what its
// big-integer path gives, on quantities of every size around the int64
// limits; ParseAmount agrees with DecimalAmount wherever the latter
// answers. Fails when scaleDecimal rounds down, or lets a product past
// int64.
func TestScaledValueSmallPathIsExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := quantityNear(t)
		q, err := ParseQuantity(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		for _, scale := range []int{0, -3} {
			want, _ := referenceScaled(t, s, scale)
			got, ok := q.ScaledValue(scale)
			switch {
			case want.IsInt64() != ok:
				t.Fatalf("%q at scale %d: %d, ok %v; exactly %v", s, scale, got, ok, want)
			case ok && got != want.Int64():
				t.Fatalf("%q at scale %d: %d; exactly %v", s, scale, got, want)
			}
			if len(q.mantissa) > 0 && -(q.exp10-scale) < len(q.mantissa)+19 && len(q.mantissa)-1+q.exp10-scale < 19 {
				if big, bigOK := q.scaledValueBig(q.exp10 - scale); bigOK != ok || big != got {
					t.Fatalf("%q at scale %d: %d, %v; by big integers %d, %v", s, scale, got, ok, big, bigOK)
				}
			}
		}
		if q.neg || q.exp2 != 0 || q.mantissa == "" {
			return
		}
		for _, name := range []string{Memory, CPU} {
			v, ok := DecimalAmount(name, []byte(q.mantissa), q.exp10)
			want, err := ParseAmount(name, q.mantissa+"e"+strconv.Itoa(q.exp10))
			if ok && (err != nil || v != want) {
				t.Fatalf("%q as %s: DecimalAmount %d; ParseAmount %d, %v", s, name, v, want, err)
			}
			if !ok && err == nil && len(q.mantissa) <= 18 {
				t.Fatalf("%q as %s: DecimalAmount declines an amount ParseAmount gives (%d)", s, name, want)
			}
		}
	})
}

func TestScaleDecimalEdges(t *testing.T) {
	for _, tc := range []struct {
		m, e int64
		want int64
		ok   bool
	}{
		{1, 18, 1e18, true},
		{9, 18, 9e18, true},
		{10, 18, 0, false},
		{math.MaxInt64, 0, math.MaxInt64, true},
		{math.MaxInt64 / 10, 1, math.MaxInt64 / 10 * 10, true},
		{math.MaxInt64/10 + 1, 1, 0, false},
		{1, -1, 1, true},
		{10, -1, 1, true},
		{11, -1, 2, true},
		{999_999_999_999_999_999, -18, 1, true},
		{1_000_000_000_000_000_001, -18, 2, true},
		{math.MaxInt64, -19, 1, true},
		{0, -30, 0, true},
		{0, 30, 0, true},
	} {
		got, ok := scaleDecimal(tc.m, int(tc.e))
		if got != tc.want || ok != tc.ok {
			t.Errorf("⌈%d × 10^%d⌉ = %d, %v; want %d, %v", tc.m, tc.e, got, ok, tc.want, tc.ok)
		}
	}
}

// DecimalAmount never answers otherwise than ParseAmount, for any bytes
// and any exponent: where it answers, ParseAmount gives the same amount.
func FuzzDecimalAmount(f *testing.F) {
	for _, tc := range []struct {
		digits string
		exp    int
	}{{"1", 0}, {"100", -3}, {"4294967296", 0}, {"9007199254740992", 0}, {"9007199254740993", 0}, {"999999999999999999", 2}, {"0", 1000}, {"-1", 0}, {"1", -30}, {"12a", 0}} {
		f.Add([]byte(tc.digits), tc.exp, true)
		f.Add([]byte(tc.digits), tc.exp, false)
	}
	f.Fuzz(func(t *testing.T, digits []byte, exp int, milli bool) {
		name := Memory
		if milli {
			name = CPU
		}
		v, ok := DecimalAmount(name, digits, exp)
		if !ok {
			return
		}
		want, err := ParseAmount(name, string(digits)+"e"+strconv.Itoa(exp))
		if err != nil || v != want {
			t.Fatalf("%q e%d as %s: DecimalAmount %d; ParseAmount %d, %v", digits, exp, name, v, want, err)
		}
	})
}
