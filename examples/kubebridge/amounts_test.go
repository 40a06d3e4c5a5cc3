package kubebridge

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"testing"

	kres "k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"

	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
	"github.com/resfit/resfit/resource"
)

// exactAmount is a quantity in a resource's canonical unit by exact
// rational arithmetic on the quantity's decimal value: ⌈value × 10^3⌉ for
// milli-unit resources, ⌈value⌉ otherwise; -1 for a negative quantity.
func exactAmount(name string, q kres.Quantity) *big.Int {
	d := q.AsDec()
	switch d.UnscaledBig().Sign() {
	case -1:
		return big.NewInt(-1)
	case 0:
		return big.NewInt(0)
	}
	v := new(big.Rat).SetFrac(d.UnscaledBig(), big.NewInt(1))
	scale := int64(-d.Scale())
	if resource.UnitOf(name) == resource.Milli {
		scale += 3
	}
	// Past these the value is above 10^900 or below 10^-900 × its digits
	// (at most a few hundred): out of range, or one unit once rounded up.
	switch {
	case scale > 1000:
		return new(big.Int).Lsh(big.NewInt(1), 64)
	case scale < -1000 && len(d.UnscaledBig().String()) < 500:
		return big.NewInt(1)
	}
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(max(scale, -scale)), nil)
	if scale >= 0 {
		v.Mul(v, new(big.Rat).SetInt(p))
	} else {
		v.Quo(v, new(big.Rat).SetInt(p))
	}
	n, r := new(big.Int).QuoRem(v.Num(), v.Denom(), new(big.Int))
	if r.Sign() > 0 { // ceiling of a positive value; a negative one is an error anyway
		n.Add(n, big.NewInt(1))
	}
	return n
}

// Amount is exact or an error: on any quantity apimachinery parses, it
// equals the exact amount when that lies in [0, MaxAmount] (and then
// apimachinery's MilliValue or Value, which are exact there), and is an
// error quoting the quantity otherwise, never a wrapped number.
func FuzzAmount(f *testing.F) {
	for _, s := range []string{"1", "1e16", "9e18", "999999999999999999999999999", "9223372036854775807", "1.5", "100m", "1.0001m",
		"4Gi", "8Ei", "-1", "0.1n", "9007199254740992", "9007199254740993", "9007199254740.992", "9007199254740.993", "1e-30", "123456789012345678901234567890e-20"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, milli bool) {
		if hugeExponent(s) {
			return // apimachinery's ParseQuantity works out 10^exponent: it hangs
		}
		q, err := kres.ParseQuantity(s)
		if err != nil {
			return
		}
		checkAmount(t, s, q, milli)
	})
}

// checkAmount holds Amount to exact arithmetic on one quantity, read as
// a milli-unit resource or a whole-unit one, and to apimachinery's own
// conversion where that is exact.
func checkAmount(t interface{ Fatalf(string, ...any) }, s string, q kres.Quantity, milli bool) {
	name := "memory"
	if milli {
		name = "nvidia.com/gpu"
	}
	want := exactAmount(name, q.DeepCopy())
	got, err := Amount(name, q.DeepCopy())
	inRange := want.Sign() >= 0 && want.Cmp(big.NewInt(resource.MaxAmount)) <= 0
	switch {
	case inRange && (err != nil || got != want.Int64()):
		t.Fatalf("%q as %s: %d, %v; want %v", s, name, got, err, want)
	case !inRange && err == nil:
		t.Fatalf("%q as %s: %d; want an error (exactly %v)", s, name, got, want)
	case !inRange && !strings.Contains(err.Error(), fmt.Sprintf("%q", q.String())):
		t.Fatalf("%q as %s: the error %q does not quote the quantity", s, name, err)
	}
	if inRange {
		upstream := q.Value()
		if milli {
			upstream = q.MilliValue()
		}
		if upstream != got {
			t.Fatalf("%q as %s: %d; apimachinery %d", s, name, got, upstream)
		}
	}
}

