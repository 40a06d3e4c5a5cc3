package planning

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/cache"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
	"github.com/resfit/resfit/scoring/frag"
)

// Scene is a cluster ready to score and plan under one configuration, as
// a host that reads a whole cluster at once (kubectl-resfit, a
// descheduler) reads it: a cache.Cache of its nodes and pods, and the
// configuration's pipeline built for the cache's schema and device view
// as every host with a device view builds it (config.Config.BuildFor: the
// DeviceShare filter after the configured ones, so that a pod that shares
// a GPU needs one GPU with its share free and a pod restricted to some GPU
// models a node of one of them; the fragmentation plugins read the view).
// Pods become tasks by the rules every host shares (Task). A configuration
// that learns from the pods a host places has seen the cluster's running
// pods.
//
// A Scene is not safe for concurrent use: placing pods (cache.Cache.Assume)
// changes its cache, and a learning pipeline learns.
type Scene struct {
	cache *cache.Cache
	pipe  *scoring.Pipeline
	opts  scoring.TaskOptions
	// ends is the lifetime view, for a configuration that reads it.
	ends *sceneEnds
}

// NewScene builds the configuration's pipeline for the cache (made with
// Options.Devices set to the device resource, resource.GPU most often),
// and has a pipeline that learns observe the running pods, in the order
// given (kubectl-resfit gives them by namespace and name). An error says
// the configuration does not build for the cluster's resources. For a
// configuration that reads when nodes empty (ResfitFrag's lifetime term,
// ResfitLifetime), the scene follows the pods as at now, reading no Jobs
// (NewSceneAt).
func NewScene(c *cache.Cache, cfg *config.Config, running []*v1.Pod) (*Scene, error) {
	return NewSceneAt(c, cfg, running, Ends{Now: time.Now()})
}

// NewSceneAt is NewScene with what the scene reads of when pods end: for a
// configuration that reads it, a lifetime view of the cache's rows as at
// ends.Now (running pods followed by their starts and declared ends, with
// their Jobs' deadlines; finished ones learned from), which the
// configuration's lifetime term scores by, and each pod's task's expected
// end (ExpectedEnd). A running pod whose declared end does not read is
// followed as declaring none (Warnings names it); a pod to score whose
// declared end does not read is an error of its task (Task).
func NewSceneAt(c *cache.Cache, cfg *config.Config, running []*v1.Pod, ends Ends) (*Scene, error) {
	host := config.Host{Devices: c.Devices()}
	var se *sceneEnds
	if cfg.ReadsLifetimes() {
		opts, err := cfg.LifetimeModel()
		if err != nil {
			return nil, err
		}
		if se, err = followEnds(c, running, ends, opts); err != nil {
			return nil, err
		}
		host.Lifetimes = se.tracker.Nodes()
	}
	pipe, err := cfg.BuildFor(c.Schema(), host)
	if err != nil {
		return nil, fmt.Errorf("the configuration does not build for this cluster's resources: %v", firstLine(err))
	}
	sc := &Scene{cache: c, pipe: pipe, opts: scoring.TaskOptions{Models: c.Models()}, ends: se}
	if d := c.Devices(); d != nil {
		sc.opts.Devices = d.Name()
	}
	if pipe.Volatile() {
		for _, p := range running {
			if kubebridge.Counts(p) {
				if t, err := sc.Task(p); err == nil {
					pipe.Observe(sc.classTask(p, t))
				}
			}
		}
	}
	return sc, nil
}

// firstLine is an error's first line.
func firstLine(err error) string {
	line, _, _ := strings.Cut(err.Error(), "\n")
	return line
}

// Cache is the scene's cache.
func (sc *Scene) Cache() *cache.Cache { return sc.cache }

// Pipeline is the scene's pipeline.
func (sc *Scene) Pipeline() *scoring.Pipeline { return sc.pipe }

