package imaging

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"math"

	"golang.org/x/image/font/basicfont"
)

// Params are the preparation parameters; every cache key includes them.
type Params struct {
	// Tile is the side of one slice tile (512 in the paper).
	Tile int `json:"tile"`
	// Caption is the height of the caption band above each plane-group
	// tile (36: 1644 = 3 × (36 + 512)).
	Caption int `json:"caption"`
	// BoxLine is the thickness of a card's yellow rectangle, px.
	BoxLine int `json:"box_line"`
	// PanelGrid is the side of a sequence panel's grid (3 → 3×3).
	PanelGrid int `json:"panel_grid"`
	// Pages, PageColumns and PageRows shape the CarePath MRI pages: Pages
	// pages of len(PageRows) rows × PageColumns columns; each row shows one
	// sequence, and the Pages×PageColumns positions of a sequence are
	// sampled evenly from its first to its last slice.
	Pages       int      `json:"pages"`
	PageColumns int      `json:"page_columns"`
	PageRows    []string `json:"page_rows"`
	// CardRows are the sequences of a structure card's rows.
	CardRows []string `json:"card_rows"`
	// Overview is the longest side of a pathology overview, px.
	Overview int `json:"overview"`
}

// CardSequences are the rows of a structure card (prompt A7).
var CardSequences = []string{SeqT1Ax, SeqT2Ax, SeqT1CAx, SeqT1CCorFS}

// DefaultParams returns the paper's geometry: 512-px tiles under 36-px
// captions, 3×3 panels, 4×3 cards with a 3-px box, ten 4×3 CarePath pages
// (30 positions per sequence) and 1024-px overviews.
func DefaultParams() Params {
	return Params{
		Tile: 512, Caption: 36, BoxLine: 3, PanelGrid: 3,
		Pages: 10, PageColumns: 3, PageRows: append([]string(nil), CardSequences...),
		CardRows: append([]string(nil), CardSequences...),
		Overview: 1024,
	}
}

// Validate checks the parameters are usable.
func (p Params) Validate() error {
	switch {
	case p.Tile < 16 || p.Tile > 4096:
		return fmt.Errorf("tile size %d: want 16..4096", p.Tile)
	case p.Caption < 0 || p.Caption > 512:
		return fmt.Errorf("caption band %d: want 0..512", p.Caption)
	case p.BoxLine < 1 || p.BoxLine > p.Tile/4:
		return fmt.Errorf("box line %d: want 1..%d", p.BoxLine, p.Tile/4)
	case p.PanelGrid < 1 || p.PanelGrid > 8:
		return fmt.Errorf("panel grid %d: want 1..8", p.PanelGrid)
	case p.Pages < 1 || p.Pages > 100 || p.PageColumns < 1 || p.PageColumns > 8 || len(p.PageRows) == 0 || len(p.PageRows) > 8:
		return fmt.Errorf("pages %d × %d columns × %d rows: out of range", p.Pages, p.PageColumns, len(p.PageRows))
	case len(p.CardRows) == 0 || len(p.CardRows) > 8:
		return fmt.Errorf("card rows %d: want 1..8", len(p.CardRows))
	case p.Overview < 16 || p.Overview > 16384:
		return fmt.Errorf("overview size %d: want 16..16384", p.Overview)
	}
	return nil
}

// Fit says where a slice landed in its tile: the resized slice is W×H at
// (X, Y), scaled from SrcW×SrcH pixels.
type Fit struct {
	X, Y, W, H, SrcW, SrcH int
}

// FitTile resizes a slice into a tile×tile square keeping its physical
// aspect (pixel spacing: row spacing, column spacing), centred on black,
// with Pillow-identical Lanczos resampling.
func FitTile(g *image.Gray, spacing [2]float64, tile int) (*image.Gray, Fit, error) {
	return fitTile(g, spacing, tile, nil)
}

// fitTile is FitTile with the coefficients of memo (nil: computed).
func fitTile(g *image.Gray, spacing [2]float64, tile int, memo *coeffMemo) (*image.Gray, Fit, error) {
	b := g.Bounds()
	sw, sh := b.Dx(), b.Dy()
	if sw <= 0 || sh <= 0 {
		return nil, Fit{}, fmt.Errorf("empty slice")
	}
	rs, cs := spacing[0], spacing[1]
	if !(rs > 0) || !(cs > 0) {
		rs, cs = 1, 1
	}
	pw, ph := float64(sw)*cs, float64(sh)*rs
	s := math.Min(float64(tile)/pw, float64(tile)/ph)
	w := clampInt(int(math.Floor(pw*s+0.5)), 1, tile)
	h := clampInt(int(math.Floor(ph*s+0.5)), 1, tile)
	r, err := resizeGray(g, w, h, memo)
	if err != nil {
		return nil, Fit{}, err
	}
	fit := Fit{X: (tile - w) / 2, Y: (tile - h) / 2, W: w, H: h, SrcW: sw, SrcH: sh}
	out := image.NewGray(image.Rect(0, 0, tile, tile))
	for y := 0; y < h; y++ {
		copy(out.Pix[(fit.Y+y)*out.Stride+fit.X:], r.Pix[y*r.Stride:y*r.Stride+w])
	}
	return out, fit, nil
}

