package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// palette colours the series of a bar chart (Tableau 10).
var palette = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255}, {148, 103, 189, 255},
	{140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255}, {188, 189, 34, 255}, {23, 190, 207, 255},
}

// barSeries is one series of a grouped bar chart: a value per group (nil
// where absent) and, optionally, an interval per group.
type barSeries struct {
	Name         string
	Values       []*float64
	Lower, Upper []*float64
}

// barChart is a grouped bar chart of percentages with interval whiskers
// and an optional dashed reference line (a majority baseline).
type barChart struct {
	Title, YLabel string
	Groups        []string
	Series        []barSeries
	// Reference draws a dashed line at this percentage, named
	// ReferenceName in the legend.
	Reference     *float64
	ReferenceName string
	Width, Height vg.Length
}

// whiskers are interval bars drawn from Lower to Upper, so an interval that
// does not contain its estimate is still drawn where it lies.
type whiskers struct {
	plotter.XYs
	span []float64
}

// YError implements plotter.YErrorer: each bar runs up from its point.
func (w whiskers) YError(i int) (float64, float64) { return 0, w.span[i] }

// png draws the chart at 96 dpi.
func (c barChart) png() ([]byte, error) {
	p, outside := c.frame()
	legend := newLegend(outside)
	n := len(c.Series)
	lay := &barLayout{width: 0.8 / float64(max(n, 1)), showValues: n*len(c.Groups) <= 24}
	for s := range c.Series {
		if err := c.addSeries(p, &legend, lay, s); err != nil {
			return nil, err
		}
	}
	if err := c.addReference(p, &legend); err != nil {
		return nil, err
	}
	if err := c.addValueLabels(p, lay); err != nil {
		return nil, err
	}
	sans(p)
	return c.render(p, legend, outside)
}

// frame is the chart's plot before any bar: its title, a 0–100 % axis
// with head room for a short legend, the groups along x and a horizontal
// grid. outside says the legend is too long for the head room and goes to
// the right of the plot, so it never squeezes the bars.
func (c barChart) frame() (p *plot.Plot, outside bool) {
	p = plot.New()
	p.Title.Text = c.Title
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Title.Padding = vg.Points(6)
	p.Y.Label.Text = c.YLabel
	p.Y.Min = 0
	entries := btoi(c.Reference != nil)
	if len(c.Series) > 1 {
		entries += len(c.Series)
	}
	// A short legend sits in head room above 100 %; a long one goes to the
	// right of the plot, so it never squeezes the bars.
	outside = entries > 3
	p.Y.Max = 106
	if entries > 0 && !outside {
		p.Y.Max = 100 + 8*float64(entries) + 4
	}
	var ticks plot.ConstantTicks
	for v := 0; v <= 100; v += 20 {
		ticks = append(ticks, plot.Tick{Value: float64(v), Label: fmt.Sprint(v)})
	}
	p.Y.Tick.Marker = ticks
	p.NominalX(c.Groups...)
	p.X.Min, p.X.Max = -0.5, float64(len(c.Groups))-0.5
	if rotateLabels(c.Groups) {
		p.X.Tick.Label.Rotation = math.Pi / 5
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
	}
	grid := plotter.NewGrid()
	grid.Vertical.Width = 0
	p.Add(grid)
	return p, outside
}

// newLegend is the chart's legend: at the top, in the page's sans, on the
// left of its own column when it sits outside the plot.
func newLegend(outside bool) plot.Legend {
	legend := plot.NewLegend()
	legend.Top = true
	legend.TextStyle.Font.Size = vg.Points(10)
	legend.TextStyle.Font.Variant = "Sans"
	legend.Left = outside
	return legend
}

// barLayout is how the chart's bars share a group and what is written
// above them.
type barLayout struct {
	// width is one series' share of a group's 0.8.
	width float64
	// showValues writes each bar's value above it (and "n/a" where a
	// series has none), when the chart has few bars.
	showValues bool
	// labels and missing are those texts, gathered over the series.
	labels, missing plotter.XYLabels
}

