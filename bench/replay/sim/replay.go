package sim

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/frag"
	"github.com/resfit/resfit/scoring/lifetime"
)

// Workload is the paper's arrival sequence for one seed: the trace sorted
// by pod name and shuffled, then pods drawn from it at random with
// replacement until one more would take the total GPU request above
// ratio × capacity (the simulator's tuning step; the drawn pods keep
// their shapes and get new names). When the trace alone asks for more
// than that, pods are instead removed at random until it does not.
func Workload(trace []Pod, capacityMilliGPU int64, ratio float64, seed uint64) []Pod {
	byName := slices.Clone(trace)
	slices.SortStableFunc(byName, func(a, b Pod) int { return cmp.Compare(a.Name, b.Name) })
	pods := slices.Clone(byName)
	rng := rand.New(rand.NewPCG(seed, 0x776f726b))
	rng.Shuffle(len(pods), func(i, j int) { pods[i], pods[j] = pods[j], pods[i] })
	var total int64
	for _, p := range pods {
		total += p.TotalMilliGPU()
	}
	limit := int64(ratio * float64(capacityMilliGPU))
	if total > limit {
		for total > limit && len(pods) > 0 {
			i := rng.IntN(len(pods))
			total -= pods[i].TotalMilliGPU()
			pods = slices.Delete(pods, i, i+1)
		}
		return pods
	}
	if len(byName) == 0 {
		return pods
	}
	for i := 0; ; i++ {
		p := byName[rng.IntN(len(byName))]
		if total+p.TotalMilliGPU() > limit {
			return pods
		}
		total += p.TotalMilliGPU()
		p.Name = fmt.Sprintf("%s-tuned-%d", p.Name, i)
		pods = append(pods, p)
	}
}

// Tiebreak says how a replay breaks ties between nodes with equal top
// scores.
type Tiebreak string

const (
	// TiebreakPermutation gives nodes a fixed random priority per run: a
	// seeded permutation of the name-sorted nodes. The paper's results
	// depend on it.
	TiebreakPermutation Tiebreak = "permutation"
	// TiebreakName prefers the node whose name sorts first.
	TiebreakName Tiebreak = "name"
	// TiebreakFresh picks uniformly among the tied nodes, afresh for
	// every pod (kube-scheduler's behaviour).
	TiebreakFresh Tiebreak = "fresh"
)

// LoadPoints are the arrived loads, in percent of GPU capacity, at which
// a replay records the allocation: 0, 1, …, 130.
const LoadPoints = 131

// Result is one replay: one policy, one seed.
type Result struct {
	Policy string
	Seed   uint64
	// Allocation[x] is the GPU allocated, in percent of capacity, once
	// the arrived load reached x% of capacity: the state after the last
	// pod that kept the arrived GPU request at or below x%.
	Allocation [LoadPoints]float64
	// Fragmented is the cluster's fragmented GPU at the end (the paper's
	// measure over the typical classes), in percent of capacity.
	Fragmented float64
	// Pods is the number of pods that arrived, Pending those placed
	// nowhere.
	Pods, Pending int
	// Evaluations counts fragmentation evaluations of nodes, for the
	// policies that score by fragmentation.
	Evaluations int64
	// Defrag is what Options.Defrag's pass did, nil without one.
	Defrag *DefragResult
}

// Unallocated is the GPU left unallocated at the end, in percent of
// capacity.
func (r *Result) Unallocated() float64 { return 100 - r.Allocation[LoadPoints-1] }

// Options configure a replay.
type Options struct {
	Tiebreak Tiebreak
	// FromScratch turns off incremental fragmentation evaluation.
	FromScratch bool
	// ScoreEveryNode scores every node for every pod instead of placing
	// through a scoring.Placer (which scores a node again only when it
	// changed): the same placements, slower; the reference the tests hold
	// the placer to.
	ScoreEveryNode bool
	// Placements, when not nil, receives each pod's node ("" if pending)
	// and the GPUs it took there (their indices on the node; none for a
	// CPU pod).
	Placements func(pod int, node string, devices []int)
	// Choose, when not nil, places each pod where another scheduler does:
	// it is given the pod's index in the workload, the pod, and the node
	// this replay's pipeline would choose ("" for none), and returns the
	// node the pod went to ("" for pending, or a node of the cluster). The
	// replay then places the pod there as it would have (its GPUs chosen
	// by the policy), so the result is the other scheduler's.
	Choose func(pod int, p Pod, best string) (string, error)
	// Final, when not nil, sees the cluster as the replay leaves it.
	Final func(c *Cluster)
	// NodeSize is the weight of ResfitFrag's node-size part (nodeSize:
	// {weight}, sra.Size beside the cluster's largest node); 0 leaves
	// ResfitFrag's default weight (config.DefaultNodeSizeWeight).
	// NoNodeSize leaves the part out, as ResfitFrag did before 2026-12-05.
	NodeSize   float64
	NoNodeSize bool
	// Defrag, when not nil, is a pass after the arrivals that moves placed
	// pods (Result.Defrag); the rest of the Result is before it.
	Defrag *Defrag
}

