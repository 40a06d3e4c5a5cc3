package config

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/frag"
	"github.com/resfit/resfit/scoring/lifetime"
	"github.com/resfit/resfit/sra"
	"github.com/resfit/resfit/strategy"
)

// GPU fragmentation: FGD, the fragmentation gradient descent score of
// Weng et al. (USENIX ATC'23), and ResfitFrag, resfit's policy built on
// it. Both read the host's device view (Host.Devices): a host without one
// cannot build them.

// Plugin names of the fragmentation plugins, in resfit's own form and a
// KubeSchedulerConfiguration; a volcano-scheduler.conf names them fgd and
// resfit-frag (volcanoAliases).
const (
	FGD        = "FGD"
	ResfitFrag = "ResfitFrag"
)

// FGDArgs are FGD's arguments: which devices it reads, and the workload's
// typical pods, FGD's classes, with how often each comes. A node scores
// by how much placing the pod there lowers the node's fragmentation: the
// idle device amount that a pod drawn from the classes could not use
// (scoring/frag).
type FGDArgs struct {
	// Device is the device resource, nvidia.com/gpu by default; the
	// host's device view must be of it.
	Device string
	// ShareUnit is the amount a whole device is in the classes' GPUShare:
	// 1000 by default (thousandths, as FGD's trace counts a share), 100
	// for percent (as HAMi's and Volcano's vGPU cores are stated).
	ShareUnit int64
	// Classes are the typical pods; at least one, their weights summing to
	// more than 0, unless Learn is set (then they are where learning
	// starts: each class as that many pods seen).
	Classes []FragClass
	// Learn, when not nil, learns the classes from the pods the host
	// places (frag.Histogram), and FGD becomes volatile (scoring.Volatile).
	Learn *LearnArgs
}

// maxPartition bounds a class's type of part (a DRA attribute's string
// value is at most 64 characters).
const maxPartition = 64

// LearnArgs bound and pace the learning of FGD's classes: at most
// MaxClasses classes (default 64), every weight halving every HalfLife
// pods (default 1000), the measure made again every Refresh pods (default
// 100).
type LearnArgs struct {
	MaxClasses, HalfLife, Refresh int
}

// FragClass is one typical pod: its cpu request, the devices it asks for
// (GPUs of GPUShare each, or none), the type of part they are when its
// devices divide into parts (Partition: a MIG profile, whose GPUShare is
// the share of a GPU the part is, as a host counts it), the device models
// it accepts, and
// its weight, how often it comes relative to the others (1 when unset):
// FGD weighs the class by its share, its weight over the classes' summed
// weight (FGD's popularity, which sums to 1), so counts of pods serve as
// weights as well as shares do.
type FragClass struct {
	MilliCPU int64
	GPUs     int
	GPUShare int64 // in ShareUnit; a whole device when GPUs > 0 and unset
	// Partition is the type of part (scoring.Task.Partition); "" for a
	// share or whole devices.
	Partition string
	Models    resource.ModelSet
	Weight    float64
}

func (FGDArgs) plugin() string { return FGD }

func (a FGDArgs) build(name string, t target) ([]scoring.WeightedScorer, []scoring.Filter, error) {
	s, err := a.scorer(name, t)
	return scorer(s, err)
}

// scorer builds FGD's scorer over the host's device view.
func (a FGDArgs) scorer(name string, t target) (*frag.Scorer, error) {
	if t.devices == nil {
		return nil, fmt.Errorf("needs the host's device view of %s (config.Host.Devices): it scores how a pod's devices fragment a node's", a.Device)
	}
	if t.devices.Name() != a.Device {
		return nil, fmt.Errorf("device: the host's device view is of %s, not %s", t.devices.Name(), a.Device)
	}
	if a.Learn != nil {
		return a.learningScorer(name, t)
	}
	perDevice := t.devices.PerDevice()
	classes, err := a.fragClasses(perDevice)
	if err != nil {
		return nil, err
	}
	total := 0.0
	for _, c := range classes {
		total += c.Weight
	}
	for i := range classes {
		classes[i].Weight /= total
	}
	m, err := frag.NewMeasure(classes, perDevice)
	if err != nil {
		return nil, err
	}
	return frag.NewScorer(t.schema, t.devices, m, frag.Options{Name: name})
}