// Task turns a pod into the task the scene scores, with what its DRA
// claims take (kubebridge.PodTask: per node when that differs). An error names the
// pod, on one line.
func (sc *Scene) Task(p *v1.Pod) (*kubebridge.PodTask, error) {
	t, err := kubebridge.NewPodTask(sc.cache.DRA(), sc.cache.Schema(), p, sc.opts)
	if err != nil {
		return nil, fmt.Errorf("%v", firstLine(err))
	}
	if at, src, ok, err := sc.PodEnd(p); err != nil {
		return nil, err
	} else if ok {
		t.SetEnds(at, src)
	}
	return t, nil
}

// Warnings are what the scene could not read of the cluster: for each
// node whose GPU-sharing registration cannot be read (it has no GPUs
// here), why, for each DRA device class whose selectors failed (it
// selects no device), why, and for each running pod whose declared end
// does not read (followed as declaring none), why.
func (sc *Scene) Warnings() []string {
	var w []string
	for _, err := range sc.cache.DeviceErrors() {
		w = append(w, err.Error())
	}
	if sc.ends != nil {
		w = append(w, sc.ends.warnings...)
	}
	if d := sc.cache.DRA(); d != nil {
		for _, err := range d.ClassErrors() {
			w = append(w, err.Error())
		}
	}
	return w
}

