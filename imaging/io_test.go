package imaging

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/suyashkumar/dicom"
	"github.com/suyashkumar/dicom/pkg/frame"
	"github.com/suyashkumar/dicom/pkg/tag"
)

func TestEncodePNGRoundTrip(t *testing.T) {
	g := image.NewGray(image.Rect(0, 0, 37, 23))
	for i := range g.Pix {
		g.Pix[i] = uint8(i*31 + i/37)
	}
	pal := &image.Paletted{Pix: append([]uint8(nil), g.Pix...), Stride: g.Stride, Rect: g.Rect, Palette: make(color.Palette, 256)}
	for i := range pal.Palette {
		pal.Palette[i] = color.Gray{Y: uint8(i)}
	}
	pal.Palette[7] = Yellow
	rgba := image.NewRGBA(g.Rect)
	for i := range g.Pix {
		rgba.Pix[4*i], rgba.Pix[4*i+1], rgba.Pix[4*i+2], rgba.Pix[4*i+3] = g.Pix[i], 255-g.Pix[i], g.Pix[i]/2, 255
	}
	g16 := image.NewGray16(g.Rect)
	for i := range g16.Pix {
		g16.Pix[i] = uint8(i*131 + i/7)
	}
	for _, m := range []image.Image{g, pal, rgba, g16, g.SubImage(image.Rect(3, 4, 20, 20)), g16.SubImage(image.Rect(1, 2, 30, 9))} {
		var buf bytes.Buffer
		if err := EncodePNG(&buf, m); err != nil {
			t.Fatal(err)
		}
		var again bytes.Buffer
		EncodePNG(&again, m)
		if !bytes.Equal(buf.Bytes(), again.Bytes()) {
			t.Fatalf("%T: encoding is not deterministic", m)
		}
		back, err := png.Decode(&buf)
		if err != nil {
			t.Fatalf("%T: %v", m, err)
		}
		b := m.Bounds()
		if back.Bounds().Size() != b.Size() {
			t.Fatalf("%T: size %v, want %v", m, back.Bounds().Size(), b.Size())
		}
		for y := 0; y < b.Dy(); y++ {
			for x := 0; x < b.Dx(); x++ {
				r1, g1, b1, a1 := m.At(b.Min.X+x, b.Min.Y+y).RGBA()
				r2, g2, b2, a2 := back.At(x, y).RGBA()
				if r1 != r2 || g1 != g2 || b1 != b2 || a1 != a2 {
					t.Fatalf("%T: pixel %d,%d changed", m, x, y)
				}
			}
		}
	}
	if err := EncodePNG(&bytes.Buffer{}, image.NewNRGBA(image.Rect(0, 0, 2, 2))); err == nil {
		t.Error("NRGBA must be refused")
	}
}

// pngHeader returns a PNG signature and IHDR declaring w×h 8-bit gray.
func pngHeader(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr, w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8] = 8
	binary.Write(&b, binary.BigEndian, uint32(13))
	chunk := append([]byte("IHDR"), ihdr...)
	b.Write(chunk)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(chunk))
	return b.Bytes()
}

func TestHugePNGRefusedFromHeader(t *testing.T) {
	data := pngHeader(30000, 30000)
	_, err := DecodeImage(data, DefaultLimits.MaxSlidePixels)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "30000x30000") {
		t.Fatalf("30k PNG: %v", err)
	}
}

func TestCorruptAndTruncatedPNG(t *testing.T) {
	var buf bytes.Buffer
	g := image.NewGray(image.Rect(0, 0, 64, 64))
	for i := range g.Pix {
		g.Pix[i] = uint8(i)
	}
	png.Encode(&buf, g)
	full := buf.Bytes()
	for name, data := range map[string][]byte{
		"truncated": full[:len(full)/2],
		"garbage":   []byte("not an image at all"),
		"empty":     nil,
	} {
		if _, err := DecodeImage(data, DefaultLimits.MaxSlicePixels); err == nil {
			t.Errorf("%s PNG decoded without error", name)
		}
	}
}

