package figure

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// Entry is one line of a legend: its text and what it shows. Thumbs draw
// in the legend only; the plot draws its own series.
type Entry struct {
	Label  string
	Thumbs []plot.Thumbnailer
}

// Gap is the space around a legend's block and between its columns.
const Gap = 8

// Legend is a legend laid out in columns under the plot, as wide as the
// canvas allows: each column's entries and the rectangle they take, and
// the height the block takes from the bottom of the canvas.
type Legend struct {
	Columns []plot.Legend
	Rects   []vg.Rectangle
	Height  vg.Length
}

// Layout lays the entries out under a plot on a canvas w wide: as many
// columns as fit side by side, each as wide as the widest entry, filled
// top down and left to right, centred. A column beside the plot would
// take a third of the width from the data; a legend over the plot would
// hide some of it.
func Layout(entries []Entry, w vg.Length) Legend {
	if len(entries) == 0 {
		return Legend{}
	}
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	var width vg.Length
	for _, e := range entries {
		// A quarter more than measured: a viewer without Liberation Serif
		// or Times may set the text in a wider font (DejaVu Sans: a sixth).
		width = max(width, leg.ThumbnailWidth+leg.TextStyle.Width(" "+e.Label)*5/4)
	}
	column := width + Gap
	cols := max(1, min(len(entries), int((w-Gap)/column)))
	rows := (len(entries) + cols - 1) / cols
	cols = (len(entries) + rows - 1) / rows // as few as the rows need
	rowHeight := leg.TextStyle.Height(" ") + leg.Padding
	height := vg.Length(rows)*rowHeight - leg.Padding
	left := (w - vg.Length(cols)*column + Gap) / 2
	b := Legend{Height: height + 2*Gap}
	for c := range cols {
		l := plot.NewLegend()
		l.Top, l.Left = true, true
		for _, e := range entries[c*rows : min(len(entries), (c+1)*rows)] {
			l.Add(e.Label, e.Thumbs...)
		}
		x := left + vg.Length(c)*column
		b.Columns = append(b.Columns, l)
		b.Rects = append(b.Rects, vg.Rectangle{Min: vg.Point{X: x, Y: Gap}, Max: vg.Point{X: x + width, Y: Gap + height}})
	}
	return b
}
