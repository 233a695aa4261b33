package imaging

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
)

// countingSlices decodes noise slices and counts the decodes.
type countingSlices struct {
	size    int
	decodes atomic.Int64
}

func (c *countingSlices) Slice(_ context.Context, i int) (*image.Gray, error) {
	c.decodes.Add(1)
	g := image.NewGray(image.Rect(0, 0, c.size, c.size*3/4))
	r := rand.New(rand.NewPCG(uint64(i), 1))
	for j := range g.Pix {
		g.Pix[j] = uint8(r.IntN(256))
	}
	return g, nil
}

func noiseSeries(t *testing.T, n int) (*Series, *countingSlices) {
	t.Helper()
	s := uniformSeries(t, SeqT1Ax, axial, make([]uint8, n), 8)
	src := &countingSlices{size: 40}
	s.Source = src
	s.Meta.PixelSpacing = [2]float64{0.8, 1.1}
	return s, src
}

func TestTileCacheSharesAndDrops(t *testing.T) {
	s, src := noiseSeries(t, 4)
	c := NewTileCache(1 << 20)
	s.Tiles = c
	ctx := context.Background()
	want, wantFit, _ := FitTile(must(src.Slice(ctx, 2)), s.Meta.PixelSpacing, 64)
	for range 3 {
		c.Expect(s, 2, 64)
	}
	c.Expect(s, 1, 64)
	c.Forgo(s, 1, 64) // withdrawn: never made
	var first *image.Gray
	for use := range 3 {
		g, fit, err := s.Tile(ctx, 2, 64)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(g.Pix, want.Pix) || fit != wantFit {
			t.Fatalf("use %d: the tile differs from FitTile's", use)
		}
		if use == 0 {
			first = g
		} else if g != first {
			t.Errorf("use %d: made again instead of shared", use)
		}
		held, _ := c.Stats()
		if wantHeld := int64(64 * 64); use < 2 && held != wantHeld {
			t.Errorf("after use %d: %d bytes held, want %d", use, held, wantHeld)
		}
	}
	if held, made := c.Stats(); held != 0 || made != 1 {
		t.Errorf("after the last use: %d bytes held and %d tiles made, want 0 and 1", held, made)
	}
	// An unannounced use resizes and keeps nothing.
	if _, _, err := s.Tile(ctx, 2, 64); err != nil {
		t.Fatal(err)
	}
	if held, made := c.Stats(); held != 0 || made != 2 {
		t.Errorf("unannounced use: %d bytes held and %d tiles made, want 0 and 2", held, made)
	}
	if got := src.decodes.Load(); got != 3 { // the reference, the shared tile, the unannounced one
		t.Errorf("%d decodes, want 3", got)
	}
}

func TestTileCacheLimit(t *testing.T) {
	s, _ := noiseSeries(t, 3)
	c := NewTileCache(64*64 + 10) // room for one tile
	s.Tiles = c
	ctx := context.Background()
	for i := range 3 {
		c.Expect(s, i, 64)
		c.Expect(s, i, 64)
	}
	for i := range 3 {
		if _, _, err := s.Tile(ctx, i, 64); err != nil {
			t.Fatal(err)
		}
		if held, _ := c.Stats(); held > 64*64+10 {
			t.Fatalf("holding %d bytes over the limit", held)
		}
	}
	for i := range 3 {
		if _, _, err := s.Tile(ctx, i, 64); err != nil {
			t.Fatal(err)
		}
	}
	if held, made := c.Stats(); held != 0 || made != 5 {
		t.Errorf("%d bytes held and %d tiles made; want 0 and 5 (one kept, two made again)", held, made)
	}
}

func TestTileCacheConcurrentUsesMakeOnce(t *testing.T) {
	s, src := noiseSeries(t, 2)
	c := NewTileCache(1 << 20)
	s.Tiles = c
	const users = 16
	for range users {
		c.Expect(s, 1, 48)
	}
	var wg sync.WaitGroup
	tiles := make([]*image.Gray, users)
	for u := range users {
		wg.Go(func() {
			g, _, err := s.Tile(context.Background(), 1, 48)
			if err != nil {
				t.Error(err)
			}
			tiles[u] = g
		})
	}
	wg.Wait()
	for u := range tiles {
		if tiles[u] != tiles[0] {
			t.Fatalf("user %d got another tile", u)
		}
	}
	if d := src.decodes.Load(); d != 1 {
		t.Errorf("%d decodes for one shared tile", d)
	}
	if held, made := c.Stats(); held != 0 || made != 1 {
		t.Errorf("%d bytes held and %d made, want 0 and 1", held, made)
	}
}

