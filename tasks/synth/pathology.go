package synth

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
)

// Palette layout of a slide: glass, eosin-pink stroma shades, haematoxylin
// nucleus shades, pale tumour cytoplasm shades, gland lumen, red cells.
const (
	idxGlass   = 0
	idxStroma  = 1
	nStroma    = 20
	idxNucleus = idxStroma + nStroma
	nNucleus   = 16
	idxCyto    = idxNucleus + nNucleus
	nCyto      = 8
	idxLumen   = idxCyto + nCyto
	idxRBC     = idxLumen + 1
)

// slidePalette returns the H&E-like palette of a slide.
func slidePalette() color.Palette {
	lerp := func(a, b color.RGBA, n int) []color.Color {
		out := make([]color.Color, n)
		for i := range n {
			t := float64(i) / float64(n-1)
			mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x) + t*(float64(y)-float64(x)))) }
			out[i] = color.RGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 255}
		}
		return out
	}
	p := color.Palette{color.RGBA{243, 241, 244, 255}}
	p = append(p, lerp(color.RGBA{249, 218, 231, 255}, color.RGBA{216, 118, 166, 255}, nStroma)...)
	p = append(p, lerp(color.RGBA{158, 108, 188, 255}, color.RGBA{52, 24, 98, 255}, nNucleus)...)
	p = append(p, lerp(color.RGBA{226, 180, 222, 255}, color.RGBA{188, 128, 190, 255}, nCyto)...)
	p = append(p, color.RGBA{252, 248, 252, 255}, color.RGBA{204, 56, 78, 255})
	return p
}

// valueNoise is smooth random noise in [0, 1): random values on a coarse
// grid, bilinearly interpolated; cells may be stretched to look fibrous.
type valueNoise struct {
	cx, cy float64
	w      int
	v      []float64
}

func newValueNoise(r *rand.Rand, width, height int, cx, cy float64) valueNoise {
	w := int(float64(width)/cx) + 2
	h := int(float64(height)/cy) + 2
	n := valueNoise{cx: cx, cy: cy, w: w, v: make([]float64, w*h)}
	for i := range n.v {
		n.v[i] = r.Float64()
	}
	return n
}

func (n valueNoise) at(x, y int) float64 {
	fx, fy := float64(x)/n.cx, float64(y)/n.cy
	ix, iy := int(fx), int(fy)
	tx, ty := fx-float64(ix), fy-float64(iy)
	i := iy*n.w + ix
	a := n.v[i] + tx*(n.v[i+1]-n.v[i])
	b := n.v[i+n.w] + tx*(n.v[i+n.w+1]-n.v[i+n.w])
	return a + ty*(b-a)
}

// canvas draws filled ellipses on a paletted slide.
type canvas struct {
	img *image.Paletted
}

// blob fills the ellipse at (cx, cy) with radii rx, ry with palette index
// idx; onTissue keeps it off the glass.
func (c canvas) blob(cx, cy, rx, ry float64, idx uint8, onTissue bool) {
	b := c.img.Rect
	y0, y1 := max(int(cy-ry), b.Min.Y), min(int(cy+ry)+1, b.Max.Y)
	x0, x1 := max(int(cx-rx), b.Min.X), min(int(cx+rx)+1, b.Max.X)
	for y := y0; y < y1; y++ {
		dy := sq((float64(y) - cy) / ry)
		row := c.img.Pix[y*c.img.Stride:]
		for x := x0; x < x1; x++ {
			if dy+sq((float64(x)-cx)/rx) > 1 {
				continue
			}
			if onTissue && row[x] == idxGlass {
				continue
			}
			row[x] = idx
		}
	}
}

// tissueAt reports whether (x, y) is on tissue.
func (c canvas) tissueAt(x, y float64) bool {
	p := image.Pt(int(x), int(y))
	return p.In(c.img.Rect) && c.img.Pix[c.img.PixOffset(p.X, p.Y)] != idxGlass
}

// render draws the slide as an RGB PNG: two or three tissue fragments of
// fibrous pink stroma with scattered nuclei and lymphocyte clusters; normal
// glands when the label is 0, nests of crowded, large, dark tumour nuclei
// in pale cytoplasm when it is 1.
func (s *slide) render(rd *renderer) ([]byte, error) {
	img := image.NewPaletted(image.Rect(0, 0, s.width, s.height), slidePalette())
	p := &slidePainter{r: rand.New(rand.NewPCG(s.seed[0], s.seed[1])), c: canvas{img}, w: s.width, h: s.height,
		scale: float64(min(s.width, s.height)) / 1500}
	p.tissue()
	p.cells()
	if s.label == 0 {
		p.glands()
	} else {
		p.carcinoma()
	}
	b, err := rd.png.encodeRGB(img)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", s.file, err)
	}
	return b, nil
}

// slidePainter paints one slide from its random stream, layer by layer:
// the tissue, the cells every slide has, then glands (normal) or carcinoma
// nests. The layers draw from r in that order, so a slide's seed gives
// the same pixels.
type slidePainter struct {
	r     *rand.Rand
	c     canvas
	w, h  int
	scale float64 // of the slide's short side to 1500 pixels
}

