package resfitctl

import (
	"fmt"
	"slices"

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
	snap, err := kubebridge.NewSnapshot(c.Nodes, pods, kubebridge.Options{Devices: GPU})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", c.Source, err)
	}
	pipe, err := cfg.BuildFor(snap.Schema(), config.Host{Devices: snap.Devices()})
	if err != nil {
		return nil, fmt.Errorf("the configuration does not build for this cluster's resources: %v", firstLine(err))
	}
	sc := &scene{snap: snap, pipe: pipe, opts: scoring.TaskOptions{Devices: GPU, Models: snap.Models()}}
	// A configuration that learns (FGD's classes) has seen the pods that
	// run, in the order of their namespaces and names.
	if pipe.Volatile() {
		for _, p := range c.Pods {
			if kubebridge.Counts(p) {
				if t, err := sc.task(p); err == nil {
					pipe.Observe(t)
				}
			}
		}
	}
	return sc, nil
}

// warnings are the configuration's warnings, then, for each node whose
// GPU-sharing registration cannot be read (it has no GPUs here), why.
func (sc *scene) warnings(cfg *config.Config) []string {
	w := slices.Clone(cfg.Warnings)
	for _, err := range sc.snap.DeviceErrors() {
		w = append(w, err.Error())
	}
	return w
}

// task turns a pod into the task the scene scores.
func (sc *scene) task(p *v1.Pod) (*scoring.Task, error) {
	t, err := kubebridge.NewTask(sc.snap.Schema(), p, sc.opts)
	if err != nil {
		return nil, fmt.Errorf("%v", firstLine(err))
	}
	return t, nil
}
