package resfitctl

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/examples/internal/words"
	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/dra"
	"github.com/resfit/resfit/examples/kubebridge/planning"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
)

// Explanation is how a configuration scores one pod on every node.
type Explanation struct {
	Pod    string `json:"pod"`
	Config string `json:"config"`
	// BoundTo is the node the pod runs on, when it does; it is scored as
	// before it was placed there (its own requests taken off the node).
	BoundTo string `json:"boundTo,omitempty"`
	// Finished is the phase of a pod that has finished (Succeeded,
	// Failed): it uses nothing on BoundTo now.
	Finished string            `json:"finished,omitempty"`
	Requests map[string]string `json:"requests"`
	MaxScore float64           `json:"maxScore"`
	Plugins  []string          `json:"plugins"`
	Feasible int               `json:"feasible"`
	Rejected int               `json:"rejected"`
	Nodes    []NodeExplanation `json:"nodes"`
	Warnings []string          `json:"warnings,omitempty"`
	// Faults are the faults in the pod's objects that kept it from being
	// scored (a claim's selector that fails as kube's allocator runs it):
	// bad input, which kubectl resfit reports after the explanation.
	Faults []string `json:"faults,omitempty"`
	// DRA says the cluster publishes devices through Dynamic Resource
	// Allocation: the table then shows each node's GPUs.
	DRA bool `json:"dra,omitempty"`
	// Claims says the pod has DRA claims to allocate: the table then
	// shows the devices they take on each feasible node.
	Claims bool `json:"-"`
	// PodEnd, under a configuration that reads when pods end (the
	// lifetime term), is when the pod is expected to end and from what,
	// or that nothing says; the table then shows when each node empties.
	PodEnd string `json:"podEnd,omitempty"`
	// ClaimRequests are the requests of the pod's claims not allocated yet,
	// as people read them ("1 mig.nvidia.com (1 selector)", "1
	// gpu.nvidia.com with memory 30Gi").
	ClaimRequests []string `json:"claimRequests,omitempty"`
}

// NodeExplanation is one node's outcome: its total and each plugin's
// weighted contribution when feasible, the filter's reason when not.
type NodeExplanation struct {
	Name     string             `json:"name"`
	Feasible bool               `json:"feasible"`
	Total    float64            `json:"total"`
	Scores   map[string]float64 `json:"scores"`
	Reason   string             `json:"reason"`
	// GPUs, on a cluster with DRA, is the node's GPUs (the device view of
	// nvidia.com/gpu: its DRA devices, or its device plugin's): whole ones
	// free of all, and their model ("2/8 NVIDIA-H100-80GB-HBM3"); "" for a
	// node without.
	GPUs string `json:"gpus,omitempty"`
	// Empties, under a configuration that reads when pods end, is when
	// the node is expected to empty and from what its pods' ends come
	// ("in 3h10m: declared by 2, learned for 1"), or that it is empty, or
	// that nothing says.
	Empties string `json:"empties,omitempty"`
	// Claims, for a pod whose DRA claims are not allocated yet, on a node
	// where they fit: the devices each would take there, as
	// kube-scheduler's allocator picks them.
	Claims []ClaimDevices `json:"claims,omitempty"`
}

// ClaimDevices is what one claim of a pod takes on a node.
type ClaimDevices struct {
	// Claim is namespace/name; a template's, for a claim not made yet.
	Claim   string        `json:"claim"`
	Devices []ClaimDevice `json:"devices"`
}

// ClaimDevice is one device a claim takes: for a share of it (consumable
// capacity), the capacity the share consumes.
type ClaimDevice struct {
	Request  string            `json:"request"`
	Driver   string            `json:"driver"`
	Pool     string            `json:"pool"`
	Device   string            `json:"device"`
	Consumed map[string]string `json:"consumed,omitempty"`
}

// String is the device as the table shows it: its name, and what a share
// of it consumes ("gpu-1 memory=30Gi").
func (d ClaimDevice) String() string {
	s := d.Device
	for _, name := range slices.Sorted(maps.Keys(d.Consumed)) {
		s += " " + name + "=" + d.Consumed[name]
	}
	return s
}