// fragClasses are the classes in the device view's units, their weights as
// given.
func (a FGDArgs) fragClasses(perDevice int64) ([]frag.Class, error) {
	classes := make([]frag.Class, len(a.Classes))
	for i, c := range a.Classes {
		classes[i] = frag.Class{CPU: c.MilliCPU, Models: c.Models, Partition: c.Partition, Weight: c.Weight}
		if c.GPUs == 0 {
			continue
		}
		each := c.GPUShare * perDevice
		if each%a.ShareUnit != 0 {
			return nil, fmt.Errorf("classes[%d].gpuShare: %d of %d is not a whole amount of the device view's %d a device", i, c.GPUShare, a.ShareUnit, perDevice)
		}
		classes[i].Devices = resource.DeviceRequest{Count: c.GPUs, Each: each / a.ShareUnit}
	}
	return classes, nil
}

// learningScorer is FGD over a histogram that the given classes start.
func (a FGDArgs) learningScorer(name string, t target) (*frag.Scorer, error) {
	h, err := frag.NewHistogram(a.Learn.MaxClasses, float64(a.Learn.HalfLife))
	if err != nil {
		return nil, err
	}
	classes, err := a.fragClasses(t.devices.PerDevice())
	if err != nil {
		return nil, err
	}
	for _, c := range classes {
		h.Seed(c)
	}
	return frag.NewLearningScorer(t.schema, t.devices, h, a.Learn.Refresh, frag.Options{Name: name})
}

func (a FGDArgs) canonical() []yamlNode {
	classes := yamlNode{key: "classes", seq: true, items: []yamlNode{}}
	for _, c := range a.Classes {
		items := []yamlNode{
			{key: "cpu", scalar: resource.FormatAmount(resource.CPU, c.MilliCPU)},
			{key: "gpus", scalar: c.GPUs},
		}
		if c.GPUs > 0 {
			items = append(items, yamlNode{key: "gpuShare", scalar: c.GPUShare})
		}
		if c.Partition != "" {
			items = append(items, yamlNode{key: "partition", scalar: c.Partition})
		}
		if c.Models != "" {
			items = append(items, yamlNode{key: "models", scalar: string(c.Models)})
		}
		classes.items = append(classes.items, mapping("", append(items, yamlNode{key: "weight", scalar: c.Weight})...))
	}
	out := []yamlNode{{key: "device", scalar: a.Device}, {key: "shareUnit", scalar: a.ShareUnit}, classes}
	if l := a.Learn; l != nil {
		out = append(out, mapping("learn", yamlNode{key: "maxClasses", scalar: l.MaxClasses},
			yamlNode{key: "halfLife", scalar: l.HalfLife}, yamlNode{key: "refresh", scalar: l.Refresh}))
	}
	return out
}

