package frag

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/resfit/resfit/resource"
)

// Histogram learns a workload's typical classes from the tasks a host
// places: each task's class (its cpu request, device request, accepted
// models and type of part) gains weight 1, and every weight halves every
// HalfLife tasks, so the histogram follows a workload that changes; at
// most MaxClasses classes are kept, the lightest dropped to make room for
// a new one.
// Classes gives them with their shares, which sum to 1: FGD's classes and
// popularities, as the ATC'23 paper computes them from a whole trace.
//
// The decay costs nothing per task: instead of shrinking every weight, each
// task's weight grows by the inverse factor, and all are divided back down
// before they could overflow. A Histogram is safe for concurrent use.
type Histogram struct {
	mu       sync.Mutex
	max      int
	growth   float64 // the next task's weight over this one's: 2^(1/halfLife)
	step     float64 // the next task's weight, in stored units
	weights  map[histKey]float64
	observed int64
}

type histKey struct {
	cpu       int64
	req       resource.DeviceRequest
	models    resource.ModelSet
	partition string
}

// NewHistogram returns an empty histogram of at most maxClasses classes
// (1 to 4096) whose weights halve every halfLife tasks (at least 1).
func NewHistogram(maxClasses int, halfLife float64) (*Histogram, error) {
	if maxClasses < 1 || maxClasses > 4096 {
		return nil, fmt.Errorf("frag: a histogram keeps 1 to 4096 classes, got %d", maxClasses)
	}
	if !(halfLife >= 1 && halfLife <= math.MaxInt32) {
		return nil, fmt.Errorf("frag: a histogram's half-life must be in [1, 2^31) tasks, got %v", halfLife)
	}
	return &Histogram{max: maxClasses, growth: math.Exp2(1 / halfLife), step: 1, weights: map[histKey]float64{}}, nil
}

// Observe counts one task's class (its Weight is ignored), after every
// earlier one's weight has decayed by one task.
func (h *Histogram) Observe(c Class) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.step *= h.growth
	if h.step > 1<<500 { // divide everything back down long before overflow
		for k, w := range h.weights {
			h.weights[k] = w / h.step
		}
		h.step = 1
	}
	h.add(c, h.step)
	h.observed++
}

// Seed counts a class as weight tasks observed just now, as a
// configuration's given classes start a histogram off.
func (h *Histogram) Seed(c Class) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.add(c, c.Weight*h.step)
}

// add adds a weight to a class, making room for a new one.
func (h *Histogram) add(c Class, w float64) {
	k := histKey{cpu: c.CPU, req: c.Devices, models: c.Models, partition: c.Partition}
	if _, ok := h.weights[k]; !ok && len(h.weights) >= h.max {
		light := h.order()[len(h.weights)-1]
		delete(h.weights, light)
	}
	h.weights[k] += w
}

// order is the classes heaviest first, ties in the order of their keys.
func (h *Histogram) order() []histKey {
	keys := make([]histKey, 0, len(h.weights))
	for k := range h.weights {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b histKey) int {
		return cmp.Or(cmp.Compare(h.weights[b], h.weights[a]), cmp.Compare(a.cpu, b.cpu), cmp.Compare(a.req.Count, b.req.Count),
			cmp.Compare(a.req.Each, b.req.Each), cmp.Compare(a.models, b.models), cmp.Compare(a.partition, b.partition))
	})
	return keys
}

// Classes returns the classes kept, heaviest first, with their shares (each
// class's weight over all of them; they sum to 1 up to rounding); nil when
// none has been counted.
func (h *Histogram) Classes() []Class {
	h.mu.Lock()
	defer h.mu.Unlock()
	total := 0.0
	for _, w := range h.weights {
		total += w
	}
	if !(total > 0) {
		return nil
	}
	var out []Class
	for _, k := range h.order() {
		out = append(out, Class{CPU: k.cpu, Devices: k.req, Models: k.models, Partition: k.partition, Weight: h.weights[k] / total})
	}
	return out
}

// Observed counts the tasks observed.
func (h *Histogram) Observed() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.observed
}