// MapBox maps a box in slice pixels (x0,y0 inclusive; x1,y1 exclusive) to
// tile pixels: the smallest tile rectangle covering it.
func (f Fit) MapBox(x0, y0, x1, y1 int) image.Rectangle {
	fx := func(x int) int { return f.X + int(math.Floor(float64(x)*float64(f.W)/float64(f.SrcW))) }
	cx := func(x int) int { return f.X + int(math.Ceil(float64(x)*float64(f.W)/float64(f.SrcW))) }
	fy := func(y int) int { return f.Y + int(math.Floor(float64(y)*float64(f.H)/float64(f.SrcH))) }
	cy := func(y int) int { return f.Y + int(math.Ceil(float64(y)*float64(f.H)/float64(f.SrcH))) }
	r := image.Rect(fx(x0), fy(y0), cx(x1), cy(y1))
	return r.Intersect(image.Rect(f.X, f.Y, f.X+f.W, f.Y+f.H))
}

func clampInt(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

// paste copies src (a tile) into dst at (x, y) with row copies.
func paste(dst, src *image.Gray, x, y int) {
	b := src.Bounds()
	for r := 0; r < b.Dy(); r++ {
		o := src.PixOffset(b.Min.X, b.Min.Y+r)
		copy(dst.Pix[(y+r)*dst.Stride+x:], src.Pix[o:o+b.Dx()])
	}
}

// Caption text geometry: basicfont 7×13 glyphs drawn at twice their size,
// white on the black band, left margin 8 px, vertically centred.
const (
	captionScale  = 2
	captionMargin = 8
)

// DrawCaption writes text in white into the band of height band whose top
// left corner is (x, y) and width is width, clipped to the band.
func DrawCaption(dst *image.Gray, x, y, width, band int, text string) {
	face := basicfont.Face7x13
	gh := face.Height * captionScale
	top := y + (band-gh)/2
	if top < y {
		top = y
	}
	mask := face.Mask.(*image.Alpha)
	cx := x + captionMargin
	for _, r := range text {
		if r < 0x20 || r >= 0x7f {
			r = '?'
		}
		if cx+face.Width*captionScale > x+width {
			break
		}
		gy := int(r-0x20) * face.Height
		for yy := 0; yy < face.Height; yy++ {
			for xx := 0; xx < face.Width; xx++ {
				if mask.Pix[(gy+yy)*mask.Stride+xx] < 0x80 {
					continue
				}
				for dy := 0; dy < captionScale; dy++ {
					py := top + yy*captionScale + dy
					if py >= y+band {
						continue
					}
					row := dst.Pix[py*dst.Stride:]
					for dx := 0; dx < captionScale; dx++ {
						row[cx+xx*captionScale+dx] = 255
					}
				}
			}
		}
		cx += face.Advance * captionScale
	}
}

// GroupCaption is the caption of one plane-group tile: the sequence and
// the slice's position along its normal.
func GroupCaption(sequence string, position float64) string {
	return fmt.Sprintf("%s  %+.1f mm", sequence, position)
}

// RenderPlaneGroup stacks the group's slices vertically, each tile under a
// caption band: width Tile, height len(rows) × (Caption + Tile).
func RenderPlaneGroup(ctx context.Context, p Params, g GroupSpec) (*image.Gray, error) {
	step := p.Caption + p.Tile
	out := image.NewGray(image.Rect(0, 0, p.Tile, step*len(g.Rows)))
	for k, row := range g.Rows {
		tile, _, err := row.Series.Tile(ctx, row.Index, p.Tile)
		if err != nil {
			return nil, err
		}
		DrawCaption(out, 0, k*step, p.Tile, p.Caption, GroupCaption(row.Series.Meta.Sequence, row.Position))
		paste(out, tile, 0, k*step+p.Caption)
	}
	return out, nil
}

// Cell is one tile of a grid: a slice and the boxes to outline on it, in
// slice pixels.
type Cell struct {
	Series *Series
	Index  int
	Boxes  []image.Rectangle
}

// RenderGrid lays cells out row-major in cols columns of Tile×Tile tiles
// with no text. Without boxes the result is *image.Gray; with boxes it is
// *image.Paletted (256 entries: the grays present plus yellow for the
// outlines, in place of a gray level the image does not use) or, when all
// 256 gray levels are used, a *BoxedGray (written as 8-bit RGB).
func RenderGrid(ctx context.Context, p Params, cols int, cells []Cell) (image.Image, error) {
	if cols <= 0 || len(cells) == 0 {
		return nil, fmt.Errorf("grid of %d cells in %d columns", len(cells), cols)
	}
	rows := (len(cells) + cols - 1) / cols
	out := image.NewGray(image.Rect(0, 0, cols*p.Tile, rows*p.Tile))
	var outline []image.Rectangle // tile-space rectangles in canvas coordinates
	for i, c := range cells {
		tile, fit, err := c.Series.Tile(ctx, c.Index, p.Tile)
		if err != nil {
			return nil, err
		}
		x, y := (i%cols)*p.Tile, (i/cols)*p.Tile
		paste(out, tile, x, y)
		for _, b := range c.Boxes {
			r := fit.MapBox(b.Min.X, b.Min.Y, b.Max.X, b.Max.Y)
			if !r.Empty() {
				outline = append(outline, r.Add(image.Pt(x, y)))
			}
		}
	}
	if len(outline) == 0 {
		return out, nil
	}
	return withYellowBoxes(out, outline, p.BoxLine), nil
}

// Yellow is the colour of a structure card's rectangle.
var Yellow = color.RGBA{R: 255, G: 255, A: 255}

// withYellowBoxes draws rectangle outlines of thickness t (inside each
// rectangle) in yellow over the gray canvas: as a palette entry in place
// of an unused gray level, or, when there is none, as a BoxedGray.
func withYellowBoxes(g *image.Gray, rects []image.Rectangle, t int) image.Image {
	var used [256]bool
	for _, v := range g.Pix {
		used[v] = true
	}
	yi := -1
	for v := 255; v >= 0; v-- {
		if !used[v] {
			yi = v
			break
		}
	}
	if yi < 0 {
		return &BoxedGray{Gray: g, Boxes: rects, Line: t}
	}
	pal := make(color.Palette, 256)
	for i := range pal {
		pal[i] = color.Gray{Y: uint8(i)}
	}
	pal[yi] = Yellow
	out := &image.Paletted{Pix: append([]uint8(nil), g.Pix...), Stride: g.Stride, Rect: g.Rect, Palette: pal}
	for _, r := range rects {
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				if inOutline(r, x, y, t) {
					out.Pix[y*out.Stride+x] = uint8(yi)
				}
			}
		}
	}
	return out
}