// addSeries adds series s: a bar per group that has a value, its
// intervals as whiskers, its values to lay, and its legend entry when the
// chart has several series.
func (c barChart) addSeries(p *plot.Plot, legend *plot.Legend, lay *barLayout, s int) error {
	ser := c.Series[s]
	col := palette[s%len(palette)]
	var wk whiskers
	var legendBar *plotter.Polygon
	for g := range c.Groups {
		x := float64(g) - 0.4 + lay.width*(float64(s)+0.5)
		v := at(ser.Values, g)
		if v == nil && lay.showValues {
			lay.missing.XYs = append(lay.missing.XYs, plotter.XY{X: x, Y: 1.5})
			lay.missing.Labels = append(lay.missing.Labels, "n/a")
		}
		if v == nil {
			continue
		}
		half := lay.width / 2 * 0.9
		bar, err := plotter.NewPolygon(plotter.XYs{{X: x - half, Y: 0}, {X: x + half, Y: 0}, {X: x + half, Y: *v}, {X: x - half, Y: *v}})
		if err != nil {
			return fmt.Errorf("plot %q: bar %s/%s: %w", c.Title, ser.Name, c.Groups[g], err)
		}
		bar.Color = col
		bar.LineStyle.Width = 0
		p.Add(bar)
		if legendBar == nil {
			legendBar = bar
		}
		top := *v
		if lo, hi := at(ser.Lower, g), at(ser.Upper, g); lo != nil && hi != nil {
			wk.XYs = append(wk.XYs, plotter.XY{X: x, Y: *lo})
			wk.span = append(wk.span, *hi-*lo)
			top = max(top, *hi)
		}
		if lay.showValues {
			lay.labels.XYs = append(lay.labels.XYs, plotter.XY{X: x, Y: top + 1.5})
			lay.labels.Labels = append(lay.labels.Labels, fmt.Sprintf("%.1f", *v))
		}
	}
	if len(wk.XYs) > 0 {
		eb, err := plotter.NewYErrorBars(wk)
		if err != nil {
			return fmt.Errorf("plot %q: intervals of %s: %w", c.Title, ser.Name, err)
		}
		eb.LineStyle.Width = vg.Points(1)
		eb.CapWidth = vg.Points(min(6, 200*lay.width/float64(max(len(c.Groups), 1))))
		p.Add(eb)
	}
	if legendBar != nil && len(c.Series) > 1 {
		legend.Add(ser.Name, legendBar)
	}
	return nil
}

// addReference adds the chart's reference (a baseline), if it has one: a
// dashed grey line across the groups, with its legend entry.
func (c barChart) addReference(p *plot.Plot, legend *plot.Legend) error {
	if c.Reference == nil {
		return nil
	}
	line, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: *c.Reference}, {X: float64(len(c.Groups)) - 0.5, Y: *c.Reference}})
	if err != nil {
		return fmt.Errorf("plot %q: reference line: %w", c.Title, err)
	}
	line.Color = color.RGBA{90, 90, 90, 255}
	line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	line.Width = vg.Points(1)
	p.Add(line)
	legend.Add(c.ReferenceName, line)
	return nil
}

// addValueLabels writes the values above the bars and "n/a" where a
// series has none, small and grey.
func (c barChart) addValueLabels(p *plot.Plot, lay *barLayout) error {
	for _, l := range []plotter.XYLabels{lay.labels, lay.missing} {
		if len(l.XYs) == 0 {
			continue
		}
		lp, err := plotter.NewLabels(l)
		if err != nil {
			return fmt.Errorf("plot %q: labels: %w", c.Title, err)
		}
		for i := range lp.TextStyle {
			lp.TextStyle[i].Font.Size = vg.Points(8)
			lp.TextStyle[i].Font.Variant = "Sans"
			lp.TextStyle[i].XAlign = draw.XCenter
			lp.TextStyle[i].Color = color.RGBA{60, 60, 60, 255}
		}
		p.Add(lp)
	}
	return nil
}

// render draws the plot and its legend (inside the head room, or in a
// column of its own on the right) at the chart's size and 96 dpi, as PNG.
func (c barChart) render(p *plot.Plot, legend plot.Legend, outside bool) ([]byte, error) {
	img := vgimg.NewWith(vgimg.UseWH(c.Width, c.Height), vgimg.UseDPI(96))
	dc := draw.New(img)
	if outside {
		w := legend.Rectangle(dc).Size().X + vg.Points(14)
		area := dc
		area.Max.X -= w
		p.Draw(area)
		side := dc
		side.Min.X = dc.Max.X - w + vg.Points(8)
		side.Max.Y -= vg.Points(28)
		legend.Draw(side)
	} else {
		p.Legend = legend
		p.Draw(dc)
	}
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&b); err != nil {
		return nil, fmt.Errorf("plot %q: encode PNG: %w", c.Title, err)
	}
	return b.Bytes(), nil
}

// sans sets every text of the plot in Liberation Sans, to match the page.
func sans(p *plot.Plot) {
	for _, f := range []*font.Font{&p.Title.TextStyle.Font, &p.X.Label.TextStyle.Font, &p.Y.Label.TextStyle.Font,
		&p.X.Tick.Label.Font, &p.Y.Tick.Label.Font} {
		f.Variant = "Sans"
	}
}

func at(v []*float64, i int) *float64 {
	if i < len(v) {
		return v[i]
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rotateLabels reports whether group names are too long to sit side by
// side.
func rotateLabels(groups []string) bool {
	total := 0
	for _, g := range groups {
		total += len(g) + 2
	}
	return total > 60
}