// Explain scores a pod on every node of the cluster under a configuration.
// A pod that runs on a node is scored as it was before it was placed there.
// Nodes come best first (ties by name), then the rejected ones by name.
func Explain(c *Snapshot, cfg *config.Config, configName string, pod *v1.Pod) (*Explanation, error) {
	sc, err := newScene(c, cfg, []*v1.Pod{pod})
	if err != nil {
		return nil, err
	}
	e := &Explanation{
		Pod: kubebridge.PodName(pod), Config: configName, BoundTo: pod.Spec.NodeName, Finished: finishedPhase(pod),
		MaxScore: sc.Pipeline().MaxScore(), Plugins: sc.Pipeline().ScorerNames(), Warnings: sc.warnings(cfg),
		DRA: sc.Cache().DRA() != nil,
	}
	if err := sc.explain(e, pod); err != nil {
		// The pod cannot be scored (a claim's selector fails as kube's
		// allocator runs it: kube-scheduler's Filter reports an error on
		// each node): every node is rejected with the cause, as whatif
		// leaves such a pod pending, whichever part of the pod fails.
		why := "not scored: " + podError(e.Pod, err)
		e.Warnings = append(e.Warnings, "pod "+e.Pod+" "+why)
		e.Faults = append(e.Faults, "pod "+e.Pod+": "+podError(e.Pod, err))
		table := sc.Cache().Table()
		e.Nodes, e.Feasible, e.Rejected, e.Claims = nil, 0, table.Len(), false
		for i := range table.Len() {
			e.Nodes = append(e.Nodes, NodeExplanation{Name: table.Name(i), Reason: why, Scores: map[string]float64{}})
		}
	}
	slices.SortStableFunc(e.Nodes, func(a, b NodeExplanation) int {
		if a.Feasible != b.Feasible {
			if a.Feasible {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.Total, a.Total); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return e, nil
}

// finishedPhase is a finished pod's phase (kubebridge.Finished), "" for
// another.
func finishedPhase(pod *v1.Pod) string {
	if kubebridge.Finished(pod) {
		return string(pod.Status.Phase)
	}
	return ""
}

// explain scores the pod on every node into e: its requests, its claims'
// requests, and each node's scores or why it is rejected.
func (sc *scene) explain(e *Explanation, pod *v1.Pod) error {
	schema, table := sc.Cache().Schema(), sc.Cache().Table()
	task, err := sc.Task(pod)
	if err != nil {
		return err
	}
	if err := sc.Pipeline().OverrideError(task.Task); err != nil {
		e.Warnings = append(e.Warnings, "pod "+e.Pod+": "+err.Error())
	}
	if e.PodEnd, err = sc.podEndText(pod); err != nil {
		return err
	}
	if note := tieBreakText(sc.Pipeline(), task.Task); note != "" {
		e.PodEnd += "; " + note
	}
	batch := sc.Pipeline().NewBatch(table.Len())
	e.Requests = planning.Quantities(schema, task.Task.Requests)
	if e.DRA {
		requests, err := sc.Cache().DRA().ClaimRequests(pod)
		if err != nil {
			return err
		}
		for _, r := range requests {
			e.ClaimRequests = append(e.ClaimRequests, requestDescription(r))
		}
	}
	err = sc.Score(task, batch, func(t *scoring.Task, rows []int) error {
		for _, i := range rows {
			n := NodeExplanation{Name: table.Name(i), Feasible: t != nil && batch.Feasible(i), Scores: map[string]float64{}, Empties: sc.emptiesText(table.Name(i))}
			if e.DRA {
				n.GPUs = sc.gpuText(i)
			}
			if n.Feasible && e.DRA {
				claims, err := sc.claimDevices(pod, n.Name)
				if err != nil {
					return err
				}
				n.Claims = claims
				e.Claims = e.Claims || len(claims) > 0
			}
			switch {
			case n.Feasible:
				e.Feasible++
				n.Total = batch.Total(i)
				for j, name := range e.Plugins {
					n.Scores[name] = batch.Contribution(i, j)
				}
			case t == nil:
				e.Rejected++
				n.Reason = claimsUnsatisfiable
				if why, err := sc.Cache().DRA().Unsatisfied(pod, n.Name); err != nil {
					return err
				} else if why != "" {
					n.Reason = "DRA: " + why
				}
			default:
				e.Rejected++
				n.Reason = batch.RejectedBy(i) + ": " + batch.Reason(i)
			}
			e.Nodes = append(e.Nodes, n)
		}
		return nil
	})
	return err
}

// Top keeps the best n feasible nodes and the first n rejected ones (all
// when n ≤ 0).
func (e *Explanation) Top(n int) *Explanation {
	if n <= 0 {
		return e
	}
	out := *e
	out.Nodes = nil
	feasible, rejected := 0, 0
	for _, node := range e.Nodes {
		if node.Feasible && feasible < n {
			feasible++
			out.Nodes = append(out.Nodes, node)
		} else if !node.Feasible && rejected < n {
			rejected++
			out.Nodes = append(out.Nodes, node)
		}
	}
	return &out
}

// InputFaults are Faults (a report's faults in its input).
func (e *Explanation) InputFaults() []string { return e.Faults }

// WriteJSON writes the explanation as one JSON object.
func (e *Explanation) WriteJSON(w io.Writer) error {
	return writeJSON(w, e)
}

// WriteTable writes the explanation for people: the pod, its requests and
// the highest score the configuration gives; the nodes kept, best first,
// with scores rounded to two decimals; the rejected ones with their reason;
// and how many were left out.
func (e *Explanation) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Pod %s, requesting %s, under %s: scores run from 0 to %s.\n", e.Pod, requestText(e.Requests), e.Config, Rounded(e.MaxScore))
	if len(e.ClaimRequests) > 0 {
		fmt.Fprintf(&b, "Its claims ask for %s.\n", strings.Join(e.ClaimRequests, "; "))
	}
	if e.BoundTo != "" && e.Finished != "" {
		fmt.Fprintf(&b, "It ran on %s and has finished (%s): it uses nothing there now; it is scored as before it was placed there.\n", e.BoundTo, e.Finished)
	} else if e.BoundTo != "" {
		fmt.Fprintf(&b, "It runs on %s; it is scored as before it was placed there.\n", e.BoundTo)
	}
	if e.PodEnd != "" {
		fmt.Fprintf(&b, "When pods end: %s.\n", e.PodEnd)
	}
	for _, w := range e.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "RANK\tNODE\tTOTAL")
	for _, p := range e.Plugins {
		fmt.Fprint(tw, "\t"+p)
	}
	if e.DRA {
		fmt.Fprint(tw, "\tGPUS FREE")
	}
	if e.Claims {
		fmt.Fprint(tw, "\tCLAIMS TAKE")
	}
	if e.PodEnd != "" {
		fmt.Fprint(tw, "\tEMPTIES")
	}
	fmt.Fprintln(tw)
	shownFeasible, shownRejected := 0, 0
	for _, n := range e.Nodes {
		if !n.Feasible {
			continue
		}
		shownFeasible++
		fmt.Fprintf(tw, "%d\t%s\t%s", shownFeasible, n.Name, Rounded(n.Total))
		for _, p := range e.Plugins {
			fmt.Fprint(tw, "\t"+Rounded(n.Scores[p]))
		}
		if e.DRA {
			fmt.Fprint(tw, "\t"+cmp.Or(n.GPUs, "-"))
		}
		if e.Claims {
			fmt.Fprint(tw, "\t"+claimsText(n.Claims))
		}
		if e.PodEnd != "" {
			fmt.Fprint(tw, "\t"+n.Empties)
		}
		fmt.Fprintln(tw)
	}
	if shownFeasible == 0 {
		fmt.Fprintln(tw, "-\tno node can take the pod\t-")
	}
	tw.Flush()
	for _, n := range e.Nodes {
		if !n.Feasible {
			if shownRejected == 0 {
				b.WriteString("\nRejected:\n")
			}
			shownRejected++
			if e.DRA && n.GPUs != "" {
				fmt.Fprintf(&b, "  %s (GPUs free %s): %s\n", n.Name, n.GPUs, n.Reason)
			} else {
				fmt.Fprintf(&b, "  %s: %s\n", n.Name, n.Reason)
			}
		}
	}
	if more := e.Feasible - shownFeasible + e.Rejected - shownRejected; more > 0 {
		fmt.Fprintf(&b, "\n%d feasible and %d rejected nodes in all; --top 0 shows every one.\n", e.Feasible, e.Rejected)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// requestDescription is a claim's request as people read it: each
// alternative's count (or all) of its class, its own selectors counted,
// the capacity it asks of a device; alternatives joined by "or".
func requestDescription(r dra.Request) string {
	var alts []string
	for _, a := range r.Alternatives {
		text := fmt.Sprintf("%d %s", a.Count, a.Class)
		if a.All {
			text = "all " + a.Class
		}
		if n := a.Selectors(); n > 0 {
			text += " (" + words.Plural(n, "selector") + ")"
		}
		var capacity []string
		for _, name := range slices.Sorted(maps.Keys(a.Capacity)) {
			q := a.Capacity[name]
			capacity = append(capacity, string(name)+" "+q.String())
		}
		if len(capacity) > 0 {
			text += " with " + strings.Join(capacity, ", ")
		}
		alts = append(alts, text)
	}
	return strings.Join(alts, " or ")
}

// claimsText is what a pod's claims take on a node, as the table shows
// it: the devices, a claim's joined by commas, claims by semicolons.
func claimsText(claims []ClaimDevices) string {
	var parts []string
	for _, c := range claims {
		var devices []string
		for _, d := range c.Devices {
			devices = append(devices, d.String())
		}
		parts = append(parts, strings.Join(devices, ", "))
	}
	return cmp.Or(strings.Join(parts, "; "), "-")
}

// requestText writes requests as "cpu 8, nvidia.com/gpu 2".
func requestText(r map[string]string) string {
	if len(r) == 0 {
		return "nothing"
	}
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(r)) {
		parts = append(parts, name+" "+r[name])
	}
	return strings.Join(parts, ", ")
}