// ResfitFragArgs are ResfitFrag's arguments. ResfitFrag is five parts,
// each doing one job:
//
//   - FGD, weighted above the whole range of the tie-breaker, ranks nodes
//     by how much the pod lowers their fragmentation, in FGD's whole steps
//     0..100; many nodes tie on the top step.
//   - The tie-breaker (weight 1, 0..100) orders those ties: by default
//     PackLeastUsed over cpu and the device, the node whose least-used of
//     them is fullest with the pod, so that pods gather on nodes already
//     in use and nodes that are emptying come free whole for the largest
//     pods; or NodeResourcesBalancedAllocation, the node whose cpu and
//     device use the pod brings most into step (ResfitFrag's tie-breaker
//     until 2026-11-28: it spreads pods, and where pods come and go whole
//     nodes then seldom come free). For a host that follows when pods end
//     (Host.Lifetimes), the packing tie-breaker balances until anything
//     is known of when pods end or 30% of the devices are in use
//     (UntilEndsKnown, lifetime.UntilKnown, lifetime.FillShare): where no
//     pod has declared an end, ended or run for any time, as when pods
//     only arrive, balance strands less early in the fill.
//   - sra's proportional filter keeps CoresPerIdleGPU cores free per idle
//     device, so that CPU-only pods do not strand GPUs.
//   - For a host that follows when pods end (Host.Lifetimes), the lifetime
//     term (LifetimeWeight × 0..100, scoring/lifetime) keeps pods off the
//     nodes about to empty and draws them to the nodes that stay busy
//     longest, while whole nodes are scarce (at most a fifth of the nodes
//     with the most devices wholly free: lifetime.WholeShare).
//   - The node size (NodeSizeWeight × 0..100, sra.Size) orders FGD's
//     ties beside the tie-breaker by how small the node is beside the
//     host's largest, so that small pods fill the small nodes and the
//     largest nodes stay whole for the pods only they hold; in a host that
//     follows ends, once anything is known of any pod's end and, while
//     no pod has ended, half of the GPUs are in use.
//
// On Alibaba's openb trace it leaves fewer GPUs idle than FGD alone, both
// when pods only arrive and where they come and go (bench/replay).
type ResfitFragArgs struct {
	FGDArgs
	// TieBreak is the tie-breaker: PackLeastUsed (the default) or
	// NodeResourcesBalancedAllocation.
	TieBreak string
	// TieBreaker are the resources the tie-breaker reads: cpu and the
	// device resource by default.
	TieBreaker []string
	// UntilEndsKnown is what the tie-breaker is, in a host that follows
	// when pods end (Host.Lifetimes), until anything is known of any pod's
	// end or lifetime.FillShare of the devices are in use:
	// NodeResourcesBalancedAllocation by default under PackLeastUsed (the
	// same type as TieBreak: no change). In a host that does not
	// follow ends the tie-breaker is TieBreak throughout.
	UntilEndsKnown string
	// CoresPerIdleGPU is the proportional reserve, cores per idle device;
	// 0 turns the filter off. By default the classes' cores per device:
	// Σ weight × cpu over Σ weight × devices, over the classes that ask
	// for devices (a shared device counting as its share).
	CoresPerIdleGPU float64
	// LifetimeWeight is the weight of the lifetime term (scoring/lifetime:
	// a pod goes where it is likely to end before its node would empty
	// anyway, so that nodes about to empty come free whole) for a pod that
	// declares its end, for a host that follows when pods end
	// (Host.Lifetimes): DefaultLifetimeWeight unless set; 0 leaves it out.
	LifetimeWeight float64
	// LearnedLifetimeWeight is the term's weight for a pod whose end was
	// learned (scoring.Task.EndsLearned): DefaultLearnedLifetimeWeight
	// unless set, LifetimeWeight where only that is set (one term for
	// both); 0 leaves learned ends out.
	LearnedLifetimeWeight float64
	// LifetimeModel is what the host's lifetime model (lifetime.Model: how
	// long pods of a kind ran, learned from those that ended) is asked to
	// learn with, for a host that follows when pods end; an unset (0)
	// option takes lifetime's default. One host keeps one model: the
	// options of every plugin that gives them must agree
	// (Config.LifetimeModel).
	LifetimeModel lifetime.ModelOptions
	// NodeSizeWeight is the weight of the node-size part (sra.Size: the
	// smaller node first, so that the largest nodes stay for the pods only
	// they can hold, 0..100): DefaultNodeSizeWeight unless set; 0 leaves it
	// out. In a host that follows when pods end (Host.Lifetimes) it counts
	// only once anything is known of any pod's end and, while no pod has
	// ended (a cluster filling from empty), half of the GPUs are in use
	// (lifetime.NewOnceKnown, lifetime.OnceKnownFillShare); in one that
	// does not, throughout. Largest is its reference node:
	// resource name to amount, in the resource's canonical unit, with at
	// least one amount above 0 (one with none of the host's resources
	// prefers no node); nil, the default, takes the host's largest node,
	// each resource apart (resource.Table.Largest), as it changes.
	NodeSizeWeight float64
	Largest        map[string]int64
}

// DefaultLifetimeWeight and DefaultLearnedLifetimeWeight are ResfitFrag's
// lifetime weights when none is set, for declared ends and for learned
// ones. A declared end is sharper than one learned from a shape's past, so
// it wants a lighter term: at 10 the term's range is about a tenth of
// FGD's (its weight, 101, times its 100), and it orders what FGD leaves
// close; a learned end, at 1000, leads. In the replay under churn at load
// 0.9 (8 weeks, 10 seeds, paired), they leave 1.22% of the GPUs idle while
// GPU pods wait with ends declared with noise (σ = 1; 1.63 at 30, the
// default before 2026-12-05) and 2.94% with ends learned, against 7.35%
// without the term and BestFit's 2.80; at 1.0, 3.02 and 3.05, against
// FGD's 3.05 (bench/replay README, "The weight, by how ends are known").
const (
	DefaultLifetimeWeight        = 10
	DefaultLearnedLifetimeWeight = 1000
)

