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
	// OverrideErr says why Override is strategy.ZeroOverride: the task's
	// Volcano annotations are there but unusable (strategy.VolcanoOverride's
	// error, naming the annotation); nil when they are usable or absent.
	// Hosts say it where the pipeline reads them (Pipeline.OverrideError).
	OverrideErr error
	// Devices is what the task asks of individual devices (a share of one
	// GPU, or whole GPUs), checked by a DeviceFilter; the zero value asks
	// for nothing. Requests still carries the total in the resource's slot.
	Devices resource.DeviceRequest
	// Models are the device models the task's devices may be (a
	// DeviceFilter rejects a node of another model, FGD counts such a
	// node's idle devices as fragment for it); empty accepts any.
	Models resource.ModelSet
	// Ends is when the task is expected to end, in seconds on the clock of
	// the host's lifetime view (scoring/lifetime: what it declares, or what
	// was learned of tasks like it); 0 when nothing is known. Only a
	// lifetime scorer reads it.
	Ends float64
	// EndsLearned says Ends was learned of tasks like it (or guessed from
	// how long it has run), not declared: a lifetime scorer may weigh the
	// two apart (lifetime.NewScorerFor).
	EndsLearned bool
	// Partition is the type of part each of the task's devices is, when
	// its devices divide into parts (resource.Layout), such as a MIG
	// profile (3g.40gb): a device whose layout has a part of that type that
	// its counters left can take fits it (resource.Devices.FitsPart), a
	// device without a layout never does. Devices still says how much of a
	// device the part is. Empty for a share of a device or whole devices.
	Partition string
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

// TaskOptions say how NewTask reads a pod's devices and device models.
type TaskOptions struct {
	// Devices names the device resource whose requests fill Task.Devices
	// (resource.DeviceRequestOf), such as nvidia.com/gpu; empty leaves
	// Task.Devices empty.
	Devices string
	// Models are the device models of the cluster's nodes
	// (resource.NodeModel of their labels; none is none): a task that asks
	// for devices accepts those its annotations leave
	// (resource.AcceptedModels), and an unusable annotation is NewTask's
	// error. A task that asks for no device accepts any model.
	Models []string
}

// NewTask is the host-neutral half of turning a pod into a task over a
// schema, which every host calls (kubebridge.NewTask for a v1.Pod): the
// task's name and job as the host names them; its requests by every rule
// (resource.RequestsOf of the pod's containers); Volcano's scoring
// annotations (strategy.VolcanoOverride; an unusable pair scores the task
// 0 on every node, as Volcano does, and Task.OverrideErr says why); with opts.Devices what it asks of
// individual devices (its request for the device resource is then their
// total: a share of a device asks for the share, as a host that holds the
// resource as its device view counts it; its requests of HAMi's share
// resources, resource.HAMiShareResources, which say how big the share is
// and which no node offers, are left out, as HAMi has kube-scheduler
// ignore them) and the device models it accepts among opts.Models.
// Requests the schema cannot hold and unusable model annotations are
// errors, which the host prefixes with the object's name.
func NewTask(schema *resource.Schema, name, job string, pod resource.Pod, annotations map[string]string, opts TaskOptions) (*Task, error) {
	r, err := resource.RequestsOf(schema, pod)
	if err != nil {
		return nil, err
	}
	t := &Task{Name: name, Job: job, Requests: r.Plain, NonZeroRequests: r.NonZero, KoordinatorRequests: r.Koordinator}
	if t.Override, err = strategy.VolcanoOverride(schema, annotations); err != nil {
		t.Override, t.OverrideErr = strategy.ZeroOverride(), err
	}
	if opts.Devices != "" {
		t.Devices = resource.DeviceRequestOf(pod, opts.Devices)
		// A share of a device is that much of the device resource: what a
		// host holding the resource as its device view counts.
		if slot, ok := schema.Slot(opts.Devices); ok && t.Devices.Count > 0 {
			for _, v := range []resource.Vector{r.Plain, r.NonZero, r.Koordinator} {
				v[slot] = t.Devices.Total()
			}
		}
		// How big the share is, the view's business too: nodes do not
		// offer these (HAMi has kube-scheduler ignore them).
		if t.Devices.Count > 0 {
			for _, name := range resource.HAMiShareResources {
				if slot, ok := schema.Slot(name); ok {
					r.Plain[slot], r.NonZero[slot], r.Koordinator[slot] = 0, 0, 0
				}
			}
		}
	}
	if t.Devices.Count > 0 {
		if t.Models, err = resource.AcceptedModels(annotations, opts.Models); err != nil {
			return nil, err
		}
	}
	return t, nil
}