// Run replays a workload on the nodes under one policy. The seed fixes the
// node priority (TiebreakPermutation), the tie draws (TiebreakFresh) and
// the Random policy's draws.
func Run(policy Policy, nodes []Node, pods []Pod, classes []Class, seed uint64, opts Options, coresPerGPU float64) (*Result, error) {
	order, err := NodeOrder(nodes, seed, opts.Tiebreak)
	if err != nil {
		return nil, err
	}
	c, err := NewCluster(Schema(), nodes, order)
	if err != nil {
		return nil, err
	}
	// The view of when pods end, as a host that follows them keeps it: here
	// pods only arrive, all at one instant, so nothing is ever known of
	// any end (no pod declares one, ends or runs for any time), and it
	// stays empty.
	ends := lifetime.NewNodes(c.Table.Len())
	pipe, device, err := policy.Build(c, Env{Seed: seed, Classes: classes, FromScratch: opts.FromScratch, CoresPerGPU: coresPerGPU, Lifetimes: ends, NodeSize: opts.NodeSize, NoNodeSize: opts.NoNodeSize})
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", policy.Name, err)
	}
	pick, err := newPicker(pipe, c, opts, seed)
	if err != nil {
		return nil, err
	}
	res := &Result{Policy: policy.Name, Seed: seed, Pods: len(pods)}
	var task scoring.Task
	var arrived, allocated int64
	var took []int
	var on []placed   // the pods placed, for a defrag pass
	var pending []int // the pods pending, in arrival order
	point := 0
	capacity := float64(c.CapacityMilliGPU)
	for k, p := range pods {
		// Record every load point this pod's arrival steps past.
		for point < LoadPoints && float64(arrived+p.TotalMilliGPU()) > float64(point)/100*capacity {
			res.Allocation[point] = 100 * float64(allocated) / capacity
			point++
		}
		arrived += p.TotalMilliGPU()
		p.Task(&task)
		row, err := pick.best(&task)
		if err != nil {
			return nil, err
		}
		if row, err = pick.follow(k, p, row); err != nil {
			return nil, err
		}
		took = took[:0]
		if row < 0 {
			res.Pending++
			pending = append(pending, k)
		} else {
			if took, err = c.PlacePod(row, p, device, took); err != nil {
				return nil, err
			}
			if opts.Defrag != nil {
				on = append(on, placed{pod: k, row: row, holds: slices.Clone(took)})
			}
			pipe.Observe(&task) // a policy that learns the workload's classes sees the pod
			allocated += p.TotalMilliGPU()
		}
		if opts.Placements != nil {
			opts.Placements(k, pick.name(row), took)
		}
	}
	for ; point < LoadPoints; point++ {
		res.Allocation[point] = 100 * float64(allocated) / capacity
	}
	m, err := Measure(classes)
	if err != nil {
		return nil, err
	}
	res.Fragmented = 100 * Fragmented(m, c) / capacity
	if opts.Defrag != nil {
		if res.Defrag, err = runDefrag(*opts.Defrag, c, pipe, pick.placer, device, pods, on, pending, m); err != nil {
			return nil, err
		}
	}
	if opts.Final != nil {
		opts.Final(c)
	}
	if e, ok := evaluations(pipe); ok {
		res.Evaluations = e
	}
	return res, nil
}

// picker is where the arrival-only replay puts each pod: the policy's best
// node, through a placer, or, for the fresh tie-break (which needs every
// tied node) and Options.ScoreEveryNode, by scoring every node; then,
// with Options.Choose, wherever the other scheduler put it.
type picker struct {
	c      *Cluster
	pipe   *scoring.Pipeline
	placer *scoring.Placer
	batch  *scoring.Batch
	top    []int
	fresh  bool
	ties   *rand.Rand
	choose func(pod int, p Pod, best string) (string, error)
	rowOf  map[string]int
}