// DefaultNodeSizeWeight is the node-size part's weight when none is set:
// 1, the tie-breaker's. Together the two span 200, so they may outweigh
// one of FGD's steps (101) where they agree, never two. In the replay under
// churn (10 seeds, paired), at load 0.9 over 8 weeks it takes the GPUs
// idle while GPU pods wait from 1.22% to 0.00 with ends declared with
// noise (σ = 1), from 2.94% to 0.00 with ends learned and from 7.35% to
// 1.08 without a view of ends, against BestFit's 2.80; at 1.0 it ties FGD.
// Where nothing is known of any end (pods only arrive) it is left out, for
// there it strands more GPUs; and while no pod has been seen to end (a
// cluster filling from empty) it waits until half of the GPUs are in use
// (lifetime.OnceKnownFillShare), for the first pods placed in such a fill
// run longest, and the size placing them cost up to 0.2 point in overload
// (1.3, 7 days). With the wait, with ends declared with noise (σ = 1 or
// 2) or learned, at 1.1 it leaves fewer GPUs idle than FGD and than
// ResfitFrag without the part, and at 1.0 within 0.05 of a wait for 30%
// (bench/replay README, "The node size waits for half of the GPUs").
const DefaultNodeSizeWeight = 1

func (ResfitFragArgs) plugin() string { return ResfitFrag }

// partWeight is FGD's weight in the plugin: one step of it outweighs the
// whole of the tie-breaker's range.
func (ResfitFragArgs) partWeight() int64 { return strategy.MaxNodeScore + 1 }

func (a ResfitFragArgs) build(name string, t target) ([]scoring.WeightedScorer, []scoring.Filter, error) {
	fgd, err := a.scorer(FGD, t)
	if err != nil {
		return nil, nil, err
	}
	tb, err := tieBreaker(t, a.TieBreak, a.TieBreak, a.UntilEndsKnown, a.TieBreaker)
	if err != nil {
		return nil, nil, fmt.Errorf("tieBreaker: %w", err)
	}
	scorers := []scoring.WeightedScorer{
		{Scorer: fgd, Weight: float64(a.partWeight())},
		{Scorer: tb, Weight: 1},
	}
	if t.lifetimes != nil {
		scorers = append(scorers, a.lifetimeTerms(t)...)
	}
	if a.NodeSizeWeight > 0 {
		size, err := nodeSizeScorer(t, a.Largest)
		if err != nil {
			return nil, nil, fmt.Errorf("nodeSize: %w", err)
		}
		scorers = append(scorers, scoring.WeightedScorer{Scorer: size, Weight: a.NodeSizeWeight})
	}
	if a.CoresPerIdleGPU == 0 {
		return scorers, nil, nil
	}
	p, err := sra.NewProportional(t.schema, []sra.Ratio{{Resource: a.Device, CPU: a.CoresPerIdleGPU}})
	if err != nil {
		return nil, nil, err
	}
	f, err := scoring.NewProportionalFilter(p)
	if err != nil {
		return nil, nil, err
	}
	return scorers, []scoring.Filter{f}, nil
}

// nodeSizeScorer is the node size for the target: beside largest, whose
// resources outside the schema are on no node there and are left out (a
// reference with none of the schema's resources prefers no node: 100 on
// every one, sra.SizeRows), or beside the table's largest node where
// largest is nil; in a host that follows when pods end, counted once
// anything is known of an end and, while no pod has ended,
// OnceKnownFillShare of the host's devices are in use
// (lifetime.NewOnceKnown).
func nodeSizeScorer(t target, largest map[string]int64) (scoring.Scorer, error) {
	s := scoring.NewLargestSizeScorer()
	if largest != nil {
		ref := make(resource.Vector, t.schema.Len())
		for name, v := range largest {
			if slot, ok := t.schema.Slot(name); ok {
				ref[slot] = v
			}
		}
		s = scoring.NewScorer(scoring.SRASize, sra.MaxNodeScore, func(_ *scoring.Task, nodes scoring.Span, out []float64) error {
			return sra.SizeRows(ref, nodes.Rows(), out)
		})
	}
	if t.lifetimes == nil {
		return s, nil
	}
	return lifetime.NewOnceKnown(t.lifetimes, t.devices, s)
}

// lifetimeTerms are the lifetime term's scorers: one for every end where
// declared and learned ends weigh the same, else one for each source that
// weighs more than 0.
func (a ResfitFragArgs) lifetimeTerms(t target) []scoring.WeightedScorer {
	if a.LearnedLifetimeWeight == a.LifetimeWeight {
		if a.LifetimeWeight == 0 {
			return nil
		}
		return []scoring.WeightedScorer{{Scorer: lifetime.NewScorer(t.lifetimes, t.devices), Weight: a.LifetimeWeight}}
	}
	var terms []scoring.WeightedScorer
	for _, term := range []struct {
		only   lifetime.Ends
		weight float64
	}{{lifetime.DeclaredEnds, a.LifetimeWeight}, {lifetime.LearnedEnds, a.LearnedLifetimeWeight}} {
		if term.weight > 0 {
			terms = append(terms, scoring.WeightedScorer{Scorer: lifetime.NewScorerFor(t.lifetimes, t.devices, term.only), Weight: term.weight})
		}
	}
	return terms
}

