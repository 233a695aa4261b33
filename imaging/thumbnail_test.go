package imaging

import (
	"bytes"
	"image"
	"math"
	"math/rand/v2"
	"testing"
)

// thumbnailRef is Thumbnail on a whole image in memory, as it was before
// it streamed rows: the reference of TestThumbnailStreamsLikeWholeImage.
// It shrinks an opaque RGB image to fit bw×bh as Pillow's
// Image.thumbnail((bw, bh), LANCZOS) does: an integer reduce first when
// the image is more than twice the target (reducing gap 2.0), then Lanczos
// over the remaining fractional box. An image that fits is copied.
func thumbnailRef(src *image.RGBA, bw, bh int) *image.RGBA {
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
		r = reduceRef(r, fx, fy, rb)
		bx = [4]float64{
			(bx[0] - float64(rb[0])) / float64(fx),
			(bx[1] - float64(rb[1])) / float64(fy),
			(bx[2] - float64(rb[0])) / float64(fx),
			(bx[3] - float64(rb[1])) / float64(fy),
		}
	}
	out := resample(r, tw, th, box{float32(bx[0]), float32(bx[1]), float32(bx[2]), float32(bx[3])}, nil)
	return &image.RGBA{Pix: out.pix, Stride: out.stride, Rect: image.Rect(0, 0, tw, th)}
}

// reduceRef is Pillow's Image.reduce((fx, fy), box): each output pixel is the
// rounded mean of an fx×fy block (partial blocks at the right and bottom
// edges averaged over their own size), in Pillow's fixed-point arithmetic.
func reduceRef(src raster, fx, fy int, bx [4]int) raster {
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

func TestThumbnailStreamsLikeWholeImage(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 3))
	reduced, copied := 0, 0
	for trial := 0; trial < 60; trial++ {
		w, h := 1+r.IntN(700), 1+r.IntN(700)
		bw, bh := 1+r.IntN(260), 1+r.IntN(260)
		src := image.NewRGBA(image.Rect(0, 0, w, h))
		for i := range src.Pix {
			src.Pix[i] = uint8(r.IntN(256))
			if i%4 == 3 {
				src.Pix[i] = 255
			}
		}
		if th := newThumbnailer(w, h, bw, bh, 4); th.copyOnly {
			copied++
		} else if th.sums != nil {
			reduced++
		}
		want, got := thumbnailRef(src, bw, bh), Thumbnail(src, bw, bh)
		// Fed packed RGB rows, as streamPNGOverview feeds an RGB PNG.
		th := newThumbnailer(w, h, bw, bh, 3)
		rgb := make([]byte, 3*w)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				copy(rgb[3*x:3*x+3], src.Pix[y*src.Stride+4*x:])
			}
			th.row(rgb)
		}
		if fromRGB := th.result(); fromRGB.Rect != want.Rect || !bytes.Equal(fromRGB.Pix, want.Pix) {
			t.Fatalf("%dx%d into %dx%d: the thumbnail of RGB rows differs", w, h, bw, bh)
		}
		if got.Rect != want.Rect {
			t.Fatalf("%dx%d into %dx%d: size %v, want %v", w, h, bw, bh, got.Rect, want.Rect)
		}
		for y := 0; y < want.Rect.Dy(); y++ {
			for x := 0; x < 4*want.Rect.Dx(); x++ {
				if got.Pix[y*got.Stride+x] != want.Pix[y*want.Stride+x] {
					t.Fatalf("%dx%d into %dx%d: byte %d of row %d differs", w, h, bw, bh, x, y)
				}
			}
		}
	}
	if reduced < 5 || copied < 2 {
		t.Errorf("%d reduced and %d copied cases: the trials miss a path", reduced, copied)
	}
}
