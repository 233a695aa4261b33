package gpu

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"slices"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Timeline line colors: utilization, SM activity, memory.
var (
	colorUtil = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	colorSM   = color.RGBA{R: 44, G: 160, B: 44, A: 255}
	colorMem  = color.RGBA{R: 255, G: 127, B: 14, A: 255}
)

// spanColors shade model spans, one per model, light enough to read lines
// through.
var spanColors = []color.NRGBA{
	{R: 174, G: 199, B: 232, A: 150}, {R: 255, G: 187, B: 120, A: 150}, {R: 152, G: 223, B: 138, A: 150},
	{R: 255, G: 152, B: 150, A: 150}, {R: 197, G: 176, B: 213, A: 150}, {R: 196, G: 156, B: 148, A: 150},
	{R: 247, G: 182, B: 210, A: 150}, {R: 219, G: 219, B: 141, A: 150}, {R: 158, G: 218, B: 229, A: 150},
}

// timeScale picks a readable unit for the time axis.
func timeScale(total time.Duration) (time.Duration, string) {
	switch {
	case total <= 15*time.Minute:
		return time.Second, "s"
	case total <= 10*time.Hour:
		return time.Minute, "min"
	}
	return time.Hour, "h"
}

// segments splits a series at unknown values, so the plot never draws a
// line through a reading that was not taken.
func segments(samples []Sample, gpu int, x func(time.Time) float64, value func(GPUSample) *float64) []plotter.XYs {
	var out []plotter.XYs
	var cur plotter.XYs
	for _, s := range samples {
		var v *float64
		for _, g := range s.GPUs {
			if g.Index == gpu {
				v = value(g)
			}
		}
		if v == nil {
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, plotter.XY{X: x(s.Time), Y: *v})
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func memPercent(g GPUSample) *float64 {
	if g.MemUsedBytes == nil || g.MemTotalBytes == nil || *g.MemTotalBytes == 0 {
		return nil
	}
	return Ptr(100 * float64(*g.MemUsedBytes) / float64(*g.MemTotalBytes))
}

// WriteTimelinePNG draws one row per GPU: NVML utilization, SM activity
// (where GPM reports it) and memory used as a share of the card, over time,
// with the model spans that held the GPU shaded and labelled.
func WriteTimelinePNG(w io.Writer, samples []Sample, spans []Span) error {
	if len(samples) == 0 {
		return errors.New("GPU timeline: no samples to plot")
	}
	tl := newTimeline(samples, spans)
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, false
	legend.TextStyle.Font.Size = vg.Points(9)
	var inLegend []string
	rows := make([][]*plot.Plot, len(tl.gpus))
	for r, idx := range tl.gpus {
		p := plot.New()
		p.Y.Min, p.Y.Max = 0, 105
		p.X.Min, p.X.Max = 0, max(tl.xMax, 1)
		p.Y.Label.Text = fmt.Sprintf("GPU %d (%%)", idx)
		if r == len(tl.gpus)-1 {
			p.X.Label.Text = fmt.Sprintf("time since %s (%s)", tl.t0.UTC().Format("2006-01-02 15:04:05 UTC"), tl.unitName)
		}
		if err := tl.addSpans(p, idx); err != nil {
			return err
		}
		if err := tl.addSeries(p, idx, &legend, &inLegend); err != nil {
			return err
		}
		p.Add(plotter.NewGrid())
		rows[r] = []*plot.Plot{p}
	}
	return tl.draw(w, rows, legend)
}

// timeline is what the GPU timeline plots: the samples on a time axis
// from the first one (in unit, named unitName), the GPUs they name and
// the models whose spans shade them, both sorted.
type timeline struct {
	samples  []Sample
	spans    []Span
	t0       time.Time
	unit     time.Duration
	unitName string
	xMax     float64
	gpus     []int
	models   []string
}

func newTimeline(samples []Sample, spans []Span) *timeline {
	tl := &timeline{samples: samples, spans: spans, t0: samples[0].Time}
	tl.unit, tl.unitName = timeScale(samples[len(samples)-1].Time.Sub(tl.t0))
	tl.xMax = tl.x(samples[len(samples)-1].Time)
	for _, s := range samples {
		for _, g := range s.GPUs {
			if !slices.Contains(tl.gpus, g.Index) {
				tl.gpus = append(tl.gpus, g.Index)
			}
		}
	}
	slices.Sort(tl.gpus)
	for _, sp := range spans {
		if !slices.Contains(tl.models, sp.Model) {
			tl.models = append(tl.models, sp.Model)
		}
	}
	slices.Sort(tl.models)
	return tl
}

// x places t on the time axis.
func (tl *timeline) x(t time.Time) float64 { return float64(t.Sub(tl.t0)) / float64(tl.unit) }

// addSpans shades, on GPU idx's plot, the time each model's replica held
// it, labelled with the model (and replica).
func (tl *timeline) addSpans(p *plot.Plot, idx int) error {
	for _, sp := range tl.spans {
		if !slices.Contains(sp.GPUs, idx) {
			continue
		}
		x0, x1 := max(tl.x(sp.Start), 0), min(tl.x(sp.End), tl.xMax)
		if x1 <= x0 {
			continue
		}
		poly, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: 0}, {X: x1, Y: 0}, {X: x1, Y: 100}, {X: x0, Y: 100}})
		if err != nil {
			return fmt.Errorf("GPU timeline: span %s: %w", sp.Model, err)
		}
		poly.Color = spanColors[slices.Index(tl.models, sp.Model)%len(spanColors)]
		poly.LineStyle.Width, poly.LineStyle.Color = 0, color.Transparent
		name := sp.Model
		if sp.Replica != "" {
			name += " #" + sp.Replica
		}
		labels, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: x0, Y: 101}}, Labels: []string{" " + name}})
		if err != nil {
			return fmt.Errorf("GPU timeline: span %s: %w", sp.Model, err)
		}
		labels.TextStyle[0].Font.Size = vg.Points(8)
		p.Add(poly, labels)
	}
	return nil
}

