package resource

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Quantity is a number written in the Kubernetes quantity grammar, held
// exactly: its value is ±mantissa × 10^exp10 × 2^exp2.
//
// The grammar, as in k8s.io/apimachinery/pkg/api/resource:
//
//	<quantity>     ::= <signedNumber><suffix>
//	<signedNumber> ::= <number> | +<number> | -<number>
//	<number>       ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
//	<suffix>       ::= <binarySI> | <decimalSI> | <decimalExponent>
//	<binarySI>     ::= Ki | Mi | Gi | Ti | Pi | Ei
//	<decimalSI>    ::= n | u | m | "" | k | M | G | T | P | E
//	<decimalExponent> ::= e<integer> | E<integer>   (the integer fits int64)
//
// No white space is allowed anywhere, and suffixes are case-sensitive
// ("1K" and "1Gib" are errors). n and u (nano, micro) are not in the
// documented grammar but Kubernetes accepts them, and so does this parser.
//
// It is stricter than Kubernetes' ParseQuantity in one way: a number needs
// a digit. Kubernetes reads "Gi", ".", "+" and "e3" as 0; here they are
// errors.
type Quantity struct {
	neg      bool
	mantissa string // decimal digits without leading zeros; "" is zero
	exp10    int
	exp2     int
}

// QuantityError reports a string that is not a quantity, or a quantity that
// does not fit its canonical unit. It quotes the input.
type QuantityError struct {
	Input  string
	Reason string
}

func (e *QuantityError) Error() string {
	in := e.Input
	if len(in) > MaxQuantityLength {
		in = in[:32] + "…"
	}
	return fmt.Sprintf("quantity %q: %s", in, e.Reason)
}

// exponentLimit bounds a parsed exponent. Any non-zero quantity with an
// exponent this large overflows int64 and any with one this small rounds up
// to one unit, so saturating keeps the arithmetic small without changing a
// result. (An exponent that does not fit int64 is an error, as in
// Kubernetes.)
const exponentLimit = 1 << 20

// MaxQuantityLength is the longest quantity string ParseQuantity reads.
// The largest amount a Vector holds has 16 digits; 128 characters leave
// room for any leading zeros, fraction and suffix a person writes, and keep
// a hostile string from costing more than a few microseconds.
const MaxQuantityLength = 128

// ParseQuantity parses s in the Kubernetes quantity grammar. A string
// longer than MaxQuantityLength is an error.
func ParseQuantity(s string) (Quantity, error) {
	if len(s) > MaxQuantityLength {
		// Quote only the start: the input may be megabytes long.
		return Quantity{}, &QuantityError{Input: s, Reason: fmt.Sprintf("%d characters long, at most %d are accepted", len(s), MaxQuantityLength)}
	}
	fail := func(reason string) (Quantity, error) {
		return Quantity{}, &QuantityError{Input: s, Reason: reason}
	}
	if s == "" {
		return fail("empty")
	}
	var q Quantity
	i := 0
	switch s[0] {
	case '+':
		i++
	case '-':
		q.neg = true
		i++
	}
	intStart := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intDigits := s[intStart:i]
	var fracDigits string
	if i < len(s) && s[i] == '.' {
		i++
		fracStart := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		fracDigits = s[fracStart:i]
	}
	if intDigits == "" && fracDigits == "" {
		return fail("no digits before the suffix")
	}
	suffix := s[i:]
	if err := q.applySuffix(suffix); err != "" {
		return fail(err)
	}
	digits := strings.TrimLeft(intDigits+fracDigits, "0")
	q.mantissa = digits
	q.exp10 -= len(fracDigits)
	if q.mantissa == "" {
		q.neg = false
	}
	return q, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// applySuffix records the suffix's power of ten or two; it returns a reason
// when the suffix is not in the grammar.
func (q *Quantity) applySuffix(suffix string) string {
	switch suffix {
	case "":
		return ""
	case "n":
		q.exp10 = -9
	case "u":
		q.exp10 = -6
	case "m":
		q.exp10 = -3
	case "k":
		q.exp10 = 3
	case "M":
		q.exp10 = 6
	case "G":
		q.exp10 = 9
	case "T":
		q.exp10 = 12
	case "P":
		q.exp10 = 15
	case "E":
		q.exp10 = 18
	case "Ki":
		q.exp2 = 10
	case "Mi":
		q.exp2 = 20
	case "Gi":
		q.exp2 = 30
	case "Ti":
		q.exp2 = 40
	case "Pi":
		q.exp2 = 50
	case "Ei":
		q.exp2 = 60
	default:
		if suffix[0] != 'e' && suffix[0] != 'E' {
			return fmt.Sprintf("unknown suffix %q", suffix)
		}
		e, ok := parseExponent(suffix[1:])
		if !ok {
			return fmt.Sprintf("unknown suffix %q", suffix)
		}
		q.exp10 = e
	}
	return ""
}

// parseExponent reads an optionally signed run of decimal digits that fits
// an int64, saturating the result at ±exponentLimit.
func parseExponent(s string) (int, bool) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false
	}
	return int(max(-exponentLimit, min(exponentLimit, v))), true
}