// inOutline reports whether (x, y), a point of r, lies on r's outline of
// thickness t drawn inside it.
func inOutline(r image.Rectangle, x, y, t int) bool {
	return x < r.Min.X+t || x >= r.Max.X-t || y < r.Min.Y+t || y >= r.Max.Y-t
}

// BoxedGray is a gray image with yellow rectangle outlines over it, kept
// as the gray pixels and the rectangles: a quarter of the memory of the
// same image in RGBA. RenderGrid returns one when every gray level is used,
// so no palette entry is free for yellow; PNGEncoder writes it as 8-bit
// RGB.
type BoxedGray struct {
	Gray *image.Gray
	// Boxes are outlined in Yellow, Line px thick inside each rectangle.
	Boxes []image.Rectangle
	Line  int
}

// ColorModel implements image.Image.
func (b *BoxedGray) ColorModel() color.Model { return color.RGBAModel }

// Bounds implements image.Image.
func (b *BoxedGray) Bounds() image.Rectangle { return b.Gray.Rect }

// At implements image.Image.
func (b *BoxedGray) At(x, y int) color.Color {
	p := image.Pt(x, y)
	for _, r := range b.Boxes {
		if p.In(r) && inOutline(r, x, y, b.Line) {
			return Yellow
		}
	}
	v := b.Gray.GrayAt(x, y).Y
	return color.RGBA{v, v, v, 255}
}

// rgbRow writes row y (counted from Bounds().Min.Y) as RGB samples into
// dst, which holds 3 × width bytes.
func (b *BoxedGray) rgbRow(dst []byte, y int) {
	bd := b.Gray.Rect
	y += bd.Min.Y
	o := b.Gray.PixOffset(bd.Min.X, y)
	for x, v := range b.Gray.Pix[o : o+bd.Dx()] {
		dst[3*x], dst[3*x+1], dst[3*x+2] = v, v, v
	}
	paint := func(x0, x1 int) {
		for x := max(x0, bd.Min.X); x < min(x1, bd.Max.X); x++ {
			i := 3 * (x - bd.Min.X)
			dst[i], dst[i+1], dst[i+2] = Yellow.R, Yellow.G, Yellow.B
		}
	}
	for _, r := range b.Boxes {
		switch {
		case y < r.Min.Y || y >= r.Max.Y:
		case y < r.Min.Y+b.Line || y >= r.Max.Y-b.Line:
			paint(r.Min.X, r.Max.X)
		default:
			paint(r.Min.X, min(r.Min.X+b.Line, r.Max.X))
			paint(max(r.Max.X-b.Line, r.Min.X), r.Max.X)
		}
	}
}
