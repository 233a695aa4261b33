package imaging

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"reflect"
	"testing"
)

// inflateModes are both ways the fast path inflates: streaming, and whole
// (libdeflate in a build with the libdeflate tag, klauspost otherwise).
var inflateModes = []inflateMode{inflateStream, inflateWhole}

// testImages returns small images of every kind the decoder meets: noisy
// (so the encoders use every filter) and smooth.
func testImages(r *rand.Rand) map[string]image.Image {
	rect := image.Rect(0, 0, 61, 37)
	gray, gray16 := image.NewGray(rect), image.NewGray16(rect)
	rgba, nrgba := image.NewRGBA(rect), image.NewNRGBA(rect)
	pal := image.NewPaletted(rect, color.Palette{color.RGBA{1, 2, 3, 255}, color.RGBA{250, 128, 7, 255}, color.RGBA{9, 9, 9, 255}})
	for y := 0; y < rect.Dy(); y++ {
		for x := 0; x < rect.Dx(); x++ {
			v := uint8(x*3 + y*5)
			if x > 30 {
				v = uint8(r.IntN(256))
			}
			gray.SetGray(x, y, color.Gray{v})
			gray16.SetGray16(x, y, color.Gray16{uint16(v)<<8 | uint16(x)})
			rgba.SetRGBA(x, y, color.RGBA{v, 255 - v, uint8(y * 7), 255})
			nrgba.SetNRGBA(x, y, color.NRGBA{v, uint8(x * 4), uint8(r.IntN(256)), uint8(y * 6)})
			pal.SetColorIndex(x, y, uint8((x+y)%3))
		}
	}
	return map[string]image.Image{"gray": gray, "gray16": gray16, "rgb": rgba, "rgba": nrgba, "paletted": pal}
}

// rechunk rewrites a PNG with its IDAT data, followed by tail, cut into
// chunks of size n, a zero-length IDAT between them, and an ancillary
// chunk before the image data and after it.
func rechunk(t testing.TB, data []byte, n int, tail ...byte) []byte {
	var idat []byte
	var before, after [][2][]byte
	for i := 8; i < len(data); {
		l := int(binary.BigEndian.Uint32(data[i:]))
		name, body := data[i+4:i+8], data[i+8:i+8+l]
		switch {
		case string(name) == "IDAT":
			idat = append(idat, body...)
		case idat == nil:
			before = append(before, [2][]byte{name, body})
		default:
			after = append(after, [2][]byte{name, body})
		}
		i += 12 + l
	}
	var out bytes.Buffer
	out.WriteString(pngSignature)
	put := func(name string, body []byte) {
		var hdr [8]byte
		binary.BigEndian.PutUint32(hdr[:], uint32(len(body)))
		copy(hdr[4:], name)
		out.Write(hdr[:])
		out.Write(body)
		binary.BigEndian.PutUint32(hdr[:4], crc32.Update(crc32.ChecksumIEEE([]byte(name)), crc32.IEEETable, body))
		out.Write(hdr[:4])
	}
	for _, c := range before {
		put(string(c[0]), c[1])
	}
	put("tEXt", []byte("Comment\x00npcorch test"))
	idat = append(idat, tail...)
	for len(idat) > 0 {
		k := min(n, len(idat))
		put("IDAT", idat[:k])
		put("IDAT", nil)
		idat = idat[k:]
	}
	for _, c := range after {
		if string(c[0]) == "IEND" {
			put("tIME", []byte{7, 234, 11, 30, 10, 0, 0})
		}
		put(string(c[0]), c[1])
	}
	return out.Bytes()
}

// encodings returns PNG files of the test images written by image/png at
// every level, by PNGEncoder with and without filters, and rechunked.
func encodings(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	for name, m := range testImages(rand.New(rand.NewPCG(7, 7))) {
		for _, lvl := range []png.CompressionLevel{png.DefaultCompression, png.NoCompression, png.BestSpeed, png.BestCompression} {
			var buf bytes.Buffer
			if err := (&png.Encoder{CompressionLevel: lvl}).Encode(&buf, m); err != nil {
				t.Fatal(err)
			}
			out[name+"/image-png-"+string(rune('a'+int(-lvl)))] = buf.Bytes()
			out[name+"/rechunked-"+string(rune('a'+int(-lvl)))] = rechunk(t, buf.Bytes(), 97)
		}
		for _, e := range []*PNGEncoder{{}, {Unfiltered: true}} {
			var buf bytes.Buffer
			if err := e.Encode(&buf, m); err != nil {
				continue // NRGBA: not an npcorch output type
			}
			key := name + "/npcorch"
			if e.Unfiltered {
				key += "-unfiltered"
			}
			out[key] = buf.Bytes()
		}
	}
	return out
}

func sameImage(a, b image.Image) bool {
	if reflect.TypeOf(a) != reflect.TypeOf(b) || a.Bounds() != b.Bounds() {
		return false
	}
	return reflect.DeepEqual(a, b)
}

