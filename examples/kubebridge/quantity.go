package kubebridge

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"

	"github.com/resfit/resfit/resource"
)

// Amount converts a Kubernetes quantity to resfit's canonical unit for the
// named resource: millicores for cpu, milli-units for extended resources,
// whole units (bytes) otherwise, rounded up as apimachinery rounds. It is
// exact: a negative quantity, or one above resource.MaxAmount in that unit,
// is an error that quotes it (apimachinery's MilliValue and Value wrap
// silently past int64: a request of "1e16" GPUs would read as none).
func Amount(name string, q kres.Quantity) (int64, error) {
	// Written as digits and a power of ten (without allocating, for the
	// quantities a cluster holds), most amounts convert in int64
	// arithmetic; what that cannot do exactly, the big integers below do.
	var buf [24]byte
	digits, exp := q.AsCanonicalBytes(buf[:0])
	if v, ok := resource.DecimalAmount(name, digits, int(exp)); ok {
		return v, nil
	}
	d := q.AsDec()
	// d is unscaled × 10^-scale, exactly: written back as a quantity in
	// exponent form, resource.ParseAmount converts it with big integers.
	text := d.UnscaledBig().String() + "e" + strconv.FormatInt(-int64(d.Scale()), 10)
	v, err := resource.ParseAmount(name, text)
	if err != nil {
		var qe *resource.QuantityError
		if errors.As(err, &qe) {
			return 0, fmt.Errorf("quantity %q: %s", q.String(), qe.Reason)
		}
		return 0, err
	}
	return v, nil
}

// fieldAmount is Amount for the quantity of a resource in a resource list
// at a field path (spec.containers[0].resources.requests), the error
// naming the path and the resource.
func fieldAmount(path string, name v1.ResourceName, q kres.Quantity) (int64, error) {
	v, err := Amount(string(name), q)
	if err != nil {
		return 0, fmt.Errorf("%s[%s]: %w", path, name, err)
	}
	if strings.Contains(path, "containers[") && extendedResource(string(name)) && !wholeNumber(q) {
		// The API server refuses it in a container's requests and limits.
		return 0, fmt.Errorf("%s[%s]: quantity %q: an extended resource is a whole number", path, name, q.String())
	}
	if strings.HasPrefix(path, "status.allocatable") && (extendedResource(string(name)) || name == v1.ResourcePods) && !wholeNumber(q) {
		// The API server refuses it in a node's capacity and allocatable
		// (ValidateNodeResources: an integer resource).
		what := "an extended resource"
		if name == v1.ResourcePods {
			what = "pods"
		}
		return 0, fmt.Errorf("%s[%s]: quantity %q: %s is a whole number", path, name, q.String(), what)
	}
	return v, nil
}

// SchedulerAmount is a quantity in the unit kube-scheduler counts its resource
// in: millicores for cpu, else the value rounded up; past MaxAmount it
// counts as MaxAmount, so that sums of a few do not wrap.
func SchedulerAmount(name v1.ResourceName, q kres.Quantity) int64 {
	v := q.Value()
	if name == v1.ResourceCPU {
		v = q.MilliValue()
	}
	if q.Cmp(*kres.NewQuantity(resource.MaxAmount, kres.DecimalSI)) > 0 || v > resource.MaxAmount || v < 0 {
		return resource.MaxAmount
	}
	return v
}

// extendedResource reports a name the API server takes for an extended
// resource (v1helper.IsExtendedResourceName): one outside kubernetes.io,
// with a domain, not a quota's requests.*.
func extendedResource(name string) bool {
	return strings.Contains(name, "/") && !strings.Contains(name, "kubernetes.io/") && !strings.HasPrefix(name, "requests.")
}

// wholeNumber reports a quantity the API server takes for an integer
// (validation.ValidateResourceQuantityValue): its milli-value, rounded up,
// is a multiple of 1000. So "2999000100n" is whole (its milli-value is
// 3000, and resfit reads it as 3), while "2999m" is not. The caller has
// read q with Amount, so its milli-value does not wrap.
func wholeNumber(q kres.Quantity) bool {
	return q.MilliValue()%1000 == 0
}
