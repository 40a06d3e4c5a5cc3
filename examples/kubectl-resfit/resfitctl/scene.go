package resfitctl

import (
	"fmt"
	"slices"
	"strconv"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/cache"
	"github.com/resfit/resfit/examples/kubebridge/planning"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring/config"
)

// GPU is the device resource whose devices explain and whatif check one by
// one (the DeviceShare filter), and whose allocation and fragmentation
// whatif reports.
const GPU = resource.GPU

// scene is a cluster ready to score under one configuration, as every
// command reads it: kubebridge's Scene (the snapshot of its nodes and
// pods, a cache that whatif places pods in with Assume, and the
// configuration's pipeline built for it as every host builds it), with
// what could not be read of the cluster.
type scene struct {
	*planning.Scene
	// clusterWarnings are the cluster's (Snapshot.Warnings).
	clusterWarnings []string
}

// newScene builds the snapshot of the cluster's nodes and pods, with the
// extra pods (ones to score) pending in it, so that the schema holds every
// resource they ask for, and the configuration's pipeline; a configuration
// that learns has seen the running pods, in the order of their namespaces
// and names.
func newScene(c *Snapshot, cfg *config.Config, extra []*v1.Pod) (*scene, error) {
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
	snap, err := cache.New(c.Nodes, pods, cache.Options{Devices: GPU, DRA: d})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", c.Source, err)
	}
	s, err := planning.NewSceneAt(snap, cfg, c.Pods, planning.Ends{Now: c.now()})
	if err != nil {
		return nil, err
	}
	sc := &scene{Scene: s, clusterWarnings: c.Warnings}
	if d == nil {
		if n := len(slices.DeleteFunc(slices.Clone(c.Pods), func(p *v1.Pod) bool { return len(p.Spec.ResourceClaims) == 0 })); n > 0 {
			sc.clusterWarnings = append(slices.Clone(sc.clusterWarnings), fmt.Sprintf(
				"%s: %d pods name DRA resource claims, but no ResourceClaim, ResourceSlice or DeviceClass was read: their devices are not counted; a snapshot with them is made by %s", c.Source, n, SnapshotCommand))
		}
	}
	if cfg.NoHostDeviceShare && slices.ContainsFunc(pods, sharesGPU) {
		sc.clusterWarnings = append(slices.Clone(sc.clusterWarnings), sharingUnderKubeFit)
	}
	return sc, nil
}

// Task is the pod's task (planning.Scene.Task); a pod that names DRA
// resource claims where none was read (a snapshot of nodes and pods alone)
// is an error saying so, not a pod asking for its cpu and memory alone.
func (sc *scene) Task(pod *v1.Pod) (*kubebridge.PodTask, error) {
	if sc.Cache().DRA() == nil && len(pod.Spec.ResourceClaims) > 0 {
		pc := pod.Spec.ResourceClaims[0]
		name := pc.Name
		if pc.ResourceClaimName != nil {
			name = *pc.ResourceClaimName
		}
		return nil, fmt.Errorf("pod %s/%s: spec.resourceClaims[0]: claim %s is missing: no ResourceClaim, ResourceSlice or DeviceClass was read; a snapshot with them is made by %s",
			pod.Namespace, pod.Name, name, SnapshotCommand)
	}
	return sc.Scene.Task(pod)
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
// the cluster, then what the scene could not read (planning.Scene.Warnings).
func (sc *scene) warnings(cfg *config.Config) []string {
	w := append(slices.Clone(cfg.Warnings), sc.clusterWarnings...)
	return append(w, sc.Warnings()...)
}

// claimsUnsatisfiable is why a node is rejected whose DRA devices cannot
// satisfy a pod's claims.
const claimsUnsatisfiable = "DRA: the node's devices cannot satisfy the pod's resource claims"

// claimDevices are the devices a pod's claims not allocated yet take on a
// node, as kube's allocator picks them (dra.Reading.Allocation).
func (sc *scene) claimDevices(pod *v1.Pod, node string) ([]ClaimDevices, error) {
	d := sc.Cache().DRA()
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
	d := sc.Cache().Devices()
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