func TestDecodePNGMatchesImagePNG(t *testing.T) {
	fast := 0
	for name, data := range encodings(t) {
		want, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: image/png: %v", name, err)
		}
		got, err := DecodePNG(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !sameImage(got, want) {
			t.Fatalf("%s: decoded %T differs from image/png's %T", name, got, want)
		}
		// The common kinds must take the fast path, the others must not;
		// both ways of inflating give image/png's pixels.
		for _, mode := range inflateModes {
			fm, ferr := decodePNGFastWith(bytes.NewReader(data), mode)
			switch kind := name[:bytes.IndexByte([]byte(name), '/')]; kind {
			case "gray", "rgb", "rgba":
				if ferr != nil || !sameImage(fm, want) {
					t.Errorf("%s, inflate mode %d: fast path failed (%v) or differs from image/png", name, mode, ferr)
				}
				fast++
			default:
				if ferr != errNotFast {
					t.Errorf("%s, inflate mode %d: fast path said %v, want errNotFast", name, mode, ferr)
				}
			}
		}
	}
	if fast == 0 {
		t.Fatal("no image took the fast path")
	}
}

func TestDecodePNGLeavesTransparencyAndInterlaceToImagePNG(t *testing.T) {
	var buf bytes.Buffer
	png.Encode(&buf, testImages(rand.New(rand.NewPCG(1, 1)))["gray"])
	data := buf.Bytes()
	// A tRNS chunk makes image/png return *image.NRGBA.
	withTRNS := rechunk(t, data, 1<<20)
	i := bytes.Index(withTRNS, []byte("tEXt")) - 4
	var trns bytes.Buffer
	trns.Write([]byte{0, 0, 0, 2, 't', 'R', 'N', 'S', 0, 9})
	binary.Write(&trns, binary.BigEndian, crc32.ChecksumIEEE([]byte{'t', 'R', 'N', 'S', 0, 9}))
	withTRNS = append(append(append([]byte(nil), withTRNS[:i]...), trns.Bytes()...), withTRNS[i:]...)
	// An interlace byte of 1 in IHDR (with a fixed CRC) is Adam7, which this
	// image's data is not: image/png must give its error.
	interlaced := append([]byte(nil), data...)
	interlaced[28] = 1
	binary.BigEndian.PutUint32(interlaced[29:], crc32.ChecksumIEEE(interlaced[12:29]))
	for name, d := range map[string][]byte{"tRNS": withTRNS, "interlaced": interlaced} {
		for _, mode := range inflateModes {
			if _, err := decodePNGFastWith(bytes.NewReader(d), mode); err != errNotFast {
				t.Errorf("%s, inflate mode %d: fast path said %v, want errNotFast", name, mode, err)
			}
		}
		want, werr := png.Decode(bytes.NewReader(d))
		got, gerr := DecodePNG(d)
		if (werr == nil) != (gerr == nil) || (werr == nil && !sameImage(got, want)) {
			t.Errorf("%s: got %T, %v; image/png gives %T, %v", name, got, gerr, want, werr)
		}
	}
}

// checkAgainstImagePNG is the decoder's contract on any input: DecodePNG
// fails exactly when image/png does and otherwise gives its image, and
// whatever the fast path accepts, image/png accepts with the same pixels.
func checkAgainstImagePNG(t *testing.T, data []byte) {
	want, werr := png.Decode(bytes.NewReader(data))
	got, gerr := DecodePNG(data)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("DecodePNG error %v, image/png error %v", gerr, werr)
	}
	if werr == nil && !sameImage(got, want) {
		t.Fatalf("DecodePNG gives a %T unlike image/png's %T", got, want)
	}
	for _, mode := range inflateModes {
		if fm, ferr := decodePNGFastWith(bytes.NewReader(data), mode); ferr == nil && (werr != nil || !sameImage(fm, want)) {
			t.Fatalf("the fast path (inflate mode %d) accepted what image/png gives as %T, %v", mode, want, werr)
		}
	}
}

func TestDecodePNGCorruptAndTruncated(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for name, data := range encodings(t) {
		t.Run(name, func(t *testing.T) {
			for cut := 0; cut < len(data); cut += 1 + len(data)/50 {
				checkAgainstImagePNG(t, data[:cut])
			}
			for range 40 {
				d := append([]byte(nil), data...)
				d[8+r.IntN(len(d)-8)] ^= byte(1 << r.IntN(8))
				checkAgainstImagePNG(t, d)
			}
			// Garbage after the zlib stream inside the last IDAT chunk.
			checkAgainstImagePNG(t, rechunk(t, data, 1<<20, 1, 2, 3))
			checkAgainstImagePNG(t, rechunk(t, data, 5, 1, 2, 3))
		})
	}
}

func FuzzDecodePNG(f *testing.F) {
	for name, data := range encodings(f) {
		if len(data) < 4096 || name == "gray/npcorch" {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if cfg, err := png.DecodeConfig(bytes.NewReader(data)); err != nil || cfg.Width*cfg.Height > 1<<20 {
			return
		}
		checkAgainstImagePNG(t, data)
	})
}

