package planning

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring/defrag"
)

// Move is one move of a plan as every host carries it out and shows it
// (kubectl resfit defrag's report, the descheduler's plan): the pod, the
// node it leaves and the one its replacement is to land on, what it
// leaves free on From (its requests, by resource, and the GPUs it held
// there, their indices on the node) and the GPUs it takes on To.
type Move struct {
	Pod                  *v1.Pod
	From, To             string
	Frees                map[string]string
	FreesGPUs, TakesGPUs []int
	// Lowered, for a move of a give-back round, is how much it lowers the
	// GPU the workload's pods cannot use, in GPUs; nil otherwise.
	Lowered *float64
	// LetsIn are the pending pods placed once the move is made, before the
	// next, and where.
	LetsIn []Placement
}

// moveJSON is a Move as JSON: the pods by namespace/name.
type moveJSON struct {
	Pod                  string            `json:"pod"`
	From                 string            `json:"from"`
	To                   string            `json:"to"`
	Frees                map[string]string `json:"frees"`
	FreesGPUs            []int             `json:"freesGPUs,omitempty"`
	TakesGPUs            []int             `json:"takesGPUs,omitempty"`
	FragmentedGPULowered *float64          `json:"fragmentedGPULowered,omitempty"`
	LetsIn               []Placement       `json:"letsIn,omitempty"`
}

// MarshalJSON writes the move as kubectl resfit defrag's JSON has it:
// pod, from, to, frees, freesGPUs, takesGPUs, fragmentedGPULowered and
// letsIn, the pods by namespace/name.
func (m Move) MarshalJSON() ([]byte, error) {
	return json.Marshal(moveJSON{Pod: kubebridge.PodName(m.Pod), From: m.From, To: m.To, Frees: m.Frees, FreesGPUs: m.FreesGPUs, TakesGPUs: m.TakesGPUs,
		FragmentedGPULowered: m.Lowered, LetsIn: m.LetsIn})
}

// MarshalJSON writes the placement as {"pod": namespace/name, "node": …}.
func (p Placement) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Pod  string `json:"pod"`
		Node string `json:"node,omitempty"`
	}{kubebridge.PodName(p.Pod), p.Node})
}

// WriteMoveTable writes a plan's moves as a table, one row each: the pod,
// the node it leaves, the node (and GPUs) it goes to, what it frees; with
// the GPU it lowers and the pods it lets in when the first move says what
// it lowers (the moves of a give-back round).
func WriteMoveTable(w io.Writer, moves []Move) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	free := len(moves) > 0 && moves[0].Lowered != nil
	fmt.Fprint(tw, "MOVE\tPOD\tFROM\tTO\tFREES ON FROM")
	if free {
		fmt.Fprint(tw, "\tFRAGMENTED GPU LOWERED\tLETS IN")
	}
	fmt.Fprintln(tw)
	for n, m := range moves {
		var frees []string
		for _, name := range slices.Sorted(maps.Keys(m.Frees)) {
			frees = append(frees, name+" "+m.Frees[name])
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s%s\t%s%s", n+1, kubebridge.PodName(m.Pod), m.From, m.To, GPUsText(m.TakesGPUs), strings.Join(frees, ", "), GPUsText(m.FreesGPUs))
		if free {
			lowered := ""
			if m.Lowered != nil {
				lowered = Rounded(*m.Lowered)
			}
			var in []string
			for _, p := range m.LetsIn {
				in = append(in, kubebridge.PodName(p.Pod)+" → "+p.Node)
			}
			fmt.Fprintf(tw, "\t%s\t%s", lowered, strings.Join(in, ", "))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// WritePlanMoves writes what a plan does after its header line, as every
// host shows a plan: the pending pods that fit with no move, the moves'
// table (WriteMoveTable) after a blank line, and then where the pods the
// moves make room for go.
func WritePlanMoves(w io.Writer, fitsNow []Placement, moves []Move, then []Placement) error {
	var b strings.Builder
	for _, f := range fitsNow {
		fmt.Fprintf(&b, "Pending %s fits with no move: on %s.\n", kubebridge.PodName(f.Pod), f.Node)
	}
	if len(moves) > 0 {
		b.WriteString("\n")
		if err := WriteMoveTable(&b, moves); err != nil {
			return err
		}
	}
	var in []string
	for _, p := range then {
		in = append(in, kubebridge.PodName(p.Pod)+" goes to "+p.Node)
	}
	if len(in) > 0 {
		fmt.Fprintf(&b, "\nThen %s.\n", strings.Join(in, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
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

// Move is a planner's move on the cluster as a host shows it: the pod,
// its nodes, its requests (what it frees) and the GPUs it held and takes.
// Lowered and LetsIn are a round's (Round).
func (p *Planning) Move(m defrag.Move) Move {
	moved := p.cluster.Pods[m.Pod]
	table := p.cluster.Table
	return Move{Pod: p.Pod(m.Pod), From: table.Name(m.From), To: table.Name(m.To),
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
