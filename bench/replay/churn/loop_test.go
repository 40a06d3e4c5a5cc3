package churn

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// recorder is an add-on that writes down what the loop tells it, with a
// round every `every` seconds.
type recorder struct {
	r           *replay
	every, next float64
	log         []string
	advanced    [][2]float64
}

func (x *recorder) on(e event) error {
	name := [...]string{"arrived", "placing", "waits", "started", "ended", "evicted", "moved", "room"}[e.kind]
	who := fmt.Sprint(e.pod)
	if e.pod >= 0 {
		who = x.r.pods[e.pod].pod.Name
	}
	x.log = append(x.log, fmt.Sprintf("%g %s %s row %d", x.r.now, name, who, e.row))
	return nil
}

func (x *recorder) advance(from, to float64) { x.advanced = append(x.advanced, [2]float64{from, to}) }
func (x *recorder) due() float64             { return x.next }
func (x *recorder) report() Report           { return nil }

func (x *recorder) round() error {
	x.log = append(x.log, fmt.Sprintf("%g round", x.r.now))
	x.next += x.every
	return nil
}

// The loop's events on TestChurnByHand's replay (one node of 2 GPUs; A
// for 10 s from 0, B of 2 GPUs from 1 for 5 s, C from 2 for 3 s), with an
// add-on's rounds every 5 s: each pod arrives, is placed or waits, starts,
// ends, and its row has room; a round due at the time of a departure is
// made before it; time advances from 0 to the window's end in steps that
// meet.
func TestLoopEvents(t *testing.T) {
	r, arrivals := handWorked(t, Spec{Load: 1, Window: 20})
	rec := &recorder{r: r, every: 5, next: 5}
	r.addOns = append(r.addOns, rec)
	if err := r.run(nil, scripted(arrivals...)); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"0 arrived A row -1", "0 placing A row -1", "0 started A row 0",
		"1 arrived B row -1", "1 placing B row -1", "1 waits B row -1",
		"2 arrived C row -1", "2 placing C row -1", "2 started C row 0",
		"5 round",
		"5 ended C row 0", "5 room -1 row 0",
		"10 round",
		"10 ended A row 0", "10 room -1 row 0", "10 placing B row -1", "10 started B row 0",
		"15 round",
		"15 ended B row 0", "15 room -1 row 0",
		"20 round",
	}
	if !slices.Equal(rec.log, want) {
		t.Errorf("events:\n%q\nwant\n%q", rec.log, want)
	}
	at := 0.0
	for _, a := range rec.advanced {
		if a[0] != at || a[1] < a[0] {
			t.Fatalf("advanced %v after reaching %v", a, at)
		}
		at = a[1]
	}
	if at != 20 || len(r.res.Reports) != 7 || math.IsNaN(r.res.Idle().Idle) {
		t.Errorf("advanced to %v, %d reports", at, len(r.res.Reports))
	}
}
