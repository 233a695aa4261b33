package imaging

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"

	"github.com/npcorch/npcorch/imaging/internal/kernels"
)

// Slide is a pathology slide: a pyramid of levels (level 0 the largest).
type Slide interface {
	// LevelDimensions gives each level's size.
	LevelDimensions() []image.Point
	// LevelDownsamples gives each level's downsample factor from level 0.
	LevelDownsamples() []float64
	// ReadLevel returns a whole level: an opaque *image.RGBA, or a
	// non-premultiplied *image.NRGBA to composite on Background.
	ReadLevel(level int) (image.Image, error)
	// Background is the colour transparent areas are composited on.
	Background() color.RGBA
	// Close releases the slide.
	Close() error
}

// BestLevel returns the level OpenSlide picks for a downsample: the
// largest level whose downsample does not exceed it.
func BestLevel(downsamples []float64, downsample float64) int {
	if len(downsamples) == 0 || downsample < downsamples[0] {
		return 0
	}
	for i := 1; i < len(downsamples); i++ {
		if downsample < downsamples[i] {
			return i - 1
		}
	}
	return len(downsamples) - 1
}

// Overview renders a pathology overview whose longest side is at most size
// px, as openslide-python's get_thumbnail((size, size)) does: read the
// best level for the downsample, composite it on the background colour,
// and shrink it with Pillow's thumbnail (LANCZOS, reducing gap 2.0). The
// result is an opaque *image.RGBA, bit-identical to Pillow's.
func Overview(s Slide, size int) (*image.RGBA, error) {
	dims := s.LevelDimensions()
	if len(dims) == 0 || dims[0].X <= 0 || dims[0].Y <= 0 {
		return nil, fmt.Errorf("slide has no levels")
	}
	ds := math.Max(float64(dims[0].X)/float64(size), float64(dims[0].Y)/float64(size))
	level := BestLevel(s.LevelDownsamples(), ds)
	tile, err := s.ReadLevel(level)
	if err != nil {
		return nil, err
	}
	var rgb *image.RGBA
	switch m := tile.(type) {
	case *image.RGBA:
		if !m.Opaque() {
			return nil, fmt.Errorf("slide level %d is premultiplied with transparency; return *image.NRGBA", level)
		}
		rgb = m
	case *image.NRGBA:
		rgb = Composite(m, s.Background())
	default:
		return nil, fmt.Errorf("slide level %d is %T; want *image.RGBA or *image.NRGBA", level, tile)
	}
	return Thumbnail(rgb, size, size), nil
}

// Composite pastes a non-premultiplied RGBA image onto an opaque
// background with Pillow's paste(mask) arithmetic.
func Composite(src *image.NRGBA, bg color.RGBA) *image.RGBA {
	b := src.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := 0; y < b.Dy(); y++ {
		o := src.PixOffset(b.Min.X, b.Min.Y+y)
		compositeRow(out.Pix[y*out.Stride:y*out.Stride+4*b.Dx()], src.Pix[o:o+4*b.Dx()], bg)
	}
	return out
}

// compositeRow is Composite on one row of non-premultiplied RGBA pixels.
func compositeRow(dst, src []byte, bg color.RGBA) {
	bgc := [3]uint32{uint32(bg.R), uint32(bg.G), uint32(bg.B)}
	for x := 0; x < len(dst)/4; x++ {
		in, o := src[4*x:4*x+4:4*x+4], dst[4*x:4*x+4:4*x+4]
		a := uint32(in[3])
		for c := 0; c < 3; c++ {
			switch a {
			case 255:
				o[c] = in[c]
			case 0:
				o[c] = uint8(bgc[c])
			default:
				t := bgc[c]*(255-a) + uint32(in[c])*a + 128
				o[c] = uint8(((t >> 8) + t) >> 8)
			}
		}
		o[3] = 255
	}
}

