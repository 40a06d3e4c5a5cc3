package resource

import (
	"errors"
	"math/big"
	"strings"
	"testing"
)

func TestParseAmountCanonicalUnits(t *testing.T) {
	tests := []struct {
		name, resource, in string
		want               int64
	}{
		{"binary suffix bytes", Memory, "4Gi", 4294967296},
		{"millicores", CPU, "100m", 100},
		{"whole cores", CPU, "2", 2000},
		{"fractional gpu in milli-units", "nvidia.com/gpu", "1.5", 1500},
		{"leading-dot fraction", "nvidia.com/gpu", ".5", 500},
		{"trailing dot", CPU, "5.", 5000},
		{"decimal exponent", Memory, "2e3", 2000},
		{"capital exponent", Memory, "2E3", 2000},
		{"signed exponent", CPU, "15e-1", 1500},
		{"micro", CPU, "1500u", 2},
		{"nano", CPU, "1000000n", 1},
		{"exa is E alone", Memory, "0.001E", 1_000_000_000_000_000},
		{"decimal SI kilo", Memory, "1k", 1000},
		{"decimal SI mega", Memory, "256M", 256_000_000},
		{"mebibytes", Memory, "200Mi", 200 << 20},
		{"fraction of a byte rounds up", Memory, "100m", 1},
		{"fraction of a millicore rounds up", CPU, "1.0001m", 2},
		{"tiny rounds up to one unit", CPU, "1e-30", 1},
		{"plus sign", CPU, "+1", 1000},
		{"zero", "nvidia.com/gpu", "0", 0},
		{"negative zero is zero", CPU, "-0", 0},
		{"zero with huge exponent", CPU, "0e999999999", 0},
		{"pods count", Pods, "110", 110},
		{"ephemeral storage", EphemeralStorage, "100Gi", 100 << 30},
		{"hugepages are bytes", "hugepages-2Mi", "1Gi", 1 << 30},
		{"leading zeros", CPU, "007", 7000},
		{"fraction with binary suffix", Memory, "1.5Gi", 1610612736},
		{"largest amount", Memory, "9007199254740992", MaxAmount},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseAmount(tc.resource, tc.in)
			if err != nil {
				t.Fatalf("ParseAmount(%q, %q): %v", tc.resource, tc.in, err)
			}
			if got != tc.want {
				t.Errorf("ParseAmount(%q, %q) = %d, want %d", tc.resource, tc.in, got, tc.want)
			}
		})
	}
}

func TestParseAmountRejects(t *testing.T) {
	tests := []struct {
		resource, in, reason string
	}{
		{CPU, "", "empty"},
		{Memory, "1K", "unknown suffix \"K\""},
		{Memory, "1 Gi", "unknown suffix \" Gi\""},
		{Memory, "1Gib", "unknown suffix \"Gib\""},
		{CPU, "1.5.5", "unknown suffix \".5\""},
		{Memory, "Gi", "no digits"},
		{Memory, ".", "no digits"},
		{Memory, "-", "no digits"},
		{Memory, "1e", "unknown suffix \"e\""},
		{Memory, "1e+", "unknown suffix \"e+\""},
		{Memory, "1e3.5", "unknown suffix \"e3.5\""},
		{Memory, " 1", "no digits"},
		{Memory, "1 ", "unknown suffix \" \""},
		{Memory, "1Mi5", "unknown suffix \"Mi5\""},
		{CPU, "-1", "negative"},
		{Memory, "9223372036854775808", "overflows int64"},
		{Memory, "8Ei", "overflows int64"},
		{CPU, "9223372036854775807", "overflows int64"}, // ×1000 for millicores
		{Memory, "1e19", "overflows int64"},
		{Memory, "1e999999999999999999999", "unknown suffix"},
		{Memory, "1e99999", "overflows int64"},
		{Memory, "9007199254740993", "above the largest amount"},
		{Memory, "4Ei", "above the largest amount"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ParseAmount(tc.resource, tc.in)
			if err == nil {
				t.Fatalf("ParseAmount(%q, %q) accepted it", tc.resource, tc.in)
			}
			var qe *QuantityError
			if !errors.As(err, &qe) || qe.Input != tc.in {
				t.Fatalf("error %v does not carry the input %q", err, tc.in)
			}
			if !strings.Contains(err.Error(), tc.reason) || !strings.Contains(err.Error(), "\""+tc.in+"\"") {
				t.Errorf("error %q should quote the input and say %q", err, tc.reason)
			}
		})
	}
}

func TestScaledValueRoundsAwayFromZero(t *testing.T) {
	q, err := ParseQuantity("-1.5")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := q.ScaledValue(0); !ok || v != -2 {
		t.Errorf("-1.5 at scale 0 = %d, %v; want -2 (away from zero, as Kubernetes)", v, ok)
	}
	if v, ok := q.ScaledValue(-3); !ok || v != -1500 {
		t.Errorf("-1.5 at scale -3 = %d, %v; want -1500", v, ok)
	}
}

