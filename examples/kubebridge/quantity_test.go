package kubebridge

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	kres "k8s.io/apimachinery/pkg/api/resource"

	"github.com/resfit/resfit/resource"
)

// difference classifies an input on which resfit's parser is documented to
// differ from apimachinery's ParseQuantity, or returns "".
//
//   - "no digits": apimachinery reads a number without digits ("Gi", ".",
//     "+", "e3") as 0; resfit rejects it (the strict grammar).
//   - "int32 exponent": apimachinery truncates a decimal exponent to int32;
//     resfit keeps it, so the values differ.
//   - "out of range": the value does not fit int64 in milli-units; resfit
//     reports it, apimachinery saturates or clamps.
//   - "negative": apimachinery's conversions of negative values are not
//     reliable ("-7053.2Ki" is −7222476.8 and Value() returns −7222475;
//     "-240623Gi" is −258366978916352 and MilliValue() returns
//     −1881419976019). resfit never holds a negative amount, so for
//     negatives only the accept/reject decision is compared.
//   - "huge exponent": not compared (see hugeExponent).
//   - "too long": resfit refuses a string longer than
//     resource.MaxQuantityLength (128) before parsing it; apimachinery
//     parses any length.
func difference(s string, rq resource.Quantity, rerr error) string {
	if len(s) > resource.MaxQuantityLength {
		return "too long"
	}
	num := s
	if num != "" && (num[0] == '+' || num[0] == '-') {
		num = num[1:]
	}
	if !startsWithDigits(num) {
		return "no digits"
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 && i+1 < len(s) {
		if e, ok := new(big.Int).SetString(strings.TrimPrefix(s[i+1:], "+"), 10); ok && !e.IsInt64() || ok && (e.Int64() > math.MaxInt32 || e.Int64() < math.MinInt32) {
			return "int32 exponent"
		}
	}
	if rerr == nil {
		_, ok := rq.ScaledValue(-3)
		if !ok {
			return "out of range"
		}
	}
	return ""
}

// hugeExponent reports whether s has a decimal exponent beyond ±1000.
// apimachinery's cost grows with the exponent ("1e999999999999" did not
// finish in ten minutes: its conversions build the power of ten), so such
// inputs are not handed to it; resfit saturates the exponent and answers at
// once (see resource's exponentLimit).
func hugeExponent(s string) bool {
	i := strings.IndexAny(s, "eE")
	if i < 0 || i+1 >= len(s) {
		return false
	}
	e, ok := new(big.Int).SetString(strings.TrimPrefix(s[i+1:], "+"), 10)
	return ok && e.CmpAbs(big.NewInt(1000)) > 0
}

// startsWithDigits reports whether the number part (the digits and dots
// before any suffix) holds a digit.
func startsWithDigits(num string) bool {
	for _, c := range num {
		switch {
		case c >= '0' && c <= '9':
			return true
		case c == '.':
		default:
			return false
		}
	}
	return false
}

// compare checks one input: the same accept/reject decision, and the same
// milli and whole values where both accept, outside the documented
// differences. It returns the difference class, if any.
func compare(t *testing.T, s string) string {
	if hugeExponent(s) {
		return "huge exponent"
	}
	kq, kerr := kres.ParseQuantity(s)
	rq, rerr := resource.ParseQuantity(s)
	if d := difference(s, rq, rerr); d != "" {
		return d
	}
	if (kerr == nil) != (rerr == nil) {
		t.Errorf("%q: apimachinery err %v, resfit err %v", s, kerr, rerr)
		return ""
	}
	if kerr != nil {
		return ""
	}
	if rq.Sign() < 0 {
		return "negative"
	}
	milli, _ := rq.ScaledValue(-3)
	if km := kq.MilliValue(); km != milli {
		t.Errorf("%q: MilliValue %d, resfit %d", s, km, milli)
	}
	if whole, ok := rq.ScaledValue(0); ok && kq.Value() != whole {
		t.Errorf("%q: Value %d, resfit %d", s, kq.Value(), whole)
	}
	return ""
}

// quantityString draws strings near the grammar: signs, digits, dots,
// suffixes and exponents, with stray characters now and then.
func quantityString(r *rand.Rand) string {
	parts := []string{"", "+", "-"}
	var b strings.Builder
	b.WriteString(parts[r.IntN(3)])
	for range r.IntN(12) {
		b.WriteByte("0123456789"[r.IntN(10)])
	}
	if r.IntN(3) == 0 {
		b.WriteByte('.')
		for range r.IntN(6) {
			b.WriteByte("0123456789"[r.IntN(10)])
		}
	}
	suffixes := []string{"", "", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u",
		"e", "E", "e3", "e-3", "E+2", "e18", "e-30", "K", "Gib", " ", "i", "1", ".", "e99999999999999999999", "e4294967296"}
	b.WriteString(suffixes[r.IntN(len(suffixes))])
	if r.IntN(10) == 0 {
		b.WriteByte("0.-+eE xG"[r.IntN(9)])
	}
	return b.String()
}

// Every generated string gets the same decision and value from both
// parsers, outside the documented differences; the closing note reports
// the counts.
func TestQuantityParserMatchesApimachinery(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	classes := map[string]int{}
	const n = 200_000
	for range n {
		if d := compare(t, quantityString(r)); d != "" {
			classes[d]++
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	t.Logf("%d inputs, 0 mismatches; documented differences: %v", n, classes)
	for _, s := range []string{"4Gi", "100m", "1.5", ".5", "2e3", "1E", "1e-30", "0.0000001Ki", "1.G", "007", "-1.5", "1500u", "9223372036854775807m"} {
		compare(t, s)
	}
}

func FuzzQuantityParserMatchesApimachinery(f *testing.F) {
	for _, s := range []string{"4Gi", "100m", "1.5", ".5", "2e3", "1K", "1 Gi", "1Gib", "1.5.5", "Gi", "", "-0", "1e-30", "8Ei", "1n", "1u",
		"9223372036854775807", "9223372036854775808", "9007199254740993", "1e999999999999999999999", "1e-99999", "0." + strings.Repeat("0", 130) + "1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { compare(t, s) })
}