func TestPNGEncoderOptions(t *testing.T) {
	imgs := testImages(rand.New(rand.NewPCG(5, 5)))
	pal := imgs["paletted"].(*image.Paletted)
	e := &PNGEncoder{Unfiltered: true, Truecolor: true}
	var first []byte
	for round := range 3 { // later rounds reuse a pooled zlib writer
		var buf bytes.Buffer
		if err := e.Encode(&buf, pal); err != nil {
			t.Fatal(err)
		}
		if round == 0 {
			first = buf.Bytes()
		} else if !bytes.Equal(first, buf.Bytes()) {
			t.Fatalf("round %d: bytes differ from the first round", round)
		}
	}
	if first[25] != pngTruecolor {
		t.Fatalf("colour type %d, want truecolor", first[25])
	}
	back, err := png.Decode(bytes.NewReader(first))
	if err != nil {
		t.Fatal(err)
	}
	for y := 0; y < pal.Rect.Dy(); y++ {
		for x := 0; x < pal.Rect.Dx(); x++ {
			if back.At(x, y) != color.Color(pal.Palette[pal.ColorIndexAt(x, y)]) {
				t.Fatalf("pixel %d,%d = %v, want %v", x, y, back.At(x, y), pal.At(x, y))
			}
		}
	}
	// Unfiltered rows all carry filter type None: inflate and look.
	var plain bytes.Buffer
	(&PNGEncoder{Unfiltered: true}).Encode(&plain, imgs["gray"])
	var filtered bytes.Buffer
	EncodePNG(&filtered, imgs["gray"])
	if rows := filterTypes(t, plain.Bytes(), 61); len(rows) != 37 || bytes.Count(rows, []byte{0}) != 37 {
		t.Errorf("unfiltered rows use filters %v", rows)
	}
	if rows := filterTypes(t, filtered.Bytes(), 61); bytes.Count(rows, []byte{0}) == len(rows) {
		t.Errorf("adaptive rows all use filter None: %v", rows)
	}
}

// filterTypes returns the filter type byte of each row of an 8-bit gray
// PNG whose rows are rowLen bytes.
func filterTypes(t *testing.T, data []byte, rowLen int) []byte {
	t.Helper()
	m, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var idat []byte
	for i := 8; i < len(data); {
		l := int(binary.BigEndian.Uint32(data[i:]))
		if string(data[i+4:i+8]) == "IDAT" {
			idat = append(idat, data[i+8:i+8+l]...)
		}
		i += 12 + l
	}
	raw := inflate(t, idat)
	var types []byte
	for y := 0; y < m.Bounds().Dy(); y++ {
		types = append(types, raw[y*(rowLen+1)])
	}
	return types
}

func inflate(t *testing.T, z []byte) []byte {
	t.Helper()
	zr, err := zlib.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := out.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestUnfilterMatchesDefinition checks unfilter (its kernels and byte
// loops) against the PNG specification's definitions, for every filter,
// pixel size and row length up to 24 pixels.
func TestUnfilterMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for _, bpp := range []int{1, 3, 4} {
		for px := 1; px <= 24; px++ {
			for ft := byte(ftNone); ft <= ftPaeth; ft++ {
				n := px * bpp
				filtered, prev := make([]byte, n), make([]byte, n)
				for i := range filtered {
					filtered[i], prev[i] = byte(r.Uint32()), byte(r.Uint32())
				}
				want := make([]byte, n)
				for i := range want {
					var a, c int
					if i >= bpp {
						a, c = int(want[i-bpp]), int(prev[i-bpp])
					}
					b := int(prev[i])
					pred := [...]int{0, a, b, (a + b) / 2, paethSpec(a, b, c)}[ft]
					want[i] = filtered[i] + byte(pred)
				}
				got := append([]byte(nil), filtered...)
				if err := unfilter(ft, got, prev, bpp); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("filter %d, %d bytes a pixel, %d pixels: got %v, want %v", ft, bpp, px, got, want)
				}
			}
		}
	}
}

// paethSpec is the Paeth predictor as the PNG specification writes it.
func paethSpec(a, b, c int) int {
	p := a + b - c
	pa, pb, pc := abs(p-a), abs(p-b), abs(p-c)
	if pa <= pb && pa <= pc {
		return a
	}
	if pb <= pc {
		return b
	}
	return c
}

// BenchmarkUnfilter reverses the Average and Paeth filters (what
// image/png chose for the bench's slides, 85 % and 15 % of their rows) on
// a 4000-pixel RGB row; -tags purego runs the Go loops, side by side:
//
//	go test -run '^$' -bench Unfilter -count 3 [-tags purego] ./imaging
func BenchmarkUnfilter(b *testing.B) {
	for _, c := range []struct {
		name string
		ft   byte
	}{{"average", ftAverage}, {"paeth", ftPaeth}} {
		b.Run(c.name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			cur, prev := make([]byte, 3*4000), make([]byte, 3*4000)
			for i := range cur {
				cur[i], prev[i] = byte(r.Uint32()), byte(r.Uint32())
			}
			b.SetBytes(int64(len(cur)))
			for b.Loop() {
				if err := unfilter(c.ft, cur, prev, 3); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
