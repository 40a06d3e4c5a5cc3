package churn

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/resfit/resfit/bench/replay/sim"
)

// Size classes of pods, for lifetimes and waiting times.
const (
	SizeCPU = iota
	SizeShare
	Size1
	Size2
	Size4
	Size8
	SizeOther
	numSizes
)

// SizeNames name the size classes.
var SizeNames = [numSizes]string{"cpu", "share", "1 GPU", "2 GPUs", "4 GPUs", "8 GPUs", "other"}

// SizeOf is a pod's size class.
func SizeOf(p sim.Pod) int {
	switch {
	case p.NumGPU == 0:
		return SizeCPU
	case p.Shared():
		return SizeShare
	case p.NumGPU == 1:
		return Size1
	case p.NumGPU == 2:
		return Size2
	case p.NumGPU == 4:
		return Size4
	case p.NumGPU == 8:
		return Size8
	}
	return SizeOther
}

// lifetimeClass is the class of lifetimes a pod draws from: its size, the
// pods of more than one GPU together.
func lifetimeClass(p sim.Pod) int {
	if s := SizeOf(p); s <= Size1 {
		return s
	}
	return Size2
}

// Lifetimes are a pod list's lifetimes by lifetime class, in seconds,
// ascending; Pods the list's pods, by name.
type Lifetimes struct {
	byClass [Size2 + 1][]float64
	pods    []sim.Pod
	// gpuLife is E[GPUs × lifetime] over a drawn pod (in milli-GPU
	// seconds), life E[lifetime].
	gpuLife, life float64
	// ofClass are the pods of each lifetime class, and weight each class's
	// share of the steady state's pods: its pods' count × its mean
	// lifetime.
	ofClass [Size2 + 1][]int
	cum     [Size2 + 1][]float64 // each class's lifetimes summed, for length-biased draws
}

// NewLifetimes reads the lifetimes of a pod list: every class that has
// pods must have some that ran.
func NewLifetimes(pods []sim.Pod) (*Lifetimes, error) { return newLifetimes(pods, 0) }

// newLifetimes reads the lifetimes of a pod list; with resample ≠ 0 the
// multi-GPU class's are a bootstrap resample of them (as many, drawn with
// replacement, by a generator seeded with resample).
func newLifetimes(pods []sim.Pod, resample uint64) (*Lifetimes, error) {
	l := &Lifetimes{pods: slices.Clone(pods)}
	slices.SortStableFunc(l.pods, func(a, b sim.Pod) int { return cmp.Compare(a.Name, b.Name) })
	for i, p := range l.pods {
		c := lifetimeClass(p)
		l.ofClass[c] = append(l.ofClass[c], i)
		if p.Lifetime >= 0 {
			l.byClass[c] = append(l.byClass[c], float64(p.Lifetime))
		}
	}
	if len(l.pods) == 0 {
		return nil, errors.New("churn: no pods")
	}
	if multi := l.byClass[Size2]; resample != 0 && len(multi) > 0 {
		rng := rand.New(rand.NewPCG(resample, 0x626f6f74))
		drawn := make([]float64, len(multi))
		for i := range drawn {
			drawn[i] = multi[rng.IntN(len(multi))]
		}
		l.byClass[Size2] = drawn
	}
	for c := range l.byClass {
		if len(l.ofClass[c]) > 0 && len(l.byClass[c]) == 0 {
			return nil, fmt.Errorf("churn: no %s pod of the list ran, so none has a lifetime to draw", lifetimeClassName(c))
		}
		slices.Sort(l.byClass[c])
		sum := 0.0
		l.cum[c] = make([]float64, len(l.byClass[c]))
		for i, x := range l.byClass[c] {
			sum += x
			l.cum[c][i] = sum
		}
	}
	n := float64(len(l.pods))
	for _, p := range l.pods {
		mean := l.Mean(lifetimeClass(p))
		l.life += mean / n
		l.gpuLife += float64(p.TotalMilliGPU()) * mean / n
	}
	if !(l.gpuLife > 0) {
		return nil, errors.New("churn: the pods ask for no GPU time, so no arrival rate gives a GPU load")
	}
	return l, nil
}

func lifetimeClassName(c int) string {
	if c == Size2 {
		return "multi-GPU"
	}
	return SizeNames[c]
}

// Class is a lifetime class's lifetimes, ascending (a view: read it).
func (l *Lifetimes) Class(c int) []float64 { return l.byClass[c] }

// Mean is a lifetime class's mean lifetime, in seconds.
func (l *Lifetimes) Mean(c int) float64 {
	if len(l.cum[c]) == 0 {
		return 0
	}
	return l.cum[c][len(l.cum[c])-1] / float64(len(l.cum[c]))
}

// Rate is the arrival rate, in pods per second, that offers load × the
// capacity (milli-GPU) in GPU time: load × capacity / E[GPUs × lifetime].
func (l *Lifetimes) Rate(load float64, capacityMilliGPU int64) float64 {
	return load * float64(capacityMilliGPU) / l.gpuLife
}

// draw is an arriving pod: a pod of the list at random, with a lifetime
// drawn from its class's.
func (l *Lifetimes) draw(rng *rand.Rand) (sim.Pod, float64) {
	p := l.pods[rng.IntN(len(l.pods))]
	life := l.byClass[lifetimeClass(p)]
	return p, life[rng.IntN(len(life))]
}

// drawAlive is a pod alive in the steady state of an unbounded cluster: a
// class by its share of the pods alive (its pods' count × mean lifetime),
// a lifetime of it length-biased (by its length), a pod of the class at
// random, and its age, uniform over its lifetime.
func (l *Lifetimes) drawAlive(rng *rand.Rand) (p sim.Pod, life, age float64) {
	var weights [Size2 + 1]float64
	total := 0.0
	for c := range weights {
		weights[c] = float64(len(l.ofClass[c])) * l.Mean(c)
		total += weights[c]
	}
	x := rng.Float64() * total
	c := 0
	for c < len(weights)-1 && (x >= weights[c] || weights[c] == 0) {
		x -= weights[c]
		c++
	}
	cum := l.cum[c]
	k, _ := slices.BinarySearch(cum, rng.Float64()*cum[len(cum)-1])
	life = l.byClass[c][min(k, len(cum)-1)]
	p = l.pods[l.ofClass[c][rng.IntN(len(l.ofClass[c]))]]
	return p, life, rng.Float64() * life
}

// poisson is the steady state's pods alive at time 0 (their count λ ×
// E[lifetime], rounded) and the arrivals after it, at rate λ (Rate).
func poisson(l *Lifetimes, load float64, capacity int64, seed uint64) ([]arrival, func() (arrival, bool)) {
	rate := l.Rate(load, capacity)
	rng := rand.New(rand.NewPCG(seed, 0x636875726e))
	alive := make([]arrival, int(math.Round(rate*l.life)))
	for i := range alive {
		p, life, age := l.drawAlive(rng)
		alive[i] = arrival{pod: p, at: -age, life: life}
	}
	slices.SortStableFunc(alive, func(a, b arrival) int { return cmp.Compare(a.at, b.at) })
	t := 0.0
	return alive, func() (arrival, bool) {
		t += rng.ExpFloat64() / rate
		p, life := l.draw(rng)
		return arrival{pod: p, at: t, life: life}, true
	}
}
