package dra

import (
	"fmt"

	resourcev1 "k8s.io/api/resource/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
)

// checkCounters checks a pool's counter sets and what its devices
// consume from them: every counter set named once in the pool, no
// counter negative, and, in a pool whose slices are all listed
// (complete), every device consuming only counters its pool's sets
// define (in one that is not, the allocator uses none of its devices).
func checkCounters(pool []*resourcev1.ResourceSlice, complete bool) error {
	sets := map[string]map[string]bool{}
	where := map[string]string{}
	for _, s := range pool {
		for i, set := range s.Spec.SharedCounters {
			field := fmt.Sprintf("resourceslice %s: spec.sharedCounters[%d]", s.Name, i)
			if set.Name == "" {
				return fmt.Errorf("%s.name: empty", field)
			}
			if other, dup := where[set.Name]; dup {
				return fmt.Errorf("%s.name: counter set %q is resourceslice %s's too", field, set.Name, other)
			}
			where[set.Name] = s.Name
			sets[set.Name] = map[string]bool{}
			for name, c := range set.Counters {
				if c.Value.Sign() < 0 {
					return fmt.Errorf("%s.counters[%s].value: %s is negative", field, name, c.Value.String())
				}
				sets[set.Name][name] = true
			}
		}
	}
	for _, s := range pool {
		for i, dev := range s.Spec.Devices {
			for j, use := range dev.ConsumesCounters {
				field := fmt.Sprintf("resourceslice %s: spec.devices[%d].consumesCounters[%d]", s.Name, i, j)
				set, ok := sets[use.CounterSet]
				if !ok && complete {
					return fmt.Errorf("%s.counterSet: no counter set %q in pool %s", field, use.CounterSet, s.Spec.Pool.Name)
				}
				for name, c := range use.Counters {
					if ok && !set[name] {
						return fmt.Errorf("%s.counters[%s]: counter set %q has no such counter", field, name, use.CounterSet)
					}
					if c.Value.Sign() < 0 {
						return fmt.Errorf("%s.counters[%s].value: %s is negative", field, name, c.Value.String())
					}
				}
			}
		}
	}
	return nil
}

// maxValidValues is the most valid values a capacity's request policy
// has, as the API validates it (k8s.io/kubernetes/pkg/apis/resource's
// CapacityRequestPolicyDiscreteMaxOptions).
const maxValidValues = 10

// checkCapacity checks a device's capacities and their request policies:
// no value negative; a policy's default, valid values and range within
// the capacity, at most 10 valid values (the API's
// CapacityRequestPolicyDiscreteMaxOptions) in strictly ascending order, the range's minimum at most its maximum, its step
// positive, and the default one of the valid values or in the range.
func checkCapacity(s *resourcev1.ResourceSlice, i int, dev resourcev1.Device) error {
	for name, c := range dev.Capacity {
		field := fmt.Sprintf("resourceslice %s: spec.devices[%d].capacity[%s]", s.Name, i, name)
		if c.Value.Sign() < 0 {
			return fmt.Errorf("%s.value: %s is negative", field, c.Value.String())
		}
		p := c.RequestPolicy
		if p == nil {
			continue
		}
		within := func(f string, q *kres.Quantity) error {
			if q == nil {
				return nil
			}
			if q.Sign() < 0 || q.Cmp(c.Value) > 0 {
				return fmt.Errorf("%s.requestPolicy.%s: %s is not within 0 and the capacity's value %s", field, f, q.String(), c.Value.String())
			}
			return nil
		}
		if err := within("default", p.Default); err != nil {
			return err
		}
		if len(p.ValidValues) > maxValidValues {
			return fmt.Errorf("%s.requestPolicy.validValues: %d values, more than the API's %d", field, len(p.ValidValues), maxValidValues)
		}
		for k := range p.ValidValues {
			if err := within(fmt.Sprintf("validValues[%d]", k), &p.ValidValues[k]); err != nil {
				return err
			}
			// kube's allocator takes the first value at or above a request:
			// out of order, a request would take more than it needs.
			if k > 0 && p.ValidValues[k].Cmp(p.ValidValues[k-1]) <= 0 {
				return fmt.Errorf("%s.requestPolicy.validValues[%d]: %s after %s: values must be strictly ascending", field, k, p.ValidValues[k].String(), p.ValidValues[k-1].String())
			}
		}
		if r := p.ValidRange; r != nil {
			if p.ValidValues != nil {
				return fmt.Errorf("%s.requestPolicy: both validValues and validRange", field)
			}
			for f, q := range map[string]*kres.Quantity{"min": r.Min, "max": r.Max} {
				if err := within("validRange."+f, q); err != nil {
					return err
				}
			}
			if r.Min == nil {
				return fmt.Errorf("%s.requestPolicy.validRange.min: missing", field)
			}
			if r.Max != nil && r.Min.Cmp(*r.Max) > 0 {
				return fmt.Errorf("%s.requestPolicy.validRange: min %s is above max %s", field, r.Min.String(), r.Max.String())
			}
			if r.Step != nil && r.Step.Sign() <= 0 {
				return fmt.Errorf("%s.requestPolicy.validRange.step: %s is not positive", field, r.Step.String())
			}
			if d := p.Default; d != nil && (d.Cmp(*r.Min) < 0 || (r.Max != nil && d.Cmp(*r.Max) > 0)) {
				return fmt.Errorf("%s.requestPolicy.default: %s is outside validRange", field, d.String())
			}
		}
		if len(p.ValidValues) > 0 && p.Default != nil {
			found := false
			for _, v := range p.ValidValues {
				found = found || v.Cmp(*p.Default) == 0
			}
			if !found {
				return fmt.Errorf("%s.requestPolicy.default: %s is not one of validValues", field, p.Default.String())
			}
		}
	}
	return nil
}

// checkConsumed checks what an allocation result says a share consumed:
// no quantity negative, and a share ID not empty where set.
func checkConsumed(key, field string, r resourcev1.DeviceRequestAllocationResult) error {
	if r.ShareID != nil && *r.ShareID == "" {
		return fmt.Errorf("resourceclaim %s: %s.shareID: empty", key, field)
	}
	for name, q := range r.ConsumedCapacity {
		if q.Sign() < 0 {
			return fmt.Errorf("resourceclaim %s: %s.consumedCapacity[%s]: %s is negative", key, field, name, q.String())
		}
	}
	return nil
}