// tissue paints the tissue fragments: ellipses with a noisy edge, filled
// with stroma.
func (p *slidePainter) tissue() {
	r, w, h, scale, img := p.r, p.w, p.h, p.scale, p.c.img
	edge := newValueNoise(r, w, h, 90*scale+8, 90*scale+8)
	fibre := newValueNoise(r, w, h, 110*scale+8, 28*scale+4)
	type fragment struct{ cx, cy, rx, ry float64 }
	var frags []fragment
	frags = append(frags, fragment{float64(w) * (0.32 + 0.08*r.Float64()), float64(h) * (0.45 + 0.1*r.Float64()), float64(w) * (0.24 + 0.05*r.Float64()), float64(h) * (0.33 + 0.06*r.Float64())})
	frags = append(frags, fragment{float64(w) * (0.7 + 0.08*r.Float64()), float64(h) * (0.5 + 0.1*r.Float64()), float64(w) * (0.16 + 0.05*r.Float64()), float64(h) * (0.28 + 0.08*r.Float64())})
	if r.IntN(2) == 1 {
		frags = append(frags, fragment{float64(w) * 0.6, float64(h) * (0.12 + 0.04*r.Float64()), float64(w) * 0.08, float64(h) * 0.07})
	}
	var bits uint64 // each 64-bit draw gives eight 8-bit jitters
	left := 0
	dy := make([]float64, len(frags))
	for y := range h {
		row := img.Pix[y*img.Stride:]
		for i, f := range frags {
			dy[i] = sq((float64(y) - f.cy) / f.ry)
		}
		for x := range w {
			d := math.Inf(1)
			for i, f := range frags {
				d = min(d, dy[i]+sq((float64(x)-f.cx)/f.rx))
			}
			if d > 1.15 {
				continue
			}
			e := edge.at(x, y)
			if d >= 0.8+0.35*e {
				continue
			}
			if left == 0 {
				bits, left = r.Uint64(), 8
			}
			jitter := float64(uint8(bits)) / 256
			bits, left = bits>>8, left-1
			t := 0.55*fibre.at(x, y) + 0.3*e + 0.15*jitter
			row[x] = idxStroma + uint8(min(int(t*nStroma), nStroma-1))
		}
	}
}

// tissuePoint is a random point on the tissue; false after 200 misses.
func (p *slidePainter) tissuePoint() (float64, float64, bool) {
	for range 200 {
		x, y := p.r.Float64()*float64(p.w), p.r.Float64()*float64(p.h)
		if p.c.tissueAt(x, y) {
			return x, y, true
		}
	}
	return 0, 0, false
}

// nucleus is a nucleus colour at least dark steps into the nucleus range.
func (p *slidePainter) nucleus(dark int) uint8 {
	return idxNucleus + uint8(min(dark+p.r.IntN(4), nNucleus-1))
}

// cells paints what every slide has: stromal cells (elongated), red
// cells, lymphocyte clusters.
func (p *slidePainter) cells() {
	r, c, area := p.r, p.c, float64(p.w*p.h)
	for range int(area / 900) {
		x, y, ok := p.tissuePoint()
		if !ok {
			break
		}
		c.blob(x, y, 3+2*r.Float64(), 1.5+r.Float64(), p.nucleus(4), true)
	}
	for range int(area / 6000) {
		if x, y, ok := p.tissuePoint(); ok {
			c.blob(x, y, 2.5, 2.5, idxRBC, true)
		}
	}
	for range 3 + r.IntN(4) {
		cx, cy, ok := p.tissuePoint()
		if !ok {
			break
		}
		rad := (50 + 40*r.Float64()) * p.scale
		for range int(rad * rad / 25) {
			a, d := r.Float64()*2*math.Pi, rad*math.Sqrt(r.Float64())
			c.blob(cx+d*math.Cos(a), cy+d*math.Sin(a), 2.6, 2.6, p.nucleus(11), true)
		}
	}
}

// glands paints normal seromucous glands: a pale lumen ringed by small
// nuclei.
func (p *slidePainter) glands() {
	r, c, scale := p.r, p.c, p.scale
	for range 8 + r.IntN(8) {
		cx, cy, ok := p.tissuePoint()
		if !ok {
			break
		}
		rx, ry := (14+20*r.Float64())*scale+4, (12+16*r.Float64())*scale+4
		c.blob(cx, cy, rx+7, ry+7, idxCyto, true)
		c.blob(cx, cy, rx, ry, idxLumen, true)
		for k := range int(2 * math.Pi * (rx + ry) / 2 / 6) {
			a := float64(k) * 6 / ((rx + ry) / 2)
			c.blob(cx+(rx+4)*math.Cos(a), cy+(ry+4)*math.Sin(a), 2.8, 2.2, p.nucleus(6), true)
		}
	}
}

// carcinoma paints carcinoma nests: irregular sheets of crowded,
// pleomorphic nuclei.
func (p *slidePainter) carcinoma() {
	r, c, scale := p.r, p.c, p.scale
	for range 5 + r.IntN(5) {
		cx, cy, ok := p.tissuePoint()
		if !ok {
			break
		}
		rad := (60 + 110*r.Float64()) * scale
		parts := 3 + r.IntN(4)
		for range parts {
			a, d := r.Float64()*2*math.Pi, rad*0.5*r.Float64()
			px, py := cx+d*math.Cos(a), cy+d*math.Sin(a)
			prx, pry := rad*(0.45+0.4*r.Float64()), rad*(0.45+0.4*r.Float64())
			c.blob(px, py, prx, pry, idxCyto+uint8(r.IntN(nCyto)), true)
			for range int(math.Pi * prx * pry / 110) {
				a, d := r.Float64()*2*math.Pi, math.Sqrt(r.Float64())
				c.blob(px+d*prx*math.Cos(a), py+d*pry*math.Sin(a), 3.5+3*r.Float64(), 3+2.5*r.Float64(), p.nucleus(9), true)
			}
		}
	}
}
