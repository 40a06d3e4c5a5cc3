package dra

import (
	"math/big"

	kres "k8s.io/apimachinery/pkg/api/resource"

	"github.com/resfit/resfit/resource"
)

// ratOf is a quantity as an exact rational.
func ratOf(q kres.Quantity) *big.Rat {
	dec := q.AsDec()
	r := new(big.Rat).SetInt(dec.UnscaledBig())
	pow := func(n int64) *big.Rat {
		return new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(n), nil))
	}
	if scale := int64(dec.Scale()); scale < 0 {
		return r.Mul(r, pow(-scale))
	}
	return r.Quo(r, pow(int64(dec.Scale())))
}

// ratOne and ratZero are the shares left of a unit nothing uses and of one
// in use whole: left and unitLeft return them, read-only, instead of a new
// Rat for each device.
var ratOne, ratZero = big.NewRat(1, 1), new(big.Rat)

// left is the share of a whole that is left once used of it is consumed,
// in [0, 1]; a whole of 0, or nothing used, leaves all of it. The Rat
// returned may be shared: it is not to be changed.
func left(whole, used *big.Rat) *big.Rat {
	if whole.Sign() <= 0 || used == nil {
		return ratOne
	}
	l := new(big.Rat).Sub(whole, used)
	l.Quo(l, whole)
	switch {
	case l.Sign() < 0:
		return ratZero
	case l.Cmp(ratOne) > 0:
		return ratOne
	}
	return l
}

// lcm is the least common multiple of two positive integers.
func lcm(a, b *big.Int) *big.Int {
	g := new(big.Int).GCD(nil, nil, a, b)
	return new(big.Int).Mul(a, new(big.Int).Quo(b, g))
}

// scaled is r × m as a whole number in [0, resource.MaxAmount] (rounded
// down), and whether it is one.
func scaled(r *big.Rat, m *big.Int) (int64, bool) {
	v := new(big.Rat).Mul(r, new(big.Rat).SetInt(m))
	q := new(big.Int).Quo(v.Num(), v.Denom())
	if q.Sign() < 0 || !q.IsInt64() || q.Int64() > resource.MaxAmount {
		return 0, false
	}
	return q.Int64(), true
}

// floorTimes is ⌊l·n⌋ for a share l of a unit (in [0, 1], n a unit's
// amount): scaled's answer, with no big arithmetic for all of it or none
// (most devices).
func floorTimes(l *big.Rat, n int64) int64 {
	if l.IsInt() {
		return l.Num().Int64() * n
	}
	v, _ := scaled(l, big.NewInt(n))
	return v
}