func TestExaFitsInt64ButNotAVector(t *testing.T) {
	q, err := ParseQuantity("1E")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := q.ScaledValue(0); !ok || v != 1_000_000_000_000_000_000 {
		t.Errorf("1E = %d, %v; want 10^18", v, ok)
	}
	if _, err := ParseAmount(Memory, "1E"); err == nil {
		t.Error("1E bytes is above MaxAmount and must be rejected")
	}
}

func TestFormatAmount(t *testing.T) {
	tests := []struct {
		resource string
		v        int64
		want     string
	}{
		{"nvidia.com/gpu", 2000, "2"},
		{"nvidia.com/gpu", 500, "500m"},
		{CPU, 58000, "58"},
		{CPU, 1500, "1500m"},
		{Memory, 4 << 30, "4Gi"},
		{Memory, 1000, "1000"},
		{Memory, 0, "0"},
		{Pods, 110, "110"},
	}
	for _, tc := range tests {
		if got := FormatAmount(tc.resource, tc.v); got != tc.want {
			t.Errorf("FormatAmount(%q, %d) = %q, want %q", tc.resource, tc.v, got, tc.want)
		}
	}
}

// referenceScaled is the obviously-correct value of a quantity string in
// units of 10^scale, rounded away from zero, computed with big.Rat from the
// grammar's pieces.
func referenceScaled(t interface{ Helper() }, s string, scale int) (*big.Int, bool) {
	t.Helper()
	q, err := ParseQuantity(s)
	if err != nil {
		return nil, false
	}
	if q.exp10 > 200 || q.exp10 < -200 || len(q.mantissa) > 200 {
		return nil, false
	}
	r, _ := new(big.Rat).SetString(orZero(q.mantissa))
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(q.exp2))))
	e := q.exp10 - scale
	p := new(big.Rat).SetInt(pow10(abs(e)))
	if e >= 0 {
		r.Mul(r, p)
	} else {
		r.Quo(r, p)
	}
	num, den := r.Num(), r.Denom()
	quo, rem := new(big.Int).QuoRem(num, den, new(big.Int))
	if rem.Sign() != 0 {
		quo.Add(quo, big.NewInt(1))
	}
	if q.neg {
		quo.Neg(quo)
	}
	return quo, true
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func FuzzParseQuantity(f *testing.F) {
	for _, s := range []string{"4Gi", "100m", "1.5", ".5", "2e3", "1E", "-1", "+0.001m", "1K", "1 Gi",
		"1Gib", "1.5.5", "Gi", "", "9223372036854775807", "1e-30", "1e999999999", "8Ei", "0.0000001Ki",
		// Extremes: 2^53 and one past it, 2^63, the exponent limit's edges,
		// the length limit and one past it.
		"9007199254740992", "9007199254740993", "9223372036854775808", "8Ei", "-8Ei", "1e1048576", "1e-1048577",
		"1e9223372036854775807", "1e-9223372036854775808", strings.Repeat("9", MaxQuantityLength), strings.Repeat("9", MaxQuantityLength+1)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseQuantity(s)
		if err != nil {
			var qe *QuantityError
			if !errors.As(err, &qe) || qe.Input != s {
				t.Fatalf("error %v does not quote the input", err)
			}
			return
		}
		for _, scale := range []int{-3, 0} {
			got, ok := q.ScaledValue(scale)
			want, checked := referenceScaled(t, s, scale)
			if !checked {
				continue
			}
			if want.IsInt64() != ok {
				t.Fatalf("%q at scale %d: fits=%v, reference %v", s, scale, ok, want)
			}
			if ok && got != want.Int64() {
				t.Fatalf("%q at scale %d = %d, reference %v", s, scale, got, want)
			}
		}
	})
}

// TestLongQuantityIsRejectedWithoutParsing: a megabyte of digits used to
// take seconds (the cost grew about n^1.8); it is now an error that quotes
// only the start of the input.
func TestLongQuantityIsRejectedWithoutParsing(t *testing.T) {
	long := strings.Repeat("9", 1<<20)
	_, err := ParseAmount(Memory, long)
	if err == nil || !strings.Contains(err.Error(), "1048576 characters long, at most 128") {
		t.Fatalf("got %v", err)
	}
	if len(err.Error()) > 200 {
		t.Errorf("the message quotes the whole input (%d bytes)", len(err.Error()))
	}
	ok := "0." + strings.Repeat("0", MaxQuantityLength-4) + "1"
	if _, err := ParseAmount(Memory, ok); err != nil {
		t.Errorf("a %d-character quantity: %v", len(ok), err)
	}
}
