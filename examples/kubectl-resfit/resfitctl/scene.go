package resfitctl

import (
	"fmt"
	"slices"
	"strconv"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
)

// GPU is the device resource whose devices explain and whatif check one by
// one (the DeviceShare filter), and whose allocation and fragmentation
// whatif reports.
const GPU = resource.GPU

// scene is a cluster ready to score under one configuration, as every
// command reads it: the kubebridge snapshot of its nodes and pods (a cache
// that whatif places pods in with Assume), and the configuration's
// pipeline built for the snapshot's schema and device view, as every host
// with a device view builds it (config.Config.BuildFor: the DeviceShare
// filter after the configured ones, so that a pod that shares a GPU needs
// one GPU with its share free and a pod restricted to some GPU models a
// node of one of them; the fragmentation plugins read the view). Pods
// become tasks by the rules every host shares (task). A configuration that
// learns from the pods a host places has seen the cluster's running pods.
type scene struct {
	snap *kubebridge.Snapshot
	pipe *scoring.Pipeline
	opts scoring.TaskOptions
	// clusterWarnings are the cluster's (Cluster.Warnings).
	clusterWarnings []string
}

// newScene builds the snapshot of the cluster's nodes and pods, with the
// extra pods (ones to score) pending in it, so that the schema holds every
// resource they ask for, and the configuration's pipeline.
func newScene(c *Cluster, cfg *config.Config, extra []*v1.Pod) (*scene, error) {
	pods := slices.Clone(c.Pods)
	for _, p := range extra {
		i := slices.IndexFunc(pods, func(q *v1.Pod) bool { return q.Namespace == p.Namespace && q.Name == p.Name })
		pending := p.DeepCopy()
		pending.Spec.NodeName = ""
		if i >= 0 {
			pods[i] = pending // scored as if not yet placed
		} else {
			pods = append(pods, pending)
		}
	}
	d, err := c.dra()
	if err != nil {
		return nil, err
	}
	for _, p := range extra {
		if d != nil && p.Spec.NodeName != "" { // scored as before it was placed: its claims too
			d = d.Unallocate(p)
		}
	}
	snap, err := kubebridge.NewSnapshot(c.Nodes, pods, kubebridge.Options{Devices: GPU, DRA: d})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", c.Source, err)
	}
	pipe, err := cfg.BuildFor(snap.Schema(), config.Host{Devices: snap.Devices()})
	if err != nil {
		return nil, fmt.Errorf("the configuration does not build for this cluster's resources: %v", firstLine(err))
	}
	sc := &scene{snap: snap, pipe: pipe, opts: scoring.TaskOptions{Devices: GPU, Models: snap.Models()}, clusterWarnings: c.Warnings}
	if cfg.NoHostDeviceShare && slices.ContainsFunc(pods, sharesGPU) {
		sc.clusterWarnings = append(slices.Clone(sc.clusterWarnings), sharingUnderKubeFit)
	}
	// A configuration that learns (FGD's classes) has seen the pods that
	// run, in the order of their namespaces and names.
	if pipe.Volatile() {
		for _, p := range c.Pods {
			if kubebridge.Counts(p) {
				if t, err := sc.task(p); err == nil {
					pipe.Observe(t.Task)
				}
			}
		}
	}
	return sc, nil
}

// sharingUnderKubeFit warns that a kube-scheduler profile's own
// NodeResourcesFit sees a pod sharing a GPU otherwise than resfit does.
const sharingUnderKubeFit = "pods here share GPUs: kube-scheduler's own NodeResourcesFit, in a profile, counts such a pod as the whole GPUs it names and checks " +
	resource.HAMiCoresResource + ", which no node offers (unless its ignoredResources lists it), where resfit counts the share; on nodes with such pods its verdicts may differ from those shown"

// sharesGPU reports whether a pod asks for a share of a GPU.
func sharesGPU(p *v1.Pod) bool {
	pod, err := kubebridge.PodOf(p)
	d := resource.DeviceRequestOf(pod, GPU)
	return err == nil && d.Count > 0 && d.Each < 1000
}

