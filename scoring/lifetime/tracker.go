package lifetime

import (
	"container/heap"
	"math"
	"slices"
	"sync"
)

// Pod is a running pod as a Tracker follows it.
type Pod struct {
	// Row is the row (node) it runs on.
	Row int
	// Started is when it started.
	Started float64
	// Declared is the end it declares (a deadline, an estimate); 0 for
	// none. A pod past its declared end is predicted by the Model from
	// then on.
	Declared float64
	// Keys are what the Model knows it by, most specific first (an owner,
	// a shape); the Tracker keeps them, so the caller must not change them
	// afterwards.
	Keys []string
	// Size is how much of the size resource it holds (GPUs), for FreeAt.
	Size int64
	// NotStarted says it holds its row but has not started yet (a
	// scheduler assumed it there, or its kubelet has not started it): its
	// age counts as 0 whatever Started says, so nothing is guessed from
	// how long it has run (the Lindy rule) until it is started again with
	// its start (Start, Replace).
	NotStarted bool
}

// Tracker follows the running pods of a host's rows, each known by an ID
// of type K: each pod's expected end and each row's empty time (Nodes),
// learning from the pods that end (Model). It is stateful and safe for
// concurrent use.
type Tracker[K comparable] struct {
	model *Model
	nodes *Nodes
	mu    sync.Mutex
	pods  map[K]*tracked[K]
	onRow [][]*tracked[K]
	due   dueHeap[K]
}

// tracked is a pod the Tracker follows: its expected end and where that
// comes from, its place in its row's list and in the due heap.
type tracked[K comparable] struct {
	id     K
	pod    Pod
	end    float64
	source Source
	// due is when it is next predicted again; index its place in the due
	// heap, -1 when not in it; slot its place in onRow[pod.Row].
	due         float64
	index, slot int
}

// NewTracker follows no pod yet on rows rows, learning into model.
func NewTracker[K comparable](model *Model, rows int) *Tracker[K] {
	nodes := NewNodes(rows)
	nodes.model = model
	return &Tracker[K]{model: model, nodes: nodes, pods: map[K]*tracked[K]{}, onRow: make([][]*tracked[K], rows)}
}

// Grow gives the Tracker rows rows, when it has fewer (a host's table
// gained nodes); the new rows run no pod. The view (Nodes) stays the same
// object.
func (t *Tracker[K]) Grow(rows int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if rows <= len(t.onRow) {
		return
	}
	t.onRow = append(t.onRow, make([][]*tracked[K], rows-len(t.onRow))...)
	t.nodes.mu.Lock()
	t.nodes.rows = append(t.nodes.rows, make([]rowEnds, rows-len(t.nodes.rows))...)
	t.nodes.mu.Unlock()
}

// Nodes is the view of the rows' empty times that the Tracker keeps.
func (t *Tracker[K]) Nodes() *Nodes { return t.nodes }

// Model is what the Tracker learns into.
func (t *Tracker[K]) Model() *Model { return t.model }

// Expect is when a pod that started at started is expected to end, seen
// at now (≥ started), and from what: its declared end while that is
// after now, else the Model's prediction for its keys at its age, now −
// started (Model.Remaining). Unknown is 0.
func (t *Tracker[K]) Expect(keys []string, started, declared, now float64) (float64, Source) {
	if declared > now {
		return declared, Declared
	}
	rest, src := t.model.Remaining(keys, now-started)
	if src == Unknown {
		return 0, Unknown
	}
	return now + rest, src
}

