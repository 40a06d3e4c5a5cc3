package kubebridge

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring/defrag"
)

// MoveRow is one move of a plan as people read it: kubectl resfit
// defrag's table, and a descheduler's plan in its log.
type MoveRow struct {
	Pod, From, To string
	// Frees are the pod's requests, which it leaves free on From, by
	// resource; FreesGPUs the GPUs it held there, TakesGPUs those it takes
	// on To (indices on the nodes).
	Frees                map[string]string
	FreesGPUs, TakesGPUs []int
	// Lowered, for a move that frees GPU, is how much it lowers the GPU
	// the workload's pods cannot use, in GPUs; nil otherwise.
	Lowered *float64
	// LetsIn are the pending pods placed after the move, each as
	// "namespace/name → node".
	LetsIn []string
}

// WriteMoveTable writes a plan's moves as a table, one row each: the pod,
// the node it leaves, the node (and GPUs) it goes to, what it frees; with
// the GPU it lowers and the pods it lets in when the first move says what
// it lowers (the moves that free GPU).
func WriteMoveTable(w io.Writer, rows []MoveRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	free := len(rows) > 0 && rows[0].Lowered != nil
	fmt.Fprint(tw, "MOVE\tPOD\tFROM\tTO\tFREES ON FROM")
	if free {
		fmt.Fprint(tw, "\tFRAGMENTED GPU LOWERED\tLETS IN")
	}
	fmt.Fprintln(tw)
	for n, m := range rows {
		var frees []string
		for _, name := range slices.Sorted(maps.Keys(m.Frees)) {
			frees = append(frees, name+" "+m.Frees[name])
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s%s\t%s%s", n+1, m.Pod, m.From, m.To, GPUsText(m.TakesGPUs), strings.Join(frees, ", "), GPUsText(m.FreesGPUs))
		if free {
			lowered := ""
			if m.Lowered != nil {
				lowered = Rounded(*m.Lowered)
			}
			fmt.Fprintf(tw, "\t%s\t%s", lowered, strings.Join(m.LetsIn, ", "))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// GPUsText names a node's GPUs by index: " (GPU 1)", " (GPUs 2, 3)", ""
// for none.
func GPUsText(gpus []int) string {
	if len(gpus) == 0 {
		return ""
	}
	s := make([]string, len(gpus))
	for i, g := range gpus {
		s[i] = strconv.Itoa(g)
	}
	if len(gpus) == 1 {
		return " (GPU " + s[0] + ")"
	}
	return " (GPUs " + strings.Join(s, ", ") + ")"
}

// Rounded writes a number to two decimals, without trailing zeros: "875",
// "916.67".
func Rounded(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// MoveRow is a planner's move on the cluster as a plan's table shows it:
// the pod, its nodes, its requests (what it frees) and the GPUs it held
// and takes. Lowered and LetsIn are left for the caller.
func (p *Planning) MoveRow(m defrag.Move) MoveRow {
	pod, moved := p.Pod(m.Pod), p.cluster.Pods[m.Pod]
	table := p.cluster.Table
	return MoveRow{Pod: pod.Namespace + "/" + pod.Name, From: table.Name(m.From), To: table.Name(m.To),
		Frees: Quantities(table.Schema(), moved.Task.Requests), FreesGPUs: p.Held(m.Pod), TakesGPUs: m.Holds}
}

// Quantities writes a vector of the schema as quantities by resource name
// (resource.FormatAmount), leaving out zero amounts and pods.
func Quantities(schema *resource.Schema, v resource.Vector) map[string]string {
	out := map[string]string{}
	for i, x := range v {
		if x != 0 && schema.Name(i) != resource.Pods {
			out[schema.Name(i)] = resource.FormatAmount(schema.Name(i), x)
		}
	}
	return out
}

// UnmovableCount is how many pods may not move for one reason: a stable
// identifier (UpperCamelCase, as Kubernetes writes a condition's reason)
// for programs, and the text for people.
type UnmovableCount struct {
	Reason string `json:"reason"`
	Text   string `json:"text"`
	Pods   int    `json:"pods"`
}

// unmovableReasons are the identifiers of the reasons Movable, the
// planner and the descheduler's evictor give, by their text.
var unmovableReasons = map[string]string{
	"finished or being deleted":                        "Finished",
	"system-critical or in kube-system":                "SystemCritical",
	"annotated " + SafeToEvictAnnotation + `: "false"`: "NotSafeToEvict",
	"a static pod":                                             "StaticPod",
	"no controller to recreate it":                             "NoController",
	"a DaemonSet's pod":                                        "DaemonSetPod",
	"it shares a DRA resource claim":                           "SharedClaim",
	"its GPUs are not held as it asks for them":                "DevicesNotFollowed",
	"its DRA claims take different devices on different nodes": "ClaimsDifferByNode",
	"covered by more than one PodDisruptionBudget":             "SeveralBudgets",
	"the descheduler's evictor refuses it":                     "EvictorRefuses",
}

// UnmovableCounts are the counts by reason (Planning.Unmovable), sorted
// by identifier; a reason without one (a host's own) is Other.
func UnmovableCounts(unmovable map[string]int) []UnmovableCount {
	out := []UnmovableCount{}
	for text, n := range unmovable {
		out = append(out, UnmovableCount{Reason: cmp.Or(unmovableReasons[text], "Other"), Text: text, Pods: n})
	}
	slices.SortFunc(out, func(a, b UnmovableCount) int {
		return cmp.Or(cmp.Compare(a.Reason, b.Reason), cmp.Compare(a.Text, b.Text))
	})
	return out
}

// UnmovableText says how many pods may not move and why, by reason: "3
// pods may not move: a DaemonSet's pod (2); system-critical or in
// kube-system (1)."; "" for none.
func UnmovableText(unmovable map[string]int) string {
	if len(unmovable) == 0 {
		return ""
	}
	total := 0
	var parts []string
	for _, why := range slices.Sorted(maps.Keys(unmovable)) {
		total += unmovable[why]
		parts = append(parts, fmt.Sprintf("%s (%d)", why, unmovable[why]))
	}
	pods := "1 pod"
	if total != 1 {
		pods = fmt.Sprintf("%d pods", total)
	}
	return fmt.Sprintf("%s may not move: %s.", pods, strings.Join(parts, "; "))
}
