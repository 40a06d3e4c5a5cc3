package scoring

import (
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/strategy"
)

// Task is what is being placed: a pod, or one task of a batch job.
type Task struct {
	Name string
	// Job is the job (pod group) the task belongs to; a reservation lets
	// only the target job's tasks onto the nodes it locks.
	Job string
	// Requests are the task's requests in canonical units, one per schema
	// slot (see resource.PodRequests).
	Requests resource.Vector
	// NonZeroRequests are the requests with kube-scheduler's non-zero
	// defaults (resource.PodRequests with nonZero), which the kube-scheduler
	// scorers use; nil means Requests.
	NonZeroRequests resource.Vector
	// KoordinatorRequests are the non-zero requests summed by Koordinator's
	// rule (resource.KoordinatorPodRequests), which NodeResourcesFitPlus
	// scores; nil means NonZeroRequests. The two differ only for pods with
	// init containers after a sidecar, pod-level requests or overhead.
	KoordinatorRequests resource.Vector
	// Override is a Volcano per-task strategy (pod annotations); nil means
	// the configured one.
	Override *strategy.Override
	// Devices is what the task asks of individual devices (a share of one
	// GPU, or whole GPUs), checked by a DeviceFilter; the zero value asks
	// for nothing. Requests still carries the total in the resource's slot.
	Devices resource.DeviceRequest
	// Models are the device models the task's devices may be (a
	// DeviceFilter rejects a node of another model, FGD counts such a
	// node's idle devices as fragment for it); empty accepts any.
	Models resource.ModelSet
}

func (t *Task) nonZero() resource.Vector {
	if t.NonZeroRequests != nil {
		return t.NonZeroRequests
	}
	return t.Requests
}

func (t *Task) koordinator() resource.Vector {
	if t.KoordinatorRequests != nil {
		return t.KoordinatorRequests
	}
	return t.nonZero()
}
