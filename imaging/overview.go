package imaging

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
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
	bgc := [3]uint32{uint32(bg.R), uint32(bg.G), uint32(bg.B)}
	for y := 0; y < b.Dy(); y++ {
		in := src.Pix[src.PixOffset(b.Min.X, b.Min.Y+y):]
		o := out.Pix[y*out.Stride:]
		for x := 0; x < b.Dx(); x++ {
			a := uint32(in[4*x+3])
			for c := 0; c < 3; c++ {
				switch a {
				case 255:
					o[4*x+c] = in[4*x+c]
				case 0:
					o[4*x+c] = uint8(bgc[c])
				default:
					t := bgc[c]*(255-a) + uint32(in[4*x+c])*a + 128
					o[4*x+c] = uint8(((t >> 8) + t) >> 8)
				}
			}
			o[4*x+3] = 255
		}
	}
	return out
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
	w, h := b.Dx(), b.Dy()
	tw, th, ok := ThumbnailSize(w, h, bw, bh)
	r := rgbaRaster(src)
	if !ok || (tw == w && th == h) {
		out := newRaster(r, w, h)
		for y := 0; y < h; y++ {
			copy(out.pix[y*out.stride:y*out.stride+4*w], r.pix[y*r.stride:])
		}
		return &image.RGBA{Pix: out.pix, Stride: out.stride, Rect: image.Rect(0, 0, w, h)}
	}
	const gap = 2.0
	bx := [4]float64{0, 0, float64(w), float64(h)}
	fx := int(bx[2] / float64(tw) / gap)
	fy := int(bx[3] / float64(th) / gap)
	fx, fy = max(fx, 1), max(fy, 1)
	if fx > 1 || fy > 1 {
		const support = lanczosSupport - 0.5
		sx := (bx[2] - bx[0]) / float64(tw) * support
		sy := (bx[3] - bx[1]) / float64(th) * support
		rb := [4]int{
			max(0, int(bx[0]-sx)),
			max(0, int(bx[1]-sy)),
			min(w, int(math.Ceil(bx[2]+sx))),
			min(h, int(math.Ceil(bx[3]+sy))),
		}
		r = reduce(r, fx, fy, rb)
		bx = [4]float64{
			(bx[0] - float64(rb[0])) / float64(fx),
			(bx[1] - float64(rb[1])) / float64(fy),
			(bx[2] - float64(rb[0])) / float64(fx),
			(bx[3] - float64(rb[1])) / float64(fy),
		}
	}
	out := resample(r, tw, th, box{float32(bx[0]), float32(bx[1]), float32(bx[2]), float32(bx[3])})
	return &image.RGBA{Pix: out.pix, Stride: out.stride, Rect: image.Rect(0, 0, tw, th)}
}

// reduce is Pillow's Image.reduce((fx, fy), box): each output pixel is the
// rounded mean of an fx×fy block (partial blocks at the right and bottom
// edges averaged over their own size), in Pillow's fixed-point arithmetic.
func reduce(src raster, fx, fy int, bx [4]int) raster {
	w, h := bx[2]-bx[0], bx[3]-bx[1]
	ow, oh := (w+fx-1)/fx, (h+fy-1)/fy
	out := newRaster(src, ow, oh)
	multFor := func(n int) uint32 {
		return uint32(float32(4294967296.0) / float32(uint32(256*n)))
	}
	sums := make([]uint32, src.ch)
	for oy := 0; oy < oh; oy++ {
		y0 := bx[1] + oy*fy
		y1 := min(y0+fy, bx[3])
		for ox := 0; ox < ow; ox++ {
			x0 := bx[0] + ox*fx
			x1 := min(x0+fx, bx[2])
			n := (x1 - x0) * (y1 - y0)
			amend := uint32(n / 2)
			for c := range sums {
				sums[c] = amend
			}
			for y := y0; y < y1; y++ {
				row := src.pix[y*src.stride:]
				for x := x0; x < x1; x++ {
					for c := range sums {
						sums[c] += uint32(row[x*src.bpp+c])
					}
				}
			}
			m := multFor(n)
			for c, s := range sums {
				out.pix[oy*out.stride+ox*out.bpp+c] = uint8((s * m) >> 24)
			}
		}
	}
	return out
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