func (a ResfitFragArgs) canonical() []yamlNode {
	out := append(a.FGDArgs.canonical(),
		mapping("tieBreaker", append([]yamlNode{{key: "type", scalar: a.TieBreak}}, append(BalancedAllocationArgs{Resources: a.TieBreaker}.canonical(),
			yamlNode{key: "untilEndsKnown", scalar: a.UntilEndsKnown})...)...),
		yamlNode{key: "coresPerIdleGPU", scalar: a.CoresPerIdleGPU},
		mapping("lifetime", append([]yamlNode{{key: "weight", scalar: a.LifetimeWeight}, {key: "learnedWeight", scalar: a.LearnedLifetimeWeight}},
			lifetimeModelYAML(a.LifetimeModel)...)...))
	size := []yamlNode{{key: "weight", scalar: a.NodeSizeWeight}}
	if a.NodeSizeWeight > 0 && a.Largest != nil {
		size = append(size, largestNodeYAML(a.Largest))
	}
	return append(out, mapping("nodeSize", size...))
}

// fgd decodes FGD's arguments:
//
//	device: nvidia.com/gpu          # default
//	shareUnit: 1000                 # default; a whole device in gpuShare
//	classes:                        # at least one
//	- {cpu: 8, gpus: 1, weight: 0.25}                 # gpuShare: a whole device
//	- {cpu: 4, gpus: 1, gpuShare: 500, models: "V100M16|V100M32", weight: 0.1}
//	- {cpu: 4, gpus: 1, gpuShare: 500, partition: 3g.40gb, weight: 0.2} # a MIG profile
//	- {cpu: 500m, weight: 0.05}                       # CPU-only
func (d *decoder) fgd(path string, raw any, known ...string) (FGDArgs, map[string]any) {
	a := FGDArgs{Device: resource.GPU, ShareUnit: 1000}
	m, ok := d.object(path, raw)
	if !ok {
		return a, nil
	}
	d.only(path, m, strictFields, append([]string{"device", "shareUnit", "classes", "learn"}, known...)...)
	if raw, present := m["learn"]; present {
		d.note("learn", join(path, "learn"))
		a.Learn = d.learn(join(path, "learn"), raw)
	}
	if raw, present := m["device"]; present {
		d.note("device", join(path, "device"))
		if name, ok := d.str(join(path, "device"), raw); ok && d.resourceName(join(path, "device"), name, false) {
			a.Device = name
		}
	}
	if raw, present := m["shareUnit"]; present {
		d.note("shareUnit", join(path, "shareUnit"))
		if u, ok := d.whole(join(path, "shareUnit"), raw, strictInt); ok {
			if u < 1 || u > resource.MaxWeight {
				d.fail(join(path, "shareUnit"), fmt.Sprintf("must be in [1, %d]", resource.MaxWeight), raw)
			} else {
				a.ShareUnit = u
			}
		}
	}
	cpath := join(path, "classes")
	list, _ := d.list(cpath, m["classes"])
	switch {
	case m["classes"] == nil && a.Learn != nil:
	case m["classes"] == nil:
		d.missing(cpath, "FGD needs the workload's typical pods: a list of {cpu, gpus, gpuShare, partition, models, weight}, or learn: {} to learn them")
	case len(list) == 0 && a.Learn == nil:
		d.fail(cpath, "at least one class is needed", m["classes"])
	default:
		d.note("classes", cpath)
	}
	total := 0.0
	for i, item := range list {
		c, ok := d.fragClass(index(cpath, i), item, a.ShareUnit)
		if ok {
			a.Classes = append(a.Classes, c)
			total += c.Weight
		}
	}
	if len(list) > 0 && len(a.Classes) == len(list) && !(total > 0) && a.Learn == nil {
		d.fail(cpath, "the classes' weights must sum to more than 0", total)
	}
	return a, m
}