// Start follows pod id from now on its row (a pod it follows already is
// moved there, its end predicted again). A row outside the Tracker's
// rows is a programming error: Start panics.
func (t *Tracker[K]) Start(id K, p Pod, now float64) {
	if p.Row < 0 || p.Row >= len(t.onRow) {
		panic("lifetime: Tracker.Start on a row outside its rows")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.start(id, p, now)
}

// start is Start under the Tracker's lock.
func (t *Tracker[K]) start(id K, p Pod, now float64) {
	if old, ok := t.pods[id]; ok {
		t.remove(old)
	}
	x := &tracked[K]{id: id, pod: p, index: -1}
	x.slot = len(t.onRow[p.Row])
	t.onRow[p.Row] = append(t.onRow[p.Row], x)
	t.pods[id] = x
	t.nodes.mu.Lock()
	t.nodes.rows[p.Row].pods++
	t.nodes.pods++
	t.nodes.count(p.Row, Unknown, 1) // x.source until predicted
	t.predict(x, now)
	t.nodes.mu.Unlock()
}

// Replace makes the pods row runs exactly these, for a host that reads a
// node's pods whole (a scheduler's snapshot of the node): a pod of the
// row not among ids is forgotten without learning from it (a host learns
// from the pods that end apart, End or Model.Observe), one among them
// that the row ran already is kept as it was predicted unless what it
// says changed (its start or declared end), and the others start; pods[i]
// is ids[i]'s, its Row set to row. A row outside the Tracker's rows, or
// ids and pods of different lengths, is a programming error: Replace
// panics.
func (t *Tracker[K]) Replace(row int, ids []K, pods []Pod, now float64) {
	if row < 0 || row >= len(t.onRow) || len(ids) != len(pods) {
		panic("lifetime: Tracker.Replace on a row outside its rows, or with ids and pods apart")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	keep := make(map[K]bool, len(ids))
	for i, id := range ids {
		p := pods[i]
		p.Row = row
		if x, ok := t.pods[id]; !ok || x.pod.Row != row || x.pod.Started != p.Started || x.pod.Declared != p.Declared || x.pod.NotStarted != p.NotStarted {
			t.start(id, p, now)
		}
		keep[id] = true
	}
	for _, x := range slices.Clone(t.onRow[row]) {
		if !keep[x.id] {
			t.remove(x)
		}
	}
}

// End says pod id ended at time at: the Model learns its lifetime (at −
// its start) and the Tracker forgets it. An ID it does not follow is
// ignored.
func (t *Tracker[K]) End(id K, at float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	x, ok := t.pods[id]
	if !ok {
		return
	}
	t.model.Observe(x.pod.Keys, at-x.pod.Started)
	t.remove(x)
}

// Forget stops following pod id without learning from it (it was
// evicted, or deleted before it ended on its own).
func (t *Tracker[K]) Forget(id K) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if x, ok := t.pods[id]; ok {
		t.remove(x)
	}
}

// Advance brings the Tracker to now: every pod whose expected end is not
// after now is predicted again at its age (it outlived its prediction),
// and so is every pod whose end was not known.
func (t *Tracker[K]) Advance(now float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.nodes.mu.Lock()
	defer t.nodes.mu.Unlock()
	t.nodes.now = now
	for len(t.due) > 0 && t.due[0].due <= now {
		t.predict(t.due[0], now)
	}
}

// predict works x's end out again at now, under both locks, with its
// row's count by source and latest end. The pod is due to be predicted
// again at its end, or, when its end is not known, as soon as it has an
// age (then the Lindy rule knows something; never, for a pod not started
// yet); never at now itself, so that Advance ends.
func (t *Tracker[K]) predict(x *tracked[K], now float64) {
	t.nodes.count(x.pod.Row, x.source, -1)
	started := x.pod.Started
	if x.pod.NotStarted {
		started = now // its age is 0
	}
	x.end, x.source = t.Expect(x.pod.Keys, started, x.pod.Declared, now)
	t.nodes.count(x.pod.Row, x.source, 1)
	after := math.Nextafter(max(now, x.pod.Started), math.Inf(1))
	switch {
	case x.source != Unknown:
		x.due = max(x.end, after)
	case x.pod.NotStarted:
		x.due = math.Inf(1) // no age will tell more until it starts
	default:
		x.due = after
	}
	if x.index < 0 {
		heap.Push(&t.due, x)
	} else {
		heap.Fix(&t.due, x.index)
	}
	t.latest(x.pod.Row)
}

// latest works row's latest known end out again, under the view's lock.
func (t *Tracker[K]) latest(row int) {
	l := 0.0
	for _, x := range t.onRow[row] {
		if x.source != Unknown {
			l = max(l, x.end)
		}
	}
	t.nodes.rows[row].latest = l
}

// remove forgets x, under the Tracker's lock.
func (t *Tracker[K]) remove(x *tracked[K]) {
	row := t.onRow[x.pod.Row]
	last := row[len(row)-1]
	row[x.slot], last.slot = last, x.slot
	t.onRow[x.pod.Row] = row[:len(row)-1]
	delete(t.pods, x.id)
	if x.index >= 0 {
		heap.Remove(&t.due, x.index)
	}
	t.nodes.mu.Lock()
	t.nodes.rows[x.pod.Row].pods--
	t.nodes.pods--
	t.nodes.count(x.pod.Row, x.source, -1)
	t.latest(x.pod.Row)
	t.nodes.mu.Unlock()
}

// FreeAt is when at least need of the size resource is expected to be
// free on row, which has free of it now: now when it is already, else the
// expected end of the pod whose leaving frees enough (the row's pods
// leaving in the order of their ends), +Inf when only pods whose end is
// not known would free it or all of them would not.
func (t *Tracker[K]) FreeAt(row int, free, need int64) float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.nodes.Now()
	if free >= need {
		return now
	}
	if row < 0 || row >= len(t.onRow) {
		return math.Inf(1)
	}
	pods := slices.Clone(t.onRow[row])
	slices.SortFunc(pods, compareEnds[K])
	for _, x := range pods {
		if x.source == Unknown {
			break
		}
		if free += x.pod.Size; free >= need {
			return max(x.end, now)
		}
	}
	return math.Inf(1)
}

// compareEnds orders known ends first, earliest first.
func compareEnds[K comparable](a, b *tracked[K]) int {
	ka, kb := a.source != Unknown, b.source != Unknown
	switch {
	case ka != kb && ka:
		return -1
	case ka != kb:
		return 1
	case a.end < b.end:
		return -1
	case a.end > b.end:
		return 1
	}
	return 0
}

// dueHeap orders the tracked pods by when they are next predicted again.
type dueHeap[K comparable] []*tracked[K]

func (h dueHeap[K]) Len() int { return len(h) }
func (h dueHeap[K]) Less(i, j int) bool {
	return h[i].due < h[j].due
}
func (h dueHeap[K]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *dueHeap[K]) Push(x any) {
	t := x.(*tracked[K])
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *dueHeap[K]) Pop() any {
	old := *h
	x := old[len(old)-1]
	x.index = -1
	*h = old[:len(old)-1]
	return x
}