// ThumbnailSize is Pillow's Image.thumbnail size rule: the largest size
// inside w×h box keeping the aspect, rounded to the side nearer the aspect;
// ok is false when the image already fits.
func ThumbnailSize(w, h, bw, bh int) (int, int, bool) {
	if bw >= w && bh >= h {
		return w, h, false
	}
	aspect := float64(w) / float64(h)
	x, y := bw, bh
	roundAspect := func(number float64, key func(float64) float64) int {
		lo, hi := math.Floor(number), math.Ceil(number)
		v := lo
		if key(hi) < key(lo) {
			v = hi
		}
		return max(int(v), 1)
	}
	if float64(x)/float64(y) >= aspect {
		x = roundAspect(float64(y)*aspect, func(n float64) float64 { return math.Abs(aspect - n/float64(y)) })
	} else {
		y = roundAspect(float64(x)/aspect, func(n float64) float64 {
			if n == 0 {
				return 0
			}
			return math.Abs(aspect - float64(x)/n)
		})
	}
	return x, y, true
}

// Thumbnail shrinks an opaque RGB image to fit bw×bh as Pillow's
// Image.thumbnail((bw, bh), LANCZOS) does: an integer reduce first when
// the image is more than twice the target (reducing gap 2.0), then Lanczos
// over the remaining fractional box. An image that fits is copied.
func Thumbnail(src *image.RGBA, bw, bh int) *image.RGBA {
	b := src.Bounds()
	t := newThumbnailer(b.Dx(), b.Dy(), bw, bh, 4)
	for y := 0; y < b.Dy(); y++ {
		o := src.PixOffset(b.Min.X, b.Min.Y+y)
		t.row(src.Pix[o : o+4*b.Dx()])
	}
	return t.result()
}

// thumbnailer computes Thumbnail from the rows of the source (opaque RGBA
// or packed RGB, 4 or 3 bytes a pixel), fed top to bottom, so a slide can be shrunk while it is decoded: it holds one row
// of reduce sums and the horizontally resampled rows, never the source.
// Each step does Pillow's integer arithmetic, so the result is the same.
type thumbnailer struct {
	w, h, tw, th int
	sbpp         int // bytes a source pixel: 4 (RGBA) or 3 (RGB)
	y            int // next source row
	copyOnly     bool
	out          raster // copyOnly: the copy

	// Integer reduce (fx, fy > 1 on either axis) over the source box rb.
	fx, fy int
	rb     [4]int
	sums   []uint32 // sums of the reduced row being gathered
	redRow raster   // one reduced row
	redY   int      // next reduced row

	// Lanczos over box bx of the (reduced) rows.
	hc, vc         coeffs
	needH, needV   bool
	yFirst, yLast  int
	tmp            raster // rows yFirst..yLast-1 after the horizontal pass
	rowW, rowsSeen int    // width of the rows the resampler gets; rows gotten
	rgba           []byte // a packed RGB row expanded for the AVX2 kernel
}

