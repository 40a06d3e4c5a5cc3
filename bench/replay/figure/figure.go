// Package figure draws the replay's figures in one house style, for the
// comparison a reader makes: each series in a colour and a marker of its
// own, the legend in columns under the plot (never over the data, never
// past the edge), the axes zoomed to the data, written as SVG or, to look
// at without a browser, as PNG.
package figure

import (
	"image/color"
	"math"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Palette holds 12 colours told apart on screen and in print (Tableau's
// 10, then two more); shapes 8 markers. Series i has colour i and marker
// i (Style), so no two of up to 12 series look alike.
var (
	Palette = []color.Color{
		color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255},
		color.RGBA{214, 39, 40, 255}, color.RGBA{148, 103, 189, 255}, color.RGBA{140, 86, 75, 255},
		color.RGBA{227, 119, 194, 255}, color.RGBA{127, 127, 127, 255}, color.RGBA{188, 189, 34, 255},
		color.RGBA{23, 190, 207, 255}, color.RGBA{0, 0, 128, 255}, color.RGBA{128, 128, 0, 255},
	}
	shapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{},
		draw.RingGlyph{}, draw.PyramidGlyph{}, draw.PlusGlyph{}, draw.SquareGlyph{}}
)

// New is a plot with a title, the axes' labels and a grid.
func New(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	return p
}

// Style is series i's line and marker.
func Style(i int) (draw.LineStyle, draw.GlyphStyle) {
	c := Palette[i%len(Palette)]
	return draw.LineStyle{Color: c, Width: vg.Points(1.5)},
		draw.GlyphStyle{Color: c, Shape: shapes[i%len(shapes)], Radius: vg.Points(3.5)}
}

// MarkedLine is a line through the points in a series' style, and its
// markers on every every-th point from first.
func MarkedLine(pts plotter.XYs, ls draw.LineStyle, gs draw.GlyphStyle, first, every int) (*plotter.Line, *plotter.Scatter, error) {
	line, err := plotter.NewLine(pts)
	if err != nil {
		return nil, nil, err
	}
	line.LineStyle = ls
	var marks plotter.XYs
	for j := first; j < len(pts); j += every {
		marks = append(marks, pts[j])
	}
	scatter, err := plotter.NewScatter(marks)
	if err != nil {
		return nil, nil, err
	}
	scatter.GlyphStyle = gs
	return line, scatter, nil
}

// Zoom sets an axis to the range of the values, on whole steps of step,
// with a tick at each step and a label at every other one when there
// are more than ten.
func Zoom(a *plot.Axis, lo, hi, step float64) {
	a.Min = math.Floor(lo/step) * step
	a.Max = math.Ceil(hi/step) * step
	if a.Max-a.Min < step {
		a.Max = a.Min + step
	}
	n := int(math.Round((a.Max - a.Min) / step))
	scale := math.Pow(10, max(0, math.Ceil(-math.Log10(step)))) // the step's decimals
	var ticks []plot.Tick
	for i := 0; i <= n; i++ {
		v := math.Round((a.Min+float64(i)*step)*scale) / scale
		t := plot.Tick{Value: v}
		if n <= 10 || i%2 == 0 {
			t.Label = strconv.FormatFloat(v, 'f', -1, 64)
		}
		ticks = append(ticks, t)
	}
	a.Tick.Marker = plot.ConstantTicks(ticks)
}

// NiceStep is the step of 1, 2 or 5 times a power of ten that divides
// [lo, hi] into 4 to 10 steps, so that an axis spans the data closely.
func NiceStep(lo, hi float64) float64 {
	span := hi - lo
	if !(span > 0) {
		return 1
	}
	for step := math.Pow(10, math.Floor(math.Log10(span/10))); ; step *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if span/(step*m) <= 10 {
				return step * m
			}
		}
	}
}

// Save writes the plot, with the entries' legend under it (Layout), as an
// image of w × h: an SVG, or a PNG where the path ends in .png.
func Save(p *plot.Plot, entries []Entry, w, h vg.Length, path string) error {
	b := Layout(entries, w)
	var img vg.CanvasWriterTo
	switch {
	case strings.HasSuffix(path, ".png"):
		img = vgimg.PngCanvas{Canvas: vgimg.New(w, h)}
	default:
		// The text is Liberation Serif, metrically Times New Roman, which a
		// browser sets it in; the legend's columns leave room for a wider
		// font.
		img = vgsvg.New(w, h)
	}
	dc := draw.New(img)
	// A little room above the title, for a viewer's taller font, and to
	// the right of the last tick label.
	p.Draw(draw.Crop(dc, 0, -Gap, b.Height, -Gap))
	for i, l := range b.Columns {
		l.Draw(draw.Canvas{Canvas: dc.Canvas, Rectangle: b.Rects[i]})
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := img.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