// learn reads {maxClasses, halfLife, refresh}, each a whole number with a
// default.
func (d *decoder) learn(path string, raw any) *LearnArgs {
	l := &LearnArgs{MaxClasses: 64, HalfLife: 1000, Refresh: 100}
	m, ok := d.object(path, raw)
	if !ok {
		return l
	}
	d.only(path, m, strictFields, "maxClasses", "halfLife", "refresh")
	d.wholeFields(path, m, wholeField{"maxClasses", &l.MaxClasses, 1, 4096}, wholeField{"halfLife", &l.HalfLife, 1, math.MaxInt32},
		wholeField{"refresh", &l.Refresh, 1, math.MaxInt32})
	return l
}

// wholeField is a whole-number field of an object: its key, where it goes
// and the range it must be in.
type wholeField struct {
	key    string
	dst    *int
	lo, hi int64
}

// wholeFields reads the fields of m that are given into their places,
// each a whole number in its range; ok is false when one is not.
func (d *decoder) wholeFields(path string, m map[string]any, fields ...wholeField) (ok bool) {
	ok = true
	for _, f := range fields {
		raw, present := m[f.key]
		if !present {
			continue
		}
		v, read := d.whole(join(path, f.key), raw, strictInt)
		switch {
		case !read:
			ok = false
		case v < f.lo || v > f.hi:
			d.fail(join(path, f.key), fmt.Sprintf("must be in [%d, %d]", f.lo, f.hi), raw)
			ok = false
		default:
			*f.dst = int(v)
		}
	}
	return ok
}

// fragClass reads one class.
func (d *decoder) fragClass(path string, raw any, shareUnit int64) (FragClass, bool) {
	m, ok := d.object(path, raw)
	if !ok {
		return FragClass{}, false
	}
	d.only(path, m, strictFields, "cpu", "gpus", "gpuShare", "partition", "models", "weight")
	before := len(d.errs)
	var c FragClass
	if raw, present := m["cpu"]; present {
		c.MilliCPU = d.amount(join(path, "cpu"), resource.CPU, raw)
	}
	if raw, present := m["gpus"]; present {
		if n, ok := d.whole(join(path, "gpus"), raw, strictInt); ok {
			if n < 0 || n > resource.MaxDevicesPerNode {
				d.fail(join(path, "gpus"), fmt.Sprintf("must be in [0, %d]", resource.MaxDevicesPerNode), raw)
			} else {
				c.GPUs = int(n)
			}
		}
	}
	if raw, present := m["gpuShare"]; present {
		if s, ok := d.whole(join(path, "gpuShare"), raw, strictInt); ok {
			switch {
			case c.GPUs == 0:
				d.fail(join(path, "gpuShare"), "a share of a device needs gpus ≥ 1", raw)
			case s < 1 || s > shareUnit:
				d.fail(join(path, "gpuShare"), fmt.Sprintf("must be in [1, %d] (shareUnit: a whole device)", shareUnit), raw)
			case s*1000%shareUnit != 0:
				d.fail(join(path, "gpuShare"), fmt.Sprintf("must be a whole thousandth of a device (a device view counts 1000 to a device); %d of %d is not", s, shareUnit), raw)
			default:
				c.GPUShare = s
			}
		}
	} else if c.GPUs > 0 {
		c.GPUShare = shareUnit
	}
	if raw, present := m["partition"]; present {
		if text, ok := d.str(join(path, "partition"), raw); ok {
			switch {
			case c.GPUs == 0:
				d.fail(join(path, "partition"), "a part of a device needs gpus ≥ 1", raw)
			case text == "" || len(text) > maxPartition || strings.ContainsFunc(text, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }):
				d.fail(join(path, "partition"), fmt.Sprintf("must be a type of part of 1 to %d printable characters without spaces, such as a MIG profile (3g.40gb)", maxPartition), raw)
			default:
				c.Partition = text
			}
		}
	}
	if raw, present := m["models"]; present {
		if text, ok := d.str(join(path, "models"), raw); ok {
			models, err := resource.ParseModelSet(text)
			if err != nil {
				d.fail(join(path, "models"), err.Error(), raw)
			}
			c.Models = models
		}
	}
	c.Weight = 1
	if raw, present := m["weight"]; present {
		if w, ok := d.number(join(path, "weight"), raw); ok {
			if !(w >= 0 && w <= resource.MaxWeight) {
				d.fail(join(path, "weight"), fmt.Sprintf("must be in [0, %d]", resource.MaxWeight), raw)
			}
			c.Weight = w
		}
	}
	return c, len(d.errs) == before
}