// Sign returns -1, 0 or +1.
func (q Quantity) Sign() int {
	switch {
	case q.mantissa == "":
		return 0
	case q.neg:
		return -1
	}
	return 1
}

// ScaledValue returns q in units of 10^scale (scale -3 is milli-units, 0 is
// whole units), rounded away from zero as Kubernetes' Quantity.ScaledValue
// does: "100m" at scale 0 is 1, "1.0001m" at scale -3 is 2. ok is false when
// the result does not fit in an int64.
func (q Quantity) ScaledValue(scale int) (v int64, ok bool) {
	if q.mantissa == "" {
		return 0, true
	}
	n := len(q.mantissa)
	e := q.exp10 - scale // value = mantissa × 2^exp2 × 10^e
	// mantissa ≥ 10^(n-1), so the value is at least 10^(n-1+e).
	if n-1+e >= 19 {
		return 0, false
	}
	// mantissa × 2^60 < 10^(n+19): below one unit when -e ≥ n+19.
	if -e >= n+19 {
		return q.signed(1), true
	}
	// Most quantities have a few digits: int64 arithmetic is exact for
	// them (scaleDecimal), the big integers below for the rest.
	if m, ok := smallMantissa(q.mantissa); ok && q.exp2 < 64 && m <= math.MaxInt64>>q.exp2 {
		if v, ok := scaleDecimal(m<<q.exp2, e); ok {
			return q.signed(v), true
		}
	}
	return q.scaledValueBig(e)
}

// scaledValueBig is ScaledValue by big integers, for value = mantissa ×
// 2^exp2 × 10^e, rounded away from zero.
func (q Quantity) scaledValueBig(e int) (v int64, ok bool) {
	num, _ := new(big.Int).SetString(q.mantissa, 10)
	num.Lsh(num, uint(q.exp2))
	if e >= 0 {
		num.Mul(num, pow10(e))
	} else {
		var rem big.Int
		num.QuoRem(num, pow10(-e), &rem)
		if rem.Sign() != 0 {
			num.Add(num, big.NewInt(1))
		}
	}
	if !num.IsInt64() {
		// −2^63 fits though its magnitude does not ("-8Ei").
		if q.neg && num.Cmp(minInt64Magnitude) == 0 {
			return math.MinInt64, true
		}
		return 0, false
	}
	return q.signed(num.Int64()), true
}

var minInt64Magnitude = new(big.Int).Lsh(big.NewInt(1), 63)

func (q Quantity) signed(v int64) int64 {
	if q.neg {
		return -v
	}
	return v
}

// smallMantissa reads at most 18 decimal digits as an int64 (below 10^18);
// ok is false for more digits, or a byte that is not a digit.
func smallMantissa[T string | []byte](digits T) (int64, bool) {
	if len(digits) == 0 || len(digits) > 18 {
		return 0, false
	}
	var m int64
	for i := range len(digits) {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		m = m*10 + int64(c-'0')
	}
	return m, true
}