func TestReadSeriesFromFolder(t *testing.T) {
	var buf bytes.Buffer
	g16 := image.NewGray16(image.Rect(0, 0, 8, 8))
	for i := 0; i < 64; i++ {
		g16.SetGray16(i%8, i/8, color.Gray16{Y: uint16(1000 + i*100)})
	}
	png.Encode(&buf, g16)
	side := `{"sequence":"T2_Ax","frame_of_reference":"F","orientation":[1,0,0,0,1,0],"pixel_spacing":[1,1],"slice_thickness":3,
	"slices":[{"file":"b.png","instance":2,"position":[0,0,3]},{"file":"a.png","instance":1,"position":[0,0,0]}]}`
	fsys := fstest.MapFS{
		"s/series.json": {Data: []byte(side)},
		"s/a.png":       {Data: buf.Bytes()},
		"s/b.png":       {Data: []byte("corrupt")},
	}
	s, err := ReadSeries(fsys, "s", SeqT2Ax, ReadOptions{Limits: DefaultLimits})
	if err != nil {
		t.Fatal(err)
	}
	if s.Files[0] != "s/a.png" || s.Files[1] != "s/b.png" {
		t.Fatalf("files not sorted along the normal: %v", s.Files)
	}
	g, err := s.Slice(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	// 16-bit values are windowed by percentiles: lowest → 0, highest → 255.
	if g.Pix[0] != 0 || g.Pix[63] != 255 {
		t.Errorf("windowed 16-bit slice: first %d last %d", g.Pix[0], g.Pix[63])
	}
	if _, err := s.Slice(context.Background(), 1); err == nil || !strings.Contains(err.Error(), "s/b.png") {
		t.Errorf("corrupt slice error must name the file: %v", err)
	}
	if _, err := ReadSeries(fsys, "s", SeqT1Ax, ReadOptions{Limits: DefaultLimits}); err == nil {
		t.Error("sequence mismatch with the dataset must fail")
	}
	if _, err := ReadSeries(fsys, "../s", SeqT2Ax, ReadOptions{Limits: DefaultLimits}); err == nil {
		t.Error("a series path leaving the dataset must fail")
	}
}

func TestParseSidecarRejects(t *testing.T) {
	base := `{"sequence":"T1_Ax","frame_of_reference":"F","orientation":%s,"pixel_spacing":[1,1],"slice_thickness":3,"slices":%s}`
	for name, doc := range map[string]string{
		"unknown sequence": strings.Replace(base, "T1_Ax", "T9", 1),
		"no normal":        strings.Replace(base, "%s", "[1,0,0,1,0,0]", 1),
		"escape":           strings.Replace(strings.Replace(base, "%s", "[1,0,0,0,1,0]", 1), "%s", `[{"file":"../x.png","instance":1,"position":[0,0,0]}]`, 1),
		"absolute":         strings.Replace(strings.Replace(base, "%s", "[1,0,0,0,1,0]", 1), "%s", `[{"file":"/etc/passwd","instance":1,"position":[0,0,0]}]`, 1),
		"duplicate":        strings.Replace(strings.Replace(base, "%s", "[1,0,0,0,1,0]", 1), "%s", `[{"file":"a","instance":1,"position":[0,0,0]},{"file":"b","instance":1,"position":[0,0,3]}]`, 1),
		"no slices":        strings.Replace(strings.Replace(base, "%s", "[1,0,0,0,1,0]", 1), "%s", `[]`, 1),
		"not json":         "{",
	} {
		if _, err := ParseSidecar([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// writeDICOM makes a single-frame 16-bit MR slice.
func writeDICOM(t testing.TB, signed bool, slope, intercept float64, window []string, raw []uint16, rows, cols int) []byte {
	t.Helper()
	pr := 0
	if signed {
		pr = 1
	}
	nf := &frame.NativeFrame[uint16]{RawData: raw, InternalSamplesPerPixel: 1, InternalRows: rows, InternalCols: cols, InternalBitsPerSample: 16}
	els := []*dicom.Element{
		mustEl(t, tag.MediaStorageSOPClassUID, []string{"1.2.840.10008.5.1.4.1.1.4"}),
		mustEl(t, tag.MediaStorageSOPInstanceUID, []string{"1.2.3.4"}),
		mustEl(t, tag.TransferSyntaxUID, []string{"1.2.840.10008.1.2.1"}),
		mustEl(t, tag.FrameOfReferenceUID, []string{"1.2.3"}),
		mustEl(t, tag.InstanceNumber, []string{"4"}),
		mustEl(t, tag.ImagePositionPatient, []string{"0", "0", "12.5"}),
		mustEl(t, tag.ImageOrientationPatient, []string{"1", "0", "0", "0", "1", "0"}),
		mustEl(t, tag.SamplesPerPixel, []int{1}),
		mustEl(t, tag.PhotometricInterpretation, []string{"MONOCHROME2"}),
		mustEl(t, tag.Rows, []int{rows}),
		mustEl(t, tag.Columns, []int{cols}),
		mustEl(t, tag.PixelSpacing, []string{"0.5", "0.5"}),
		mustEl(t, tag.SliceThickness, []string{"3"}),
		mustEl(t, tag.BitsAllocated, []int{16}),
		mustEl(t, tag.BitsStored, []int{16}),
		mustEl(t, tag.HighBit, []int{15}),
		mustEl(t, tag.PixelRepresentation, []int{pr}),
		mustEl(t, tag.RescaleIntercept, []string{ftoa(intercept)}),
		mustEl(t, tag.RescaleSlope, []string{ftoa(slope)}),
	}
	if window != nil {
		els = append(els, mustEl(t, tag.WindowCenter, []string{window[0]}), mustEl(t, tag.WindowWidth, []string{window[1]}))
	}
	els = append(els, mustEl(t, tag.PixelData, dicom.PixelDataInfo{Frames: []*frame.Frame{{NativeData: nf}}}))
	var buf bytes.Buffer
	if err := dicom.Write(&buf, dicom.Dataset{Elements: els}, dicom.SkipVRVerification()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func mustEl(t testing.TB, tg tag.Tag, v any) *dicom.Element {
	t.Helper()
	e, err := dicom.NewElement(tg, v)
	if err != nil {
		t.Fatalf("element %v: %v", tg, err)
	}
	return e
}

func TestDICOMSignedRescaleWindow(t *testing.T) {
	// Signed stored values −100, 0, 100, 200 (two's complement), slope 2,
	// intercept 10 → 200·k+10 style modality values −190, 10, 210, 410.
	raw := []uint16{uint16(0x10000 - 100), 0, 100, 200}
	data := writeDICOM(t, true, 2, 10, []string{"110", "401"}, raw, 2, 2)
	g, err := DecodeDICOMSlice(context.Background(), data, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Window c=110 w=401: lo = 110−0.5−200 = −90.5, hi = 309.5.
	// −190 → 0; 10 → ((10−109.5)/400+0.5)·255 = 64.07 → 64; 210 → 191.57 → 192; 410 → 255.
	want := []uint8{0, 64, 192, 255}
	for i := range want {
		if g.Pix[i] != want[i] {
			t.Fatalf("pixels %v, want %v", g.Pix, want)
		}
	}
	// Without a window: percentiles (min → 0, max → 255).
	g, err = DecodeDICOMSlice(context.Background(), writeDICOM(t, true, 1, 0, nil, raw, 2, 2), nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.Pix[0] != 0 || g.Pix[3] != 255 || g.Pix[1] != 85 {
		t.Errorf("percentile window: %v", g.Pix)
	}
}

func TestDICOMSeriesAndBadFiles(t *testing.T) {
	raw := make([]uint16, 16)
	for i := range raw {
		raw[i] = uint16(i * 50)
	}
	good := writeDICOM(t, false, 1, 0, nil, raw, 4, 4)
	fsys := fstest.MapFS{"d/1.dcm": {Data: good}, "d/notes.txt": {Data: []byte("hello")}}
	s, err := ReadSeries(fsys, "d", SeqT1Ax, ReadOptions{Limits: DefaultLimits})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Meta.Slices) != 1 || s.Meta.Slices[0].Position[2] != 12.5 || s.Meta.PixelSpacing != [2]float64{0.5, 0.5} || s.Meta.FrameOfReference != "1.2.3" {
		t.Fatalf("meta %+v", s.Meta)
	}
	if _, err := s.Slice(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"truncated": good[:len(good)-10],
		"header":    good[:200],
		"garbage":   append(append(make([]byte, 128), "DICM"...), bytes.Repeat([]byte{0xff}, 64)...),
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("%s: panic %v", name, r)
				}
			}()
			if _, err := DecodeDICOMSlice(context.Background(), data, nil); err == nil {
				t.Errorf("%s DICOM decoded without error", name)
			}
		}()
	}
	other := writeDICOM(t, false, 1, 0, nil, raw, 4, 4)
	other = bytes.Replace(other, []byte("1.2.3\x00"), []byte("9.9.9\x00"), 1)
	mixed := fstest.MapFS{"d/1.dcm": {Data: good}, "d/2.dcm": {Data: other}}
	if _, err := ReadSeries(mixed, "d", SeqT1Ax, ReadOptions{Limits: DefaultLimits}); err == nil || !strings.Contains(err.Error(), "frame of reference") {
		t.Errorf("mixed frames of reference: %v", err)
	}
}

func TestDICOMCompressedNeedsDCMTK(t *testing.T) {
	raw := make([]uint16, 64*64)
	for i := range raw {
		raw[i] = uint16((i * 37) % 3000)
	}
	native := writeDICOM(t, false, 1, 0, nil, raw, 64, 64)
	if _, err := exec.LookPath("dcmcjpeg"); err != nil {
		t.Skip("dcmtk not installed")
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.dcm"), filepath.Join(dir, "out.dcm")
	os.WriteFile(in, native, 0o644)
	if b, err := exec.Command("dcmcjpeg", in, out).CombinedOutput(); err != nil {
		t.Fatalf("dcmcjpeg: %v %s", err, b)
	}
	comp, _ := os.ReadFile(out)
	_, err := DecodeDICOMSlice(context.Background(), comp, nil)
	if !errors.Is(err, ErrNeedsTool) || !strings.Contains(err.Error(), "needs dcmdjpeg (Debian package dcmtk) to decompress, which is not installed") {
		t.Fatalf("without dcmtk: %v", err)
	}
	want, err := DecodeDICOMSlice(context.Background(), native, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeDICOMSlice(context.Background(), comp, DecompressTools{TempDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	diff := 0
	for i := range want.Pix {
		if want.Pix[i] != got.Pix[i] {
			diff++
		}
	}
	if diff != 0 {
		t.Errorf("dcmtk decode of lossless JPEG differs from the native slice at %d pixels", diff)
	}
}