func newThumbnailer(w, h, bw, bh, sbpp int) *thumbnailer {
	tw, th, ok := ThumbnailSize(w, h, bw, bh)
	like := raster{bpp: 4, ch: 3, alphaOpaque: true}
	t := &thumbnailer{w: w, h: h, tw: tw, th: th, sbpp: sbpp}
	if !ok || (tw == w && th == h) {
		t.copyOnly = true
		t.out = newRaster(like, w, h)
		return t
	}
	const gap = 2.0
	bx := [4]float64{0, 0, float64(w), float64(h)}
	t.fx = max(int(bx[2]/float64(tw)/gap), 1)
	t.fy = max(int(bx[3]/float64(th)/gap), 1)
	rw, rh := w, h
	if t.fx > 1 || t.fy > 1 {
		const support = lanczosSupport - 0.5
		sx := (bx[2] - bx[0]) / float64(tw) * support
		sy := (bx[3] - bx[1]) / float64(th) * support
		t.rb = [4]int{
			max(0, int(bx[0]-sx)),
			max(0, int(bx[1]-sy)),
			min(w, int(math.Ceil(bx[2]+sx))),
			min(h, int(math.Ceil(bx[3]+sy))),
		}
		rw, rh = (t.rb[2]-t.rb[0]+t.fx-1)/t.fx, (t.rb[3]-t.rb[1]+t.fy-1)/t.fy
		t.sums = make([]uint32, 3*rw)
		t.redRow = newRaster(like, rw, 1)
		bx = [4]float64{
			(bx[0] - float64(t.rb[0])) / float64(t.fx),
			(bx[1] - float64(t.rb[1])) / float64(t.fy),
			(bx[2] - float64(t.rb[0])) / float64(t.fx),
			(bx[3] - float64(t.rb[1])) / float64(t.fy),
		}
	}
	t.rowW = rw
	// As resample: a box covering the whole (reduced) image at its size
	// needs no pass, which cannot happen here since the size changes.
	fb := box{float32(bx[0]), float32(bx[1]), float32(bx[2]), float32(bx[3])}
	t.needH = tw != rw || fb[0] != 0 || fb[2] != float32(tw)
	t.needV = th != rh || fb[1] != 0 || fb[3] != float32(th)
	t.hc = precompute(rw, fb[0], fb[2], tw)
	t.vc = precompute(rh, fb[1], fb[3], th)
	t.yFirst = t.vc.bounds[0]
	t.yLast = t.vc.bounds[th*2-2] + t.vc.bounds[th*2-1]
	tmpW := rw
	if t.needH {
		tmpW = tw
	}
	t.tmp = newRaster(like, tmpW, t.yLast-t.yFirst)
	return t
}

// row takes the next source row: w pixels of sbpp bytes.
func (t *thumbnailer) row(px []byte) {
	y := t.y
	t.y++
	if t.copyOnly {
		expandToRGBA(t.out.pix[y*t.out.stride:y*t.out.stride+4*t.w], px, t.sbpp)
		return
	}
	if t.sums == nil {
		t.resampleRow(px, t.sbpp)
		return
	}
	if y < t.rb[1] || y >= t.rb[3] {
		return
	}
	// Pillow's reduce: each output pixel is the rounded mean of an fx×fy
	// block (partial blocks at the right and bottom edges averaged over
	// their own size).
	for ox := 0; ox < t.redRow.w; ox++ {
		x0 := t.rb[0] + ox*t.fx
		x1 := min(x0+t.fx, t.rb[2])
		s := t.sums[3*ox : 3*ox+3 : 3*ox+3]
		for x := x0; x < x1; x++ {
			p := px[t.sbpp*x : t.sbpp*x+3 : t.sbpp*x+3]
			s[0] += uint32(p[0])
			s[1] += uint32(p[1])
			s[2] += uint32(p[2])
		}
	}
	y0 := t.rb[1] + t.redY*t.fy
	y1 := min(y0+t.fy, t.rb[3])
	if y != y1-1 {
		return
	}
	for ox := 0; ox < t.redRow.w; ox++ {
		x0 := t.rb[0] + ox*t.fx
		x1 := min(x0+t.fx, t.rb[2])
		n := (x1 - x0) * (y1 - y0)
		amend := uint32(n / 2)
		m := uint32(float32(4294967296.0) / float32(uint32(256*n)))
		s := t.sums[3*ox : 3*ox+3 : 3*ox+3]
		o := t.redRow.pix[4*ox : 4*ox+3 : 4*ox+3]
		o[0], o[1], o[2] = uint8(((s[0]+amend)*m)>>24), uint8(((s[1]+amend)*m)>>24), uint8(((s[2]+amend)*m)>>24)
		s[0], s[1], s[2] = 0, 0, 0
	}
	t.redY++
	t.resampleRow(t.redRow.pix, 4)
}

