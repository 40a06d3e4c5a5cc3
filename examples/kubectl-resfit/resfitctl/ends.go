package resfitctl

import (
	"fmt"
	"math"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/examples/kubebridge/planning"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/lifetime"
)

// What explain says of when pods end, for a configuration that reads it
// (ResfitFrag's lifetime term, ResfitLifetime): when the pod is expected
// to end, and for each node when it is expected to empty and from what.

// podEndText is when the pod is expected to end, as people read it, or
// why nothing is known; "" where the configuration reads no lifetimes.
func (sc *scene) podEndText(pod *v1.Pod) (string, error) {
	at, src, ok, err := sc.PodEnd(pod)
	if err != nil || !ok {
		return "", err
	}
	if src == lifetime.Unknown {
		held, needed, _ := sc.LearnedOf(pod)
		return fmt.Sprintf("nothing says when it ends (no deadline, no %s, and the lifetime model has learned how long %d of the pods like it ran, of the %d it predicts from, model: {minSamples}): the lifetime term adds nothing",
			planning.RunsForAnnotation, held, needed), nil
	}
	how := map[lifetime.Source]string{lifetime.Declared: "as it declares", lifetime.Learned: "as pods like it ran"}[src]
	rest := at - planning.Seconds(sc.EndsAt())
	text := "it is expected to end in " + durationText(rest) + ", " + how
	if w, ok := sc.WholeNodes(); ok && rest > 0 && w.Abound() {
		text += fmt.Sprintf("; the lifetime term waits while whole nodes abound (%d of the %d nodes with %d devices have all of them free, more than a fifth) and scores every node 0",
			w.Free, w.Nodes, w.Devices)
	}
	return text, nil
}

// tieBreakText says, for a pipeline with parts that wait for ends
// (lifetime.UntilKnown: the tie-breaker, which also stops waiting once
// lifetime.FillShare of the devices are in use; the node size, which
// waits for an end and then, while no pod has ended, for
// lifetime.OnceKnownFillShare of them: UntilKnown.Fill),
// which of them score the task otherwise for now, and why; "" when none
// does. A part inside one of resfit's kube-scheduler plugins
// (a scoring.ScaledScorer) is named by the plugin's column: "the
// ResfitNodeSize column", "the PackLeastUsed part of the
// ResourceStrategyFit column".
func tieBreakText(p *scoring.Pipeline, task *scoring.Task) string {
	var fill, known, ended []string
	inUse, fillShare := 0.0, 0.0
	var walk func(p *scoring.Pipeline, column string)
	walk = func(p *scoring.Pipeline, column string) {
		for _, s := range p.Scorers() {
			if scaled, ok := s.Scorer.(*scoring.ScaledScorer); ok {
				walk(scaled.Pipeline(), scaled.Name())
				continue
			}
			u, ok := s.Scorer.(*lifetime.UntilKnown)
			if !ok {
				continue
			}
			cur := u.Current(task)
			if cur.Name() == u.Name() {
				continue
			}
			what := u.Name() + " column"
			switch {
			case column != "" && len(p.Scorers()) == 1:
				what = column + " column"
			case column != "":
				what = u.Name() + " part of the " + column + " column"
			}
			inUse = u.InUse()
			switch {
			case u.OnceKnown() && !u.Known(task):
				known = append(known, fmt.Sprintf("the %s scores 0 until an end is known", what))
				continue
			case u.OnceKnown():
				ended = append(ended, fmt.Sprintf("the %s scores 0 until one ends or %.0f%% are in use", what, 100*u.Fill()))
				continue
			}
			fill = append(fill, fmt.Sprintf("the %s scores as %s until one or the other", what, cur.Name()))
			fillShare = u.Fill()
		}
	}
	walk(p, "")
	var parts []string
	if len(fill) > 0 {
		parts = append(parts, fmt.Sprintf("nothing is known of when any pod ends and %.0f%% of the GPUs are in use, under %.0f%%: %s",
			100*inUse, 100*fillShare, strings.Join(fill, ", ")))
	}
	if len(known) > 0 {
		lead := "nothing is known of when any pod ends: "
		if len(fill) > 0 {
			lead = "and "
		}
		parts = append(parts, lead+strings.Join(known, ", "))
	}
	if len(ended) > 0 {
		parts = append(parts, fmt.Sprintf("no pod has been seen to end and %.0f%% of the GPUs are in use: %s", 100*inUse, strings.Join(ended, ", ")))
	}
	return strings.Join(parts, "; ")
}

// emptiesText is when a node is expected to empty and from what its pods'
// ends come: "empty", "in 3h10m: declared by 2, learned for 1", "not
// known: nothing says when 1 of its 3 pods end"; "" where the configuration reads no
// lifetimes.
func (sc *scene) emptiesText(node string) string {
	e, ok := sc.EndsOf(node)
	switch {
	case !ok:
		return ""
	case e.Pods == 0:
		return "empty"
	case e.Pods == 1 && e.Unknown == 1:
		return "not known: nothing says when its pod ends"
	case e.Unknown > 0:
		return fmt.Sprintf("not known: nothing says when %d of its %d pods end", e.Unknown, e.Pods)
	}
	var from []string
	for _, part := range []struct {
		n    int
		what string
	}{{e.Declared, "declared by %d"}, {e.Learned, "learned for %d"}, {e.Lindy, "as long again as run for %d"}} {
		if part.n > 0 {
			from = append(from, fmt.Sprintf(part.what, part.n))
		}
	}
	return "in " + durationText(e.At-planning.Seconds(sc.EndsAt())) + ": " + strings.Join(from, ", ")
}

// durationText is seconds as people read them, to the minute: "under a
// minute", "45m", "3h10m", "4d6h".
func durationText(seconds float64) string {
	d := time.Duration(math.Round(max(seconds, 0)/60)) * time.Minute
	switch {
	case d < time.Minute:
		return "under a minute"
	case d < time.Hour:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", d/time.Hour, (d%time.Hour)/time.Minute)
	}
	return fmt.Sprintf("%dd%dh", d/(24*time.Hour), (d%(24*time.Hour))/time.Hour)
}