func newPicker(pipe *scoring.Pipeline, c *Cluster, opts Options, seed uint64) (*picker, error) {
	pk := &picker{c: c, pipe: pipe, top: make([]int, 0, 1), fresh: opts.Tiebreak == TiebreakFresh,
		ties: rand.New(rand.NewPCG(seed, 0x74696573)), choose: opts.Choose}
	var err error
	if pk.fresh || opts.ScoreEveryNode {
		pk.batch = pipe.NewBatch(c.Table.Len())
	} else if pk.placer, err = scoring.NewPlacer(pipe, c.Table, scoring.PlacerOptions{MaxClasses: PlacerClasses}); err != nil {
		return nil, err
	}
	if opts.Choose != nil {
		pk.rowOf = make(map[string]int, c.Table.Len())
		for i := range c.Table.Len() {
			pk.rowOf[c.Table.Name(i)] = i
		}
	}
	return pk, nil
}

// best is the policy's node for the task (-1: none).
func (pk *picker) best(task *scoring.Task) (int, error) {
	if pk.placer != nil {
		return pk.placer.Best(task)
	}
	if err := pk.pipe.Score(task, pk.c.Table, pk.batch); err != nil {
		return -1, err
	}
	if pk.top = pk.batch.Top(1, pk.top); len(pk.top) == 0 {
		return -1, nil
	}
	if pk.fresh {
		return pickTie(pk.batch, pk.top[0], pk.ties), nil
	}
	return pk.top[0], nil
}

// follow is the row workload pod k, p, goes to: the policy's best, or
// with Options.Choose the other scheduler's.
func (pk *picker) follow(k int, p Pod, best int) (int, error) {
	if pk.choose == nil {
		return best, nil
	}
	chosen, err := pk.choose(k, p, pk.name(best))
	if err != nil {
		return -1, err
	}
	row, ok := pk.rowOf[chosen]
	switch {
	case !ok && chosen != "":
		return -1, fmt.Errorf("replay: pod %s placed on %q, not a node of the cluster", p.Name, chosen)
	case !ok:
		return -1, nil
	}
	return row, nil
}

// name is row's node ("" for -1).
func (pk *picker) name(row int) string {
	if row < 0 {
		return ""
	}
	return pk.c.Table.Name(row)
}

// NodeOrder is the order of a replay's rows (nodes[order[0]] is row 0),
// which breaks ties between equal top scores (the lower row wins): the
// nodes sorted by name, then, for TiebreakPermutation (or ""), shuffled by
// the seed.
func NodeOrder(nodes []Node, seed uint64, tb Tiebreak) ([]int, error) {
	order := make([]int, len(nodes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(nodes[a].Name, nodes[b].Name) })
	switch tb {
	case TiebreakPermutation, "":
		rng := rand.New(rand.NewPCG(seed, 0x6e6f6465))
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	case TiebreakName, TiebreakFresh:
	default:
		return nil, fmt.Errorf("replay: tie-break %q is not one of %q, %q, %q", tb, TiebreakPermutation, TiebreakName, TiebreakFresh)
	}
	return order, nil
}

// PlacerClasses bounds the pod shapes a replay's placer remembers: the
// openb trace has 151 (cpu, memory, GPU); 1024 × 1213 nodes × 16 bytes is
// 20 MB at most.
const PlacerClasses = 1024

// pickTie draws uniformly among the feasible nodes whose total equals the
// best one's.
func pickTie(b *scoring.Batch, best int, rng *rand.Rand) int {
	top := b.Total(best)
	n := 0
	for i := range b.Len() {
		if b.Feasible(i) && b.Total(i) == top {
			n++
		}
	}
	k := rng.IntN(n)
	for i := range b.Len() {
		if b.Feasible(i) && b.Total(i) == top {
			if k == 0 {
				return i
			}
			k--
		}
	}
	return best
}

// evaluations sums the fragmentation scorers' evaluation counts.
func evaluations(p *scoring.Pipeline) (int64, bool) {
	var total int64
	found := false
	for _, s := range p.Scorers() {
		if f, ok := s.Scorer.(*frag.Scorer); ok {
			total += f.Evaluations()
			found = true
		}
	}
	return total, found
}