// Amount is exact on quantities as apimachinery holds them, parsed from
// strings of 1 to 25 digits with any suffix or exponent, or made from an
// int64 at any scale (the int64 form Amount converts without big
// integers, around where that stops being exact). Fails when
// resource.DecimalAmount rounds down or lets an amount past MaxAmount.
func TestAmountIsExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		milli := rapid.Bool().Draw(t, "milli")
		if rapid.Bool().Draw(t, "parsed") {
			// Up to 27 digits: an int64's worth, and up to 7 more.
			digits := strconv.FormatUint(rapid.Uint64().Draw(t, "high"), 10)
			if low := rapid.IntRange(-1, 9_999_999).Draw(t, "low"); low >= 0 {
				digits += fmt.Sprintf("%07d", low)
			}
			if at := rapid.IntRange(0, len(digits)).Draw(t, "point"); at < len(digits) {
				digits = digits[:at] + "." + digits[at:]
			}
			tail := rapid.SampledFrom([]string{"", "m", "u", "n", "k", "G", "E", "Ki", "Gi", "Ei"}).Draw(t, "suffix")
			if rapid.Bool().Draw(t, "exponent") {
				tail = "e" + strconv.Itoa(rapid.IntRange(-40, 40).Draw(t, "exp"))
			}
			s := rapid.SampledFrom([]string{"", "-"}).Draw(t, "sign") + digits + tail
			q, err := kres.ParseQuantity(s)
			if err != nil {
				t.Fatalf("%q: %v", s, err)
			}
			checkAmount(t, s, q, milli)
			return
		}
		v := rapid.OneOf(rapid.Int64Range(-1, 1<<20), rapid.Int64Range(0, 1<<60), rapid.Int64()).Draw(t, "value")
		scale := kres.Scale(rapid.IntRange(-25, 25).Draw(t, "scale"))
		q := *kres.NewScaledQuantity(v, scale)
		checkAmount(t, fmt.Sprintf("%de%d", v, scale), q, milli)
	})
}

// An extended resource in a container's requests is a whole number, as
// the API server holds it (it refuses nvidia.com/gpu: 0.5, which resfit
// read as a whole GPU); cpu and a hugepage size stay fractional, and so
// does an extended resource a pod's overhead names.
func TestExtendedResourceIsWhole(t *testing.T) {
	for _, c := range []struct {
		name, quantity, want string
	}{
		{"nvidia.com/gpu", "0.5", `pod ns/p: spec.containers[0].resources.requests[nvidia.com/gpu]: quantity "500m": an extended resource is a whole number`},
		{"example.com/dongle", "1500m", `pod ns/p: spec.containers[0].resources.requests[example.com/dongle]: quantity "1500m": an extended resource is a whole number`},
		{"nvidia.com/gpu", "2", ""},
		{"nvidia.com/gpu", "2000m", ""},
		// The API server's test is the milli-value rounded up: it takes
		// 2.9990001, whose milli-value is 3000, and refuses 2.999.
		{"nvidia.com/gpu", "2999000100n", ""},
		{"nvidia.com/gpu", "2999m", `pod ns/p: spec.containers[0].resources.requests[nvidia.com/gpu]: quantity "2999m": an extended resource is a whole number`},
		{"cpu", "0.5", ""},
		{"hugepages-2Mi", "1Mi", ""},
	} {
		p := kubetest.Pod("p", "", c.name, c.quantity)
		p.Namespace = "ns"
		_, err := PodOf(p)
		if got := fmt.Sprint(err); (c.want == "" && err != nil) || (c.want != "" && got != c.want) {
			t.Errorf("%s: %s: %v, want %q", c.name, c.quantity, err, c.want)
		}
	}
}

// A node's allocatable extended resources and pods are whole numbers, as
// the API server holds them (ValidateNodeResources; resfit read
// nvidia.com/gpu: 7.5 as 7); cpu and memory stay fractional. The
// kubescheduler module's TestNodeAmountsAreTheAPIServers holds the rule
// to kube's own validation.
func TestNodeIntegerResourceIsWhole(t *testing.T) {
	for _, c := range []struct {
		name, quantity, want string
	}{
		{"nvidia.com/gpu", "7.5", `node n: status.allocatable[nvidia.com/gpu]: quantity "7500m": an extended resource is a whole number`},
		{"pods", "110.5", `node n: status.allocatable[pods]: quantity "110500m": pods is a whole number`},
		{"nvidia.com/gpu", "8", ""},
		{"nvidia.com/gpu", "7999999999n", ""},
		{"pods", "109999000001n", ""},
		{"pods", "109999m", `node n: status.allocatable[pods]: quantity "109999m": pods is a whole number`},
		{"cpu", "7.5", ""},
		{"memory", "1.5Gi", ""},
	} {
		node := kubetest.Node("n", c.name, c.quantity)
		schema, err := resource.SchemaOf(map[string]string{c.name: "node n"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Allocatable(schema, node)
		if got := fmt.Sprint(err); (c.want == "" && err != nil) || (c.want != "" && got != c.want) {
			t.Errorf("%s: %s: %v, want %q", c.name, c.quantity, err, c.want)
		}
	}
}
