package churn

import "strconv"

// Result is one replay with departures: a policy, a seed, a load, what
// the loop counted, and what each add-on measured (Reports, read through
// the accessor its file defines: Idle, Waits, Floor, Moved, Reserved,
// Starved).
type Result struct {
	Policy string
	Seed   uint64
	Load   float64
	// Setting names what ran beside the loop (AddOns.Name): the tables'
	// moves column.
	Setting string
	// Arrivals counts the pods that arrived in the window (Alive those
	// alive at time 0); Events the arrivals and departures over the whole
	// run.
	Arrivals, Alive, Events int
	// Reports are the add-ons' reports, in the order of their columns in
	// churn.csv: every add-on the replay knows, those that did nothing in
	// this one too.
	Reports []Report
}

// A Report is what an add-on measured over a replay.
type Report interface {
	// Columns are its columns in churn.csv, in order.
	Columns() []Column
}

// Column is one column of churn.csv: its name and a value as written.
type Column struct{ Name, Value string }

// reportOf is the result's report of type R (its zero value when the
// replay has none).
func reportOf[R Report](res *Result) R {
	for _, r := range res.Reports {
		if x, ok := r.(R); ok {
			return x
		}
	}
	var zero R
	return zero
}

// decimal writes a column's figure with four decimals; count a count.
func decimal(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }

func count[N int | int64](n N) string { return strconv.FormatInt(int64(n), 10) }