// Rendering through a tile cache gives the same pixels as without one.
func TestRenderWithTileCacheIsIdentical(t *testing.T) {
	p := DefaultParams()
	p.Tile, p.Caption = 64, 12
	render := func(c *TileCache) (*image.Gray, image.Image) {
		s, _ := noiseSeries(t, 6)
		s.Tiles = c
		var cells []Cell
		g := GroupSpec{Plane: PlaneAxial}
		for i := range 6 {
			cells = append(cells, Cell{Series: s, Index: i % 4, Boxes: []image.Rectangle{image.Rect(3, 4, 20, 18)}})
			if c != nil {
				c.Expect(s, i%4, p.Tile)
			}
		}
		for i := range 3 {
			g.Rows = append(g.Rows, GroupRow{Series: s, Index: i, Position: float64(i)})
			if c != nil {
				c.Expect(s, i, p.Tile)
			}
		}
		grid, err := RenderGrid(context.Background(), p, 3, cells)
		if err != nil {
			t.Fatal(err)
		}
		group, err := RenderPlaneGroup(context.Background(), p, g)
		if err != nil {
			t.Fatal(err)
		}
		if c != nil {
			if held, made := c.Stats(); held != 0 || made != 4 {
				t.Errorf("%d bytes held and %d tiles made for 4 slices", held, made)
			}
		}
		return group, grid
	}
	g1, c1 := render(nil)
	g2, c2 := render(NewTileCache(1 << 20))
	var b1, b2, b3, b4 bytes.Buffer
	EncodePNG(&b1, g1)
	EncodePNG(&b2, g2)
	EncodePNG(&b3, c1)
	EncodePNG(&b4, c2)
	if !bytes.Equal(b1.Bytes(), b2.Bytes()) || !bytes.Equal(b3.Bytes(), b4.Bytes()) {
		t.Error("outputs rendered through the tile cache differ")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// yellowRGBARef draws the outlines into an RGBA copy of g, pixel by pixel:
// how cards were made before BoxedGray.
func yellowRGBARef(g *image.Gray, rects []image.Rectangle, t int) *image.RGBA {
	out := image.NewRGBA(g.Bounds())
	for i, v := range g.Pix {
		out.Pix[4*i], out.Pix[4*i+1], out.Pix[4*i+2], out.Pix[4*i+3] = v, v, v, 255
	}
	for _, r := range rects {
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				if x < r.Min.X+t || x >= r.Max.X-t || y < r.Min.Y+t || y >= r.Max.Y-t {
					out.SetRGBA(x, y, Yellow)
				}
			}
		}
	}
	return out
}

func TestCardUsingEveryGrayIsBoxedGray(t *testing.T) {
	p := DefaultParams()
	p.Tile, p.BoxLine = 64, 3
	s, _ := noiseSeries(t, 4) // noise uses every gray level
	boxes := []image.Rectangle{image.Rect(3, 4, 20, 18), image.Rect(0, 0, 2, 2), image.Rect(10, 10, 30, 25)}
	cells := []Cell{{Series: s, Index: 0, Boxes: boxes[:2]}, {Series: s, Index: 1}, {Series: s, Index: 2, Boxes: boxes[2:]}, {Series: s, Index: 3, Boxes: boxes}}
	m, err := RenderGrid(context.Background(), p, 2, cells)
	if err != nil {
		t.Fatal(err)
	}
	bg, ok := m.(*BoxedGray)
	if !ok {
		t.Fatalf("card is %T, want *BoxedGray", m)
	}
	if len(bg.Boxes) < 4 {
		t.Fatalf("%d boxes drawn", len(bg.Boxes))
	}
	ref := yellowRGBARef(bg.Gray, bg.Boxes, p.BoxLine)
	yellow := 0
	for y := 0; y < ref.Rect.Dy(); y++ {
		for x := 0; x < ref.Rect.Dx(); x++ {
			if bg.At(x, y) != color.Color(ref.RGBAAt(x, y)) {
				t.Fatalf("pixel %d,%d = %v, want %v", x, y, bg.At(x, y), ref.RGBAAt(x, y))
			}
			if ref.RGBAAt(x, y) == Yellow {
				yellow++
			}
		}
	}
	if yellow == 0 {
		t.Fatal("no yellow pixel")
	}
	var got, want bytes.Buffer
	if err := EncodePNG(&got, bg); err != nil {
		t.Fatal(err)
	}
	EncodePNG(&want, ref)
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Error("the BoxedGray PNG differs from the RGBA card's")
	}
}