// amount reads an amount of a resource: a number or a quantity string
// ("500m", "1.5"), in the resource's canonical unit.
func (d *decoder) amount(path, name string, raw any) int64 {
	text, isText := raw.(string)
	if !isText {
		f, ok := d.number(path, raw)
		if !ok {
			return 0
		}
		text = strconv.FormatFloat(f, 'f', -1, 64)
	}
	a, err := resource.ParseAmount(name, text)
	if err != nil {
		d.fail(path, err.Error(), raw)
		return 0
	}
	return a
}

// resfitFrag decodes ResfitFrag's arguments: FGD's, and
//
//	tieBreaker: {type: PackLeastUsed, resources: [{name: cpu, weight: 1}, {name: nvidia.com/gpu, weight: 1}],
//	             untilEndsKnown: NodeResourcesBalancedAllocation}  # default
//	                                 # type: NodeResourcesBalancedAllocation, ResfitFrag's before 2026-11-28
//	                                 # untilEndsKnown: PackLeastUsed packs from the start (before 2026-12-04)
//	coresPerIdleGPU: 10.9            # default: the classes' cores per device
//	lifetime: {weight: 10, learnedWeight: 1000}  # default: declared ends at 10, learned at 1000
//	lifetime: {weight: 100}          # both at 100; {weight: 0, learnedWeight: 0} turns the term off
//	lifetime: {model: {minSamples: 16}}  # the host's model predicts for a kind once 16 of it ended
//	nodeSize: {weight: 1}            # default: beside the host's largest node, once an end is known
//	nodeSize: {weight: 1, largest: {cpu: 128, memory: 768Gi, nvidia.com/gpu: 8}}  # a reference node given
//	nodeSize: {weight: 0}            # off (ResfitFrag's before 2026-12-05)
func (d *decoder) resfitFrag(path string, raw any) ScorerArgs {
	fa, m := d.fgd(path, raw, "tieBreaker", "coresPerIdleGPU", "lifetime", "nodeSize")
	a := ResfitFragArgs{FGDArgs: fa, TieBreak: PackLeastUsed, TieBreaker: []string{resource.CPU, fa.Device}, UntilEndsKnown: NodeResourcesBalancedAllocation,
		LifetimeWeight: DefaultLifetimeWeight, LearnedLifetimeWeight: DefaultLearnedLifetimeWeight, NodeSizeWeight: DefaultNodeSizeWeight}
	if m == nil {
		return a
	}
	if raw, present := m["tieBreaker"]; present {
		tpath := join(path, "tieBreaker")
		d.note("tieBreaker", tpath)
		if names := d.resourceNames(tpath, raw, a.TieBreaker, "type", "untilEndsKnown"); len(names) > 0 {
			a.TieBreaker = names
		}
		if tm, ok := raw.(map[string]any); ok {
			if raw, present := tm["type"]; present {
				if typ, ok := d.str(join(tpath, "type"), raw); ok {
					if slices.Contains(tieBreakers, typ) {
						a.TieBreak = typ
					} else {
						d.fail(join(tpath, "type"), "must be one of "+strings.Join(tieBreakers, ", "), raw)
					}
				}
			}
			if a.TieBreak != PackLeastUsed {
				a.UntilEndsKnown = a.TieBreak // balance throughout
			}
			if raw, present := tm["untilEndsKnown"]; present {
				a.UntilEndsKnown = d.untilEndsKnown(join(tpath, "untilEndsKnown"), raw)
			}
		}
	}
	if raw, present := m["lifetime"]; present {
		a.LifetimeWeight, a.LearnedLifetimeWeight, a.LifetimeModel = d.lifetime(join(path, "lifetime"), raw)
	}
	if raw, present := m["nodeSize"]; present {
		a.NodeSizeWeight, a.Largest = d.nodeSize(join(path, "nodeSize"), raw)
	}
	if raw, present := m["coresPerIdleGPU"]; present {
		d.note("coresPerIdleGPU", join(path, "coresPerIdleGPU"))
		if c, ok := d.number(join(path, "coresPerIdleGPU"), raw); ok {
			if c < 0 || c > resource.MaxWeight {
				d.fail(join(path, "coresPerIdleGPU"), fmt.Sprintf("must be in [0, %d] (0 turns the filter off)", resource.MaxWeight), raw)
			}
			a.CoresPerIdleGPU = c
		}
	} else if c := a.coresPerDevice(); c > resource.MaxWeight {
		// The default is written out as the value (Canonical), which must
		// load back: it is held to the same range.
		d.fail(join(path, "coresPerIdleGPU"), fmt.Sprintf("the classes' cores per device, the default, must be in [0, %d]; set coresPerIdleGPU (0 turns the filter off)", resource.MaxWeight), c)
	} else {
		a.CoresPerIdleGPU = c
	}
	return a
}

