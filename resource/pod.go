package resource

import (
	"fmt"
	"strings"
)

// The requests kube-scheduler assumes for a container that sets no cpu or
// memory request, when it scores with NodeResourcesFit (its "non-zero"
// requests): 100 millicores and 200 MiB.
const (
	DefaultMilliCPURequest int64 = 100
	DefaultMemoryRequest   int64 = 200 << 20
)

// Container is one container's requests in canonical units. A name that is
// absent was not set; a name present with 0 was set to zero, which matters
// for the non-zero defaults.
type Container struct {
	Requests map[string]int64
	// Sidecar marks an init container with restartPolicy Always: it runs
	// alongside the main containers.
	Sidecar bool
}

// Pod is what a pod's effective request is computed from. Every amount
// must be in [0, MaxAmount], and so must every sum the request rules form;
// PodRequests and KoordinatorPodRequests report the first that is not.
type Pod struct {
	Containers     []Container
	InitContainers []Container
	// PodLevel holds pod-level requests (spec.resources.requests); where set
	// for cpu, memory or hugepages-*, they replace the containers' sum.
	PodLevel map[string]int64
	// Overhead is the RuntimeClass overhead, added last.
	Overhead map[string]int64
}

// PodRequests computes a pod's effective request the way Kubernetes does
// (k8s.io/component-helpers resource.PodRequests): the larger of the main
// containers plus sidecars, and each regular init container plus the
// sidecars started before it; then pod-level requests; then overhead.
//
// With nonZero, a container (init containers included) that does not set cpu
// or memory counts as requesting DefaultMilliCPURequest and
// DefaultMemoryRequest, as kube-scheduler's NodeResourcesFit does when
// scoring; BalancedAllocation and the Fit filter use nonZero = false.
// Koordinator's NodeResourcesFitPlus sums the same containers by another
// rule: see KoordinatorPodRequests.
func PodRequests(schema *Schema, pod Pod, nonZero bool) (Vector, error) {
	n := schema.Len()
	buf := make(Vector, 4*n)
	return podRequests(schema, pod, nonZero, buf[:n:n], buf[n:])
}

// podRequests is PodRequests into result (zeroed, the schema's length),
// with scratch of three times that length.
func podRequests(schema *Schema, pod Pod, nonZero bool, result, scratch Vector) (Vector, error) {
	n := schema.Len()
	s := requestSum{schema: schema, nonZero: nonZero, result: result, step: scratch[:n:n]}
	if err := s.containers(pod); err != nil {
		return nil, err
	}
	initMax, sidecars := scratch[n:2*n:2*n], scratch[2*n:3*n:3*n]
	clear(initMax)
	clear(sidecars)
	for i, c := range pod.InitContainers {
		where, err := s.initContainer(i, c)
		if err != nil {
			return nil, err
		}
		if c.Sidecar {
			if err := s.sum(s.result, s.step, where); err != nil {
				return nil, err
			}
			if err := s.sum(sidecars, s.step, where); err != nil {
				return nil, err
			}
			maxInto(initMax, sidecars)
		} else {
			if err := s.sum(s.step, sidecars, where); err != nil {
				return nil, err
			}
			maxInto(initMax, s.step)
		}
	}
	maxInto(s.result, initMax)
	for name, amount := range pod.PodLevel {
		if name != CPU && name != Memory && !strings.HasPrefix(name, "hugepages-") {
			continue
		}
		i, ok := schema.Slot(name)
		if !ok {
			continue
		}
		if err := checkAmount(place{"pod-level requests", -1}, name, amount); err != nil {
			return nil, err
		}
		s.result[i] = amount
	}
	if err := s.overhead(pod.Overhead); err != nil {
		return nil, err
	}
	return s.result, nil
}

// KoordinatorPodRequests computes a pod's non-zero request the way
// Koordinator's NodeResourcesFitPlus does (calculatePodResourceRequest in
// pkg/scheduler/plugins/noderesourcefitplus), which is not kube's rule:
//
//   - the main containers are summed, each with the non-zero defaults;
//   - the init containers are then walked in spec order: a sidecar adds to
//     the running total, a regular init container raises it to its own
//     request when that is larger, max(total, request);
//   - pod-level requests are not read;
//   - overhead is added.
//
// So containers of 2 cores, then a sidecar of 1, then an init container of
// 5 request 5 cores (kube: 6), and init 5 then sidecar 1 request 6.
//
// On overhead the upstream code cannot be followed: it adds overhead only
// when a feature gate named PodOverhead is on, and Kubernetes removed that
// gate (PodOverhead went GA in 1.24), so the check panics and Koordinator
// cannot score a pod with overhead at all. resfit adds the overhead in
// canonical units, as kube-scheduler does.
//
// Which resources NodeResourcesFitPlus scores is decided by kube's plain
// request (PodRequests with nonZero false); these are the amounts it then
// scores.
func KoordinatorPodRequests(schema *Schema, pod Pod) (Vector, error) {
	n := schema.Len()
	buf := make(Vector, 2*n)
	return koordinatorPodRequests(schema, pod, buf[:n:n], buf[n:])
}

