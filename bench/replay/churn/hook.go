package churn

import (
	"math"

	"github.com/resfit/resfit/scoring"
)

// An addOn runs beside the loop: a metric, moves, a reservation,
// starvation control. The loop calls every add-on at each of its events,
// in the order the add-ons were built (build.go), after taking the event
// into its own state; an add-on keeps its own state and statistics, reads
// the loop's state (view.go) and acts through the loop's steps (start,
// evict, moveTo, retryLater). It embeds quiet and writes the methods of
// what it acts on.
type addOn interface {
	// on is an event of the loop's (eventKind).
	on(e event) error
	// advance says the replay stayed as it is from from to to (seconds),
	// before the loop takes what happens at to.
	advance(from, to float64)
	// due is when the add-on's next round is (+Inf: none); round makes
	// it, at that time. Rounds due at one time are made in the add-ons'
	// order, before the arrivals and departures of that time.
	due() float64
	round() error
	// report is what the add-on measured, once the replay is over.
	report() Report
}

// quiet acts on nothing: what an add-on embeds for the events it
// ignores.
type quiet struct{}

func (quiet) on(event) error           { return nil }
func (quiet) advance(from, to float64) {}
func (quiet) due() float64             { return math.Inf(1) }
func (quiet) round() error             { return nil }

// periodic is quiet with a round every `every` seconds from the start
// (0: none): what an add-on that makes rounds embeds, its round calling
// next.
type periodic struct {
	quiet
	every, at float64
}

func roundsEvery(every float64) periodic {
	p := periodic{every: every, at: math.Inf(1)}
	if every > 0 {
		p.at = every
	}
	return p
}

func (p *periodic) due() float64 { return p.at }

// next moves the clock on to the next round.
func (p *periodic) next() { p.at += p.every }

// eventKind is what happened.
type eventKind int

const (
	// podArrived: pod arrived; it is neither waiting nor running yet.
	podArrived eventKind = iota
	// podPlacing: pod is about to be placed where the policy puts it (its
	// own placement, not a move); task is what the placer is given, which
	// an add-on may annotate (the reservation names its target's job).
	podPlacing
	// podWaits: pod waits at the back of its shape's queue.
	podWaits
	// podStarted: pod started on row, the first time or again after an
	// eviction.
	podStarted
	// podEnded: pod's lifetime is over; it left row.
	podEnded
	// podEvicted: pod was taken off row, to run again what it had left.
	podEvicted
	// podMoved: pod moved from from to row, keeping its departure.
	podMoved
	// rowRoom: row has room since a pod left it or moved off it; the
	// waiting pods are tried on it next.
	rowRoom
)

// event is something that happened in the replay (kind) to a pod, or to
// a row.
type event struct {
	kind eventKind
	pod  int // the pod's index (replay.pods); -1 for rowRoom
	row  int // the row it started on, left or moved to; rowRoom's
	from int // podMoved: the row it left
	task *scoring.Task
}

// rows are the rows the event took a pod off and put a pod on: the row it
// left (it ended, was evicted or moved off; -1 for none) and the row it
// came to (it started or moved there; -1 for none).
func (e event) rows() (left, came int) {
	switch e.kind {
	case podStarted:
		return -1, e.row
	case podEnded, podEvicted:
		return e.row, -1
	case podMoved:
		return e.from, e.row
	}
	return -1, -1
}