// powers10 are 10^0 to 10^18, every power of ten an int64 holds.
var powers10 = func() (p [19]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// scaleDecimal is ⌈m × 10^e⌉ for m ≥ 0, exactly; ok is false when it does
// not fit in an int64.
func scaleDecimal(m int64, e int) (int64, bool) {
	switch {
	case m == 0:
		return 0, true
	case e >= 0:
		for ; e > 0; e-- {
			if m > math.MaxInt64/10 {
				return 0, false
			}
			m *= 10
		}
		return m, true
	case e < -18: // m < 2^63 < 10^19 ≤ 10^-e: below one unit
		return min(m, 1), true
	}
	p := powers10[-e]
	v := m / p
	if m%p != 0 {
		v++
	}
	return v, true
}

// DecimalAmount is the amount digits × 10^exp10 of the named resource in
// its canonical unit, rounded up as ParseAmount rounds: digits are
// decimal digits alone, as a host's quantity type writes a value's
// mantissa (k8s.io/apimachinery's Quantity.AsCanonicalBytes). ok is false
// when the amount is above MaxAmount, or when digits are more than 18 or
// hold anything but digits (a sign): ParseAmount then decides, and says
// why.
func DecimalAmount(name string, digits []byte, exp10 int) (int64, bool) {
	m, ok := smallMantissa(digits)
	if !ok || exp10 > 100 || exp10 < -100 {
		return 0, false
	}
	v, ok := scaleDecimal(m, exp10-UnitOf(name).scale())
	return v, ok && v <= MaxAmount
}

func pow10(e int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(e)), nil)
}

// MaxAmount is the largest amount a Vector may hold, 2^53. Below it every
// sum of two amounts, every amount times 100 and every amount converted to
// float64 is exact, which is what lets the scorers agree with integer
// upstream code to the digit. It is 9 PB of memory, 9×10^12 cores or
// 9×10^12 GPUs.
const MaxAmount int64 = 1 << 53

// MaxWeight bounds every weight resfit accepts, of every kind: a
// resource's weight inside a scorer, a plugin's own weight
// (resourceStrategyFitWeight, binpack.weight, the sra retention weight), a
// scorer's weight in a pipeline's total, a pod's annotation weights, a
// fragmentation class's weight. kube-scheduler's NodeResourcesFit keeps its
// own tighter bound, 100.
//
// With it the largest integer weighted sum a scorer forms, 64 resources ×
// score 100 × 10^6, is below 2^33; a scorer's largest score, 100 × 10^6,
// is 10^8; and a pipeline, which also checks that its largest total is at
// most 2^53, adds exact integers. Nothing overflows int64 and every
// integer total is exact in float64. Real configurations use weights of 1
// to 100.
const MaxWeight = 1_000_000

// ParseAmount parses s as an amount of the named resource in that resource's
// canonical unit (see Unit). Negative quantities, quantities that overflow
// int64 in the canonical unit and amounts above MaxAmount are errors that
// quote the input.
func ParseAmount(name, s string) (int64, error) {
	q, err := ParseQuantity(s)
	if err != nil {
		return 0, err
	}
	if q.Sign() < 0 {
		return 0, &QuantityError{Input: s, Reason: "negative amounts are not allowed"}
	}
	unit := UnitOf(name)
	v, ok := q.ScaledValue(unit.scale())
	if !ok {
		return 0, &QuantityError{Input: s, Reason: fmt.Sprintf("overflows int64 in %s", unit)}
	}
	if v > MaxAmount {
		return 0, &QuantityError{Input: s, Reason: fmt.Sprintf("%d %s is above the largest amount, 2^53", v, unit)}
	}
	return v, nil
}

// FormatAmount writes an amount of the named resource for people: milli-unit
// resources as whole units when exact ("2", "1500m"), byte-like resources
// with the largest exact binary suffix ("4Gi", "1000").
func FormatAmount(name string, v int64) string {
	if UnitOf(name) == Milli {
		if v%1000 == 0 {
			return strconv.FormatInt(v/1000, 10)
		}
		return strconv.FormatInt(v, 10) + "m"
	}
	if v == 0 || v == math.MinInt64 {
		return strconv.FormatInt(v, 10)
	}
	suffixes := []string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}
	i := 0
	for i+1 < len(suffixes) && v%1024 == 0 {
		v /= 1024
		i++
	}
	return strconv.FormatInt(v, 10) + suffixes[i]
}
