package prep

import (
	"context"
	"errors"
	"fmt"
	"image"
	"io/fs"
	"strings"

	"github.com/npcorch/npcorch/imaging"
)

// Job is one output image: what to draw, from which inputs, and where.
type Job struct {
	// Output is the image's path under the output folder, slash-separated
	// and inside it ("P001/t_001.png"). For a job with Err, it only names
	// what failed and need not be a path.
	Output string
	// Owner says whose image it is in errors ("patient P001"); may be "".
	Owner string
	// Draw is what to draw.
	Draw Drawing
	// Err, when set, is why the job could not even be planned: it fails
	// with this reason and nothing is drawn.
	Err error
}

// Drawing is a transform of package imaging with its parameters: an
// Overview, a Grid or a PlaneGroup. The run's imaging.Params apply to
// every drawing.
type Drawing interface {
	// describe says what the image is, for the cache key: drawings with
	// the same description and the same input bytes draw the same pixels.
	describe(p imaging.Params) string
	// inputs are the files the drawing reads, relative to the root.
	inputs() []string
	// tiles are the slice tiles it shows, announced to the tile cache.
	tiles() []tileUse
	draw(ctx context.Context, e *Executor) (image.Image, error)
}

// tileUse is one slice tile an output shows.
type tileUse struct {
	series *imaging.Series
	index  int
}

// Overview draws a pathology slide's overview, Params.Overview pixels on
// its longest side (imaging.ReadOverview).
type Overview struct {
	// Slide is the slide file, relative to the root.
	Slide string
}

func (o Overview) describe(p imaging.Params) string {
	return fmt.Sprintf("overview %s %d", o.Slide, p.Overview)
}
func (o Overview) inputs() []string { return []string{o.Slide} }
func (o Overview) tiles() []tileUse { return nil }
func (o Overview) draw(_ context.Context, e *Executor) (image.Image, error) {
	return imaging.ReadOverview(e.fsys, e.opt.Root, o.Slide, e.limits, e.params.Overview)
}

// Grid draws cells row-major in Columns columns of tiles, outlining their
// boxes (imaging.RenderGrid): a sequence panel, a structure card, a page.
type Grid struct {
	// Kind names the grid in the cache key ("panel", "card", "page").
	Kind    string
	Columns int
	Cells   []imaging.Cell
}

func (g Grid) describe(imaging.Params) string {
	var d strings.Builder
	fmt.Fprintf(&d, "%s cols=%d\n", g.Kind, g.Columns)
	for _, c := range g.Cells {
		fmt.Fprintf(&d, "%s %v %v\n", c.Series.Files[c.Index], c.Series.Meta.PixelSpacing, c.Boxes)
	}
	return d.String()
}

func (g Grid) inputs() []string {
	var in []string
	seen := map[string]bool{}
	for _, c := range g.Cells {
		in = appendOnce(in, seen, c.Series.Sidecar, c.Series.Files[c.Index])
	}
	return in
}

func (g Grid) tiles() []tileUse {
	out := make([]tileUse, len(g.Cells))
	for i, c := range g.Cells {
		out[i] = tileUse{c.Series, c.Index}
	}
	return out
}

func (g Grid) draw(ctx context.Context, e *Executor) (image.Image, error) {
	return imaging.RenderGrid(ctx, e.params, g.Columns, g.Cells)
}

// PlaneGroup draws a plane group: its slices stacked, each under a
// caption (imaging.RenderPlaneGroup).
type PlaneGroup struct {
	Group imaging.GroupSpec
}

func (g PlaneGroup) describe(imaging.Params) string {
	var d strings.Builder
	fmt.Fprintf(&d, "group %s %.6f\n", g.Group.Plane, g.Group.Position)
	for _, row := range g.Group.Rows {
		fmt.Fprintf(&d, "%s %v %q\n", row.Series.Files[row.Index], row.Series.Meta.PixelSpacing, imaging.GroupCaption(row.Series.Meta.Sequence, row.Position))
	}
	return d.String()
}

func (g PlaneGroup) inputs() []string {
	var in []string
	seen := map[string]bool{}
	for _, row := range g.Group.Rows {
		in = appendOnce(in, seen, row.Series.Sidecar, row.Series.Files[row.Index])
	}
	return in
}

func (g PlaneGroup) tiles() []tileUse {
	out := make([]tileUse, len(g.Group.Rows))
	for i, row := range g.Group.Rows {
		out[i] = tileUse{row.Series, row.Index}
	}
	return out
}

func (g PlaneGroup) draw(ctx context.Context, e *Executor) (image.Image, error) {
	return imaging.RenderPlaneGroup(ctx, e.params, g.Group)
}

func appendOnce(list []string, seen map[string]bool, names ...string) []string {
	for _, n := range names {
		if n != "" && !seen[n] {
			seen[n] = true
			list = append(list, n)
		}
	}
	return list
}

// check says why a job cannot run, or nil: its own Err, nothing to draw,
// or an output path that is not a file of its own inside Out.
func (j *Job) check() error {
	switch {
	case j.Err != nil:
		return j.Err
	case j.Draw == nil:
		return errors.New("the job has nothing to draw")
	case !fs.ValidPath(j.Output) || j.Output == "." || j.Output == cacheDir || strings.HasPrefix(j.Output, cacheDir+"/"):
		return fmt.Errorf("output path %q must be relative, stay inside the output folder and outside %s", j.Output, cacheDir)
	}
	return nil
}