// warnings are the configuration's warnings, what could not be read of
// the cluster, then, for each node whose GPU-sharing registration cannot
// be read (it has no GPUs here), why, and for each DRA device class whose
// selectors failed (it selects no device), why.
func (sc *scene) warnings(cfg *config.Config) []string {
	w := append(slices.Clone(cfg.Warnings), sc.clusterWarnings...)
	for _, err := range sc.snap.DeviceErrors() {
		w = append(w, err.Error())
	}
	if d := sc.snap.DRA(); d != nil {
		for _, err := range d.ClassErrors() {
			w = append(w, err.Error())
		}
	}
	return w
}

// task turns a pod into the task the scene scores, with what its DRA
// claims take (kubebridge.PodTask: per node when that differs).
func (sc *scene) task(p *v1.Pod) (*kubebridge.PodTask, error) {
	t, err := sc.snap.DRA().NewPodTask(sc.snap.Schema(), p, sc.opts)
	if err != nil {
		return nil, fmt.Errorf("%v", firstLine(err))
	}
	return t, nil
}

// claimsUnsatisfiable is why a node is rejected whose DRA devices cannot
// satisfy a pod's claims.
const claimsUnsatisfiable = "DRA: the node's devices cannot satisfy the pod's resource claims"

// score scores a pod on every node into batch, and calls visit with the
// rows the batch then holds and the task they were scored for: each
// distinct task (one, unless what the pod's DRA claims take differs from
// node to node) with its nodes (kubebridge.PodTask.Rows), then a nil task
// with the nodes whose devices cannot satisfy the claims (which batch
// does not hold).
func (sc *scene) score(pt *kubebridge.PodTask, batch *scoring.Batch, visit func(task *scoring.Task, rows []int) error) error {
	table := sc.snap.Table()
	order, byTask, none, err := pt.Rows(table)
	if err != nil {
		return err
	}
	for _, task := range order {
		if err := sc.pipe.Score(task, table, batch); err != nil {
			return err
		}
		if err := visit(task, byTask[task]); err != nil {
			return err
		}
	}
	if none != nil {
		return visit(nil, none)
	}
	return nil
}

// claimDevices are the devices a pod's claims not allocated yet take on a
// node, as kube's allocator picks them (kubebridge.DRA.Allocation).
func (sc *scene) claimDevices(pod *v1.Pod, node string) ([]ClaimDevices, error) {
	d := sc.snap.DRA()
	if d == nil {
		return nil, nil
	}
	allocations, ok, err := d.Allocation(pod, node)
	if err != nil || !ok {
		return nil, err
	}
	var out []ClaimDevices
	for _, a := range allocations {
		c := ClaimDevices{Claim: a.Claim}
		for _, r := range a.Result.Devices.Results {
			dev := ClaimDevice{Request: r.Request, Driver: r.Driver, Pool: r.Pool, Device: r.Device}
			for name, q := range r.ConsumedCapacity {
				if dev.Consumed == nil {
					dev.Consumed = map[string]string{}
				}
				dev.Consumed[string(name)] = q.String()
			}
			c.Devices = append(c.Devices, dev)
		}
		out = append(out, c)
	}
	return out, nil
}

// gpuText is a node's GPUs as the device view holds them: wholly free of
// all, what is left of the others in GPUs when some is (a GPU's partitions
// or shares taken: "1/2 +0.5"), and their model when known ("2/8
// NVIDIA-H100-80GB-HBM3"); "" without.
func (sc *scene) gpuText(row int) string {
	d := sc.snap.Devices()
	free := d.Free(row)
	if len(free) == 0 {
		return ""
	}
	whole, part := 0, int64(0)
	for _, f := range free {
		if f == d.PerDevice() {
			whole++
		} else {
			part += f
		}
	}
	text := fmt.Sprintf("%d/%d", whole, len(free))
	if part > 0 {
		text += " +" + strconv.FormatFloat(float64(part)/float64(d.PerDevice()), 'f', -1, 64)
	}
	if m := d.Model(row); m != "" {
		text += " " + m
	}
	return text
}