// lifetime decodes ResfitFrag's lifetime term: {weight: W, learnedWeight:
// L, model: {...}}, each weight in [0, resource.MaxWeight]; W is
// DefaultLifetimeWeight unless given, and L is W where only W is given,
// else DefaultLearnedLifetimeWeight; model is the options of the host's
// lifetime model (lifetimeModel).
func (d *decoder) lifetime(path string, raw any) (weight, learned float64, model lifetime.ModelOptions) {
	d.note("lifetime", path)
	m, ok := d.object(path, raw)
	if !ok {
		return DefaultLifetimeWeight, DefaultLearnedLifetimeWeight, model
	}
	d.only(path, m, strictFields, "weight", "learnedWeight", "model")
	weight = d.termWeight(join(path, "weight"), m, "weight", DefaultLifetimeWeight)
	learnedDefault := float64(DefaultLearnedLifetimeWeight)
	if _, given := m["weight"]; given {
		learnedDefault = weight
	}
	if raw, present := m["model"]; present {
		model = d.lifetimeModel(join(path, "model"), raw)
	}
	return weight, d.termWeight(join(path, "learnedWeight"), m, "learnedWeight", learnedDefault), model
}

// nodeSize decodes ResfitFrag's node-size part: {weight: W, largest:
// {resource: amount, ...}}, W in [0, resource.MaxWeight]
// (DefaultNodeSizeWeight unless given; 0 leaves it out), and a largest
// node, where given, with an amount above 0 (nil without one: the
// host's largest node).
func (d *decoder) nodeSize(path string, raw any) (float64, map[string]int64) {
	d.note("nodeSize", path)
	m, ok := d.object(path, raw)
	if !ok {
		return DefaultNodeSizeWeight, nil
	}
	d.only(path, m, strictFields, "weight", "largest")
	weight := d.termWeight(join(path, "weight"), m, "weight", DefaultNodeSizeWeight)
	raw, present := m["largest"]
	if !present {
		return weight, nil
	}
	largest := d.largestNode(join(path, "largest"), raw)
	if weight == 0 {
		return 0, nil // off: the largest node is not read, nor written out
	}
	return weight, largest
}

// largestNode decodes a node-size reference: {resource: amount, ...},
// resource names valid, amounts ≥ 0 in the resource's units, at least one
// above 0; nil where it is not a mapping.
func (d *decoder) largestNode(path string, raw any) map[string]int64 {
	lm, ok := d.object(path, raw)
	if !ok {
		return nil
	}
	largest := make(map[string]int64, len(lm))
	above := false
	for _, name := range slices.Sorted(maps.Keys(lm)) {
		v, apath := lm[name], join(path, name)
		if err := resource.ValidateName(name); err != nil {
			d.fail(apath, err.Error(), name)
			continue
		}
		before := len(d.errs)
		a := d.amount(apath, name, v)
		if len(d.errs) > before {
			continue // ParseAmount refuses what is below 0
		}
		largest[name] = a
		above = above || a > 0
	}
	if !above && len(largest) == len(lm) {
		d.fail(path, "must have a resource above 0", raw)
	}
	return largest
}

// termWeight decodes the weight of an optional part (the lifetime term's
// two, nodeSize's), def when it is not given.
func (d *decoder) termWeight(path string, m map[string]any, key string, def float64) float64 {
	raw, present := m[key]
	if !present {
		return def
	}
	w, ok := d.number(path, raw)
	if !ok {
		return def
	}
	if !(w >= 0 && w <= resource.MaxWeight) {
		d.fail(path, fmt.Sprintf("must be in [0, %d] (0 leaves the term out)", resource.MaxWeight), raw)
		return 0
	}
	return w
}

// coresPerDevice is the classes' cores per device: Σ weight × cpu over
// Σ weight × devices, over the classes that ask for devices, a share of a
// device counting as its share; 0 without such classes.
func (a FGDArgs) coresPerDevice() float64 {
	var cores, devices float64
	for _, c := range a.Classes {
		if c.GPUs == 0 {
			continue
		}
		cores += c.Weight * float64(c.MilliCPU) / 1000
		devices += c.Weight * float64(c.GPUs) * float64(c.GPUShare) / float64(a.ShareUnit)
	}
	if devices == 0 || math.IsNaN(cores/devices) {
		return 0
	}
	return cores / devices
}