// addSeries draws GPU idx's utilization, SM activity and memory lines
// (broken where a sample lacks the value), each named in the legend once.
func (tl *timeline) addSeries(p *plot.Plot, idx int, legend *plot.Legend, inLegend *[]string) error {
	series := []struct {
		name  string
		color color.Color
		dash  []vg.Length
		value func(GPUSample) *float64
	}{
		{"GPU utilization (NVML)", colorUtil, nil, func(g GPUSample) *float64 { return g.GPUUtilPercent }},
		{"SM activity (GPM)", colorSM, nil, func(g GPUSample) *float64 { return g.SMActivityPercent }},
		{"memory used (% of card)", colorMem, []vg.Length{vg.Points(4), vg.Points(2)}, memPercent},
	}
	for _, s := range series {
		for k, seg := range segments(tl.samples, idx, tl.x, s.value) {
			line, err := plotter.NewLine(seg)
			if err != nil {
				return fmt.Errorf("GPU timeline: GPU %d %s: %w", idx, s.name, err)
			}
			line.Color, line.Width, line.Dashes = s.color, vg.Points(1.2), s.dash
			p.Add(line)
			if k == 0 && !slices.Contains(*inLegend, s.name) {
				legend.Add(s.name, line)
				*inLegend = append(*inLegend, s.name)
			}
		}
	}
	return nil
}

// draw lays the title and the legend over one row per GPU, 900 points
// wide, and writes the PNG.
func (tl *timeline) draw(w io.Writer, rows [][]*plot.Plot, legend plot.Legend) error {
	const rowHeight, header, width = 150, 44, 900
	height := vg.Points(float64(header + rowHeight*len(tl.gpus)))
	img := vgimg.NewWith(vgimg.UseWH(vg.Points(width), height), vgimg.UseDPI(96))
	full := draw.New(img)
	legend.Draw(draw.Canvas{Canvas: img, Rectangle: vg.Rectangle{
		Min: vg.Point{X: 0, Y: height - vg.Points(header)}, Max: vg.Point{X: vg.Points(width - 12), Y: height - vg.Points(4)}}})
	dc := draw.Canvas{Canvas: img, Rectangle: vg.Rectangle{Min: full.Min, Max: vg.Point{X: full.Max.X, Y: height - vg.Points(header)}}}
	tiles := draw.Tiles{Rows: len(tl.gpus), Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6),
		PadLeft: vg.Points(6), PadRight: vg.Points(12), PadY: vg.Points(4)}
	canvases := plot.Align(rows, tiles, dc)
	title := plot.New().Title.TextStyle
	title.Font.Size, title.XAlign, title.YAlign = vg.Points(13), draw.XLeft, draw.YCenter
	full.FillText(title, vg.Point{X: vg.Points(12), Y: height - vg.Points(20)},
		"GPU timeline: utilization, SM activity and memory per GPU (shaded: model spans)")
	for r := range rows {
		rows[r][0].Draw(canvases[r][0])
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w); err != nil {
		return fmt.Errorf("GPU timeline: writing PNG: %w", err)
	}
	return nil
}