// koordinatorPodRequests is KoordinatorPodRequests into result (zeroed,
// the schema's length), with scratch of that length.
func koordinatorPodRequests(schema *Schema, pod Pod, result, scratch Vector) (Vector, error) {
	s := requestSum{schema: schema, nonZero: true, result: result, step: scratch[:schema.Len()]}
	if err := s.containers(pod); err != nil {
		return nil, err
	}
	for i, c := range pod.InitContainers {
		where, err := s.initContainer(i, c)
		if err != nil {
			return nil, err
		}
		if c.Sidecar {
			if err := s.sum(s.result, s.step, where); err != nil {
				return nil, err
			}
			continue
		}
		maxInto(s.result, s.step)
	}
	if err := s.overhead(pod.Overhead); err != nil {
		return nil, err
	}
	return s.result, nil
}

// requestSum adds containers' requests into vectors of one schema, checking
// every amount and every sum against MaxAmount.
type requestSum struct {
	schema       *Schema
	nonZero      bool
	result, step Vector
}

// containers starts a sum with the pod's main containers in result.
func (s *requestSum) containers(pod Pod) error {
	for i, c := range pod.Containers {
		if err := s.add(s.result, c, place{"containers", i}); err != nil {
			return err
		}
	}
	return nil
}

// initContainer sets step to init container i's request and returns where
// it is, for messages.
func (s *requestSum) initContainer(i int, c Container) (place, error) {
	where := place{"initContainers", i}
	clear(s.step)
	return where, s.add(s.step, c, where)
}

// add adds one container's requests (with the non-zero defaults, when
// asked) into dst.
func (s *requestSum) add(dst Vector, c Container, where place) error {
	for name, amount := range c.Requests {
		i, ok := s.schema.Slot(name)
		if !ok {
			return fmt.Errorf("%s: resource %q is not in the schema", where, name)
		}
		if err := checkAmount(where, name, amount); err != nil {
			return err
		}
		if err := s.addAt(dst, i, amount, where); err != nil {
			return err
		}
	}
	if !s.nonZero {
		return nil
	}
	for _, d := range [...]struct {
		name   string
		amount int64
	}{{CPU, DefaultMilliCPURequest}, {Memory, DefaultMemoryRequest}} {
		if _, set := c.Requests[d.name]; set {
			continue
		}
		if i, ok := s.schema.Slot(d.name); ok {
			if err := s.addAt(dst, i, d.amount, where); err != nil {
				return err
			}
		}
	}
	return nil
}

// sum adds v into dst slot by slot.
func (s *requestSum) sum(dst, v Vector, where place) error {
	for i, amount := range v {
		if err := s.addAt(dst, i, amount, where); err != nil {
			return err
		}
	}
	return nil
}

// addAt adds amount (in [0, MaxAmount]) to dst[i] (also in range), which
// cannot overflow int64, and reports a sum above MaxAmount.
func (s *requestSum) addAt(dst Vector, i int, amount int64, where place) error {
	dst[i] += amount
	if dst[i] > MaxAmount {
		return fmt.Errorf("%s: the pod's %s request sums to more than the largest amount, 2^53", where, s.schema.Name(i))
	}
	return nil
}

func (s *requestSum) overhead(overhead map[string]int64) error {
	for name, amount := range overhead {
		i, ok := s.schema.Slot(name)
		if !ok {
			return fmt.Errorf("overhead: resource %q is not in the schema", name)
		}
		if err := checkAmount(overheadPlace, name, amount); err != nil {
			return err
		}
		if err := s.addAt(s.result, i, amount, overheadPlace); err != nil {
			return err
		}
	}
	return nil
}

func checkAmount(where place, name string, amount int64) error {
	if amount < 0 || amount > MaxAmount {
		return fmt.Errorf("%s: %s amount %d is outside [0, 2^53]", where, name, amount)
	}
	return nil
}

// place is where in a pod an amount is, for messages: a list and, when
// it is a container's, the container's index (else -1). It is written
// out only for an error.
type place struct {
	list  string
	index int
}

var overheadPlace = place{"overhead", -1}

func (p place) String() string {
	if p.index < 0 {
		return p.list
	}
	return fmt.Sprintf("%s[%d]", p.list, p.index)
}

func maxInto(dst, v Vector) {
	for i := range dst {
		dst[i] = max(dst[i], v[i])
	}
}