// resampleRow takes the next row of the image the Lanczos passes work on
// (bpp bytes a pixel) and keeps it, resampled horizontally into RGBA, when
// the vertical pass needs it.
func (t *thumbnailer) resampleRow(px []byte, bpp int) {
	y := t.rowsSeen
	t.rowsSeen++
	if y < t.yFirst || y >= t.yLast {
		return
	}
	k := y - t.yFirst
	if !t.needH {
		expandToRGBA(t.tmp.pix[k*t.tmp.stride:k*t.tmp.stride+4*t.rowW], px, bpp)
		return
	}
	if bpp == 3 && kernels.Available() {
		// The AVX2 kernel takes four bytes a pixel.
		if t.rgba == nil {
			t.rgba = make([]byte, 4*t.rowW)
		}
		rgbToRGBA(t.rgba, px)
		px, bpp = t.rgba, 4
	}
	src := raster{pix: px, stride: bpp * t.rowW, w: t.rowW, h: 1, bpp: bpp, ch: 3, alphaOpaque: bpp == 4}
	dst := raster{pix: t.tmp.pix[k*t.tmp.stride : (k+1)*t.tmp.stride], stride: t.tmp.stride, w: t.tmp.w, h: 1, bpp: 4, ch: 3, alphaOpaque: true}
	resampleH(dst, src, 0, t.hc)
}

// expandToRGBA copies opaque RGBA pixels, or expands packed RGB ones (bpp 3),
// into dst.
func expandToRGBA(dst, px []byte, bpp int) {
	if bpp == 4 {
		copy(dst, px)
		return
	}
	rgbToRGBA(dst, px)
}

// result finishes the thumbnail once every source row was given.
func (t *thumbnailer) result() *image.RGBA {
	r := t.out
	if !t.copyOnly {
		r = t.tmp
		if t.needV {
			r = newRaster(t.tmp, t.tmp.w, t.th)
			resampleV(r, t.tmp, t.vc, t.yFirst)
		}
	}
	return &image.RGBA{Pix: r.pix, Stride: r.stride, Rect: image.Rect(0, 0, r.w, r.h)}
}

// SlideImage converts a decoded slide image to what Slide.ReadLevel
// returns: an opaque *image.RGBA as it is (no copy), a *image.NRGBA as it
// is, anything else converted (to opaque RGBA when it has no alpha).
func SlideImage(m image.Image) image.Image {
	b := m.Bounds()
	if b.Min == (image.Point{}) {
		switch im := m.(type) {
		case *image.RGBA:
			if im.Opaque() {
				return im
			}
		case *image.NRGBA:
			return im
		}
	}
	switch m.(type) {
	case *image.Gray, *image.Gray16, *image.YCbCr, *image.CMYK, *image.RGBA64:
		out := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
		draw.Draw(out, out.Bounds(), m, b.Min, draw.Src)
		return out
	}
	out := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(out, out.Bounds(), m, b.Min, draw.Src)
	return out
}

// ImageSlide is a plain PNG/JPEG/TIFF image used as a one-level slide on a
// white background.
type ImageSlide struct {
	// Image is an opaque *image.RGBA or a *image.NRGBA (see SlideImage).
	Image image.Image
}

// LevelDimensions implements Slide.
func (s ImageSlide) LevelDimensions() []image.Point { return []image.Point{s.Image.Bounds().Size()} }

// LevelDownsamples implements Slide.
func (s ImageSlide) LevelDownsamples() []float64 { return []float64{1} }

// ReadLevel implements Slide.
func (s ImageSlide) ReadLevel(level int) (image.Image, error) {
	if level != 0 {
		return nil, fmt.Errorf("plain image slide has no level %d", level)
	}
	return s.Image, nil
}

// Background implements Slide: white, OpenSlide's default.
func (s ImageSlide) Background() color.RGBA { return color.RGBA{255, 255, 255, 255} }

// Close implements Slide.
func (s ImageSlide) Close() error { return nil }