// Score scores a pod on every node into batch, and calls visit with the
// rows the batch then holds and the task they were scored for: each
// distinct task (one, unless what the pod's DRA claims take differs from
// node to node) with its nodes (kubebridge.PodTask.Rows), then a nil task with the
// nodes whose devices cannot satisfy the claims (which batch does not
// hold).
func (sc *Scene) Score(pt *kubebridge.PodTask, batch *scoring.Batch, visit func(task *scoring.Task, rows []int) error) error {
	table := sc.cache.Table()
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

// WorkloadClasses are the pod classes of a workload, for FGD's measure:
// each distinct class of the pods' tasks as the FGD scorer keys them
// (frag.ClassOf: cpu request, device request, accepted device models,
// type of part; a pod's task where it runs, a pending pod's where it
// first fits: classTask), each pod once, finished ones and those whose task cannot
// be read left out, weighted by the share of the pods that have it (FGD's
// class popularity), so that a node's fragmentation is the device amount a
// pod drawn from the workload expects not to be able to use. They are in a
// fixed order: cpu, device count, device amount, models, type of part.
func (sc *Scene) WorkloadClasses(pods []*v1.Pod) []frag.Class {
	count := map[frag.Class]float64{}
	seen := map[string]bool{}
	total := 0.0
	cpu, _ := sc.cache.Schema().Slot(resource.CPU)
	for _, p := range pods {
		key := kubebridge.PodName(p)
		if seen[key] || kubebridge.Finished(p) {
			continue
		}
		seen[key] = true
		task, err := sc.Task(p)
		if err != nil {
			continue
		}
		count[frag.ClassOf(sc.classTask(p, task), cpu)]++
		total++
	}
	var out []frag.Class
	for c, n := range count {
		c.Weight = n / total
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b frag.Class) int {
		return cmp.Or(cmp.Compare(a.CPU, b.CPU), cmp.Compare(a.Devices.Count, b.Devices.Count), cmp.Compare(a.Devices.Each, b.Devices.Each), cmp.Compare(a.Models, b.Models), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}

// classTask is the task a pod is counted as among a workload's classes,
// as a host's learning scorer counts the pods it places: where the pod
// runs, its task there (kubebridge.PodTask.Placed: a MIG part of its profile, say);
// a pending pod's, its task on the first node its claims can be
// satisfied on, or its base task where none can.
func (sc *Scene) classTask(p *v1.Pod, pt *kubebridge.PodTask) *scoring.Task {
	if p.Spec.NodeName != "" {
		return pt.Placed(p.Spec.NodeName)
	}
	if pt.Uniform() {
		return pt.Task
	}
	if order, _, _, err := pt.Rows(sc.cache.Table()); err == nil && len(order) > 0 {
		return order[0]
	}
	return pt.Task
}

// FragmentationCost is FGD's measure of a node for the workload's pod
// classes (WorkloadClasses), as the FGD scorer measures it (frag.Measure.Row:
// GPU models, and the parts left on GPUs that divide into them): the device
// amount idle on the node that a pod drawn from the workload expects not
// to be able to use, read from the cache's table and device view as
// they are when called. It is the cost give-back lowers (defrag.GiveBack).
// An error says the classes do not make a measure (none, say).
func (sc *Scene) FragmentationCost(classes []frag.Class) (func(row int) float64, error) {
	devices := sc.cache.Devices()
	if devices == nil {
		return nil, errors.New("the cache has no device view (Options.Devices)")
	}
	m, err := frag.NewMeasure(classes, devices.PerDevice())
	if err != nil {
		return nil, err
	}
	table := sc.cache.Table()
	cpu, _ := table.Schema().Slot(resource.CPU)
	return func(row int) float64 { return m.Row(table, cpu, devices, row) }, nil
}

// GiveBackCost is the cost a give-back round lowers for the workload
// (defrag.Round.Cost): FragmentationCost over the workload's classes
// (WorkloadClasses). An error says the workload's classes make no measure.
func (sc *Scene) GiveBackCost(workload []*v1.Pod) (func(row int) float64, error) {
	cost, err := sc.FragmentationCost(sc.WorkloadClasses(workload))
	if err != nil {
		return nil, fmt.Errorf("the workload's pod classes: %v", err)
	}
	return cost, nil
}

// DeviceShares are the allocated and the fragmented share of the
// cluster's device amount (nil without any): allocated from the table,
// fragmented by FragmentationCost over the workload's classes, the same
// classes whatever classes an FGD configuration scores with, so that two
// configurations' placements compare.
func (sc *Scene) DeviceShares(workload []*v1.Pod) (allocated, fragmented *float64) {
	table := sc.cache.Table()
	if sc.cache.Devices() == nil {
		return nil, nil
	}
	slot, ok := table.Schema().Slot(sc.cache.Devices().Name())
	if !ok {
		return nil, nil
	}
	var total, used int64
	for i := range table.Len() {
		total += table.Allocatable(i)[slot]
		used += min(table.Used(i)[slot], table.Allocatable(i)[slot])
	}
	if total == 0 {
		return nil, nil
	}
	a := float64(used) / float64(total)
	cost, err := sc.FragmentationCost(sc.WorkloadClasses(workload))
	if err != nil {
		return &a, nil
	}
	var sum float64
	for i := range table.Len() {
		sum += cost(i)
	}
	f := sum / float64(total)
	return &a, &f
}

// ownClaims reads a placed pod whose DRA claims hold devices of the view
// on its node (a node whose devices DRA publishes) as a planner moves it:
// its task as its replacement will ask (its claims as their templates
// make them, not allocated: dra.Reading.Unallocate), and the devices its claims
// hold there (the view's indices). found is false for a pod whose claims
// hold none; held is false when they hold anything but whole devices of
// the view, as many as the task asks for.
func (sc *Scene) ownClaims(pod *v1.Pod) (pt *kubebridge.PodTask, units []int, found, held bool, err error) {
	d, view := sc.cache.DRA(), sc.cache.Devices()
	if d == nil || view == nil || len(pod.Spec.ResourceClaims) == 0 {
		return nil, nil, false, false, nil
	}
	units, ok := d.UnitsHeld(pod, pod.Spec.NodeName, view.Name())
	if len(units) == 0 && ok {
		return nil, nil, false, false, nil
	}
	pt, err = kubebridge.NewPodTask(d.Unallocate(pod), sc.cache.Schema(), pod, sc.opts)
	if err != nil {
		return nil, nil, false, false, fmt.Errorf("%v", firstLine(err))
	}
	held = ok && pt.Uniform() && pt.Task.Devices.Count == len(units) && pt.Task.Devices.Each == view.PerDevice()
	return pt, units, true, held, nil
}
