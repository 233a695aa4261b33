package imaging_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	sdicom "github.com/suyashkumar/dicom"
	"github.com/suyashkumar/dicom/pkg/tag"

	. "github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/imaging/imagingtest"
)

// testSlices returns n axial slices of one series, 16×16, 12-bit.
func testSlices(n int, uid, desc string) []imagingtest.DICOMSlice {
	out := make([]imagingtest.DICOMSlice, n)
	for k := range out {
		px := make([]uint16, 16*16)
		for i := range px {
			px[i] = uint16((i*37 + k*101) % 4096)
		}
		out[k] = imagingtest.DICOMSlice{PatientID: "P1", StudyUID: "1.2.3", SeriesUID: uid, SeriesDescription: desc,
			SeriesNumber: 1, FrameOfReference: "1.2.3.4", Instance: k + 1, Orientation: [6]float64{1, 0, 0, 0, 1, 0},
			Position: [3]float64{0, 0, 3 * float64(k)}, Spacing: [2]float64{1, 1}, Thickness: 3, Rows: 16, Cols: 16,
			BitsStored: 12, Pixels: px}
	}
	return out
}

func folderOf(slices []imagingtest.DICOMSlice) fstest.MapFS {
	fsys := fstest.MapFS{}
	for i, s := range slices {
		fsys[fmt.Sprintf("d/IM%03d", i)] = &fstest.MapFile{Data: s.Encode()}
	}
	return fsys
}

// TestDICOMFolderWithTwoSeriesIsRefused (issue 12, item 16): a T1 folder
// that alternates T1 and T1+C files (same frame of reference and plane,
// instance numbers that differ) must not be read as one series: the error
// names both series and says what to do.
func TestDICOMFolderWithTwoSeriesIsRefused(t *testing.T) {
	t1 := testSlices(6, "1.2.3.100", "T1 TRA")
	t1c := testSlices(6, "1.2.3.200", "T1+C TRA")
	var mixed []imagingtest.DICOMSlice
	for k := 0; k < 6; k++ {
		t1c[k].Instance += 100
		t1c[k].Position[2] += 1.5
		mixed = append(mixed, t1[k], t1c[k])
	}
	_, err := ReadSeries(folderOf(mixed), "d", SeqT1Ax, ReadOptions{Limits: DefaultLimits})
	if err == nil {
		t.Fatal("a folder holding two series was read as one")
	}
	for _, want := range []string{"d", "1.2.3.100", "1.2.3.200", "T1 TRA", "T1+C TRA", "6 files", "one folder per series"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q: %v", want, err)
		}
	}
}

// TestDICOMWithoutPreambleIsRead (issue 12, item 17): files without the
// 128-byte preamble and "DICM" are DICOM all the same; none may be skipped.
func TestDICOMWithoutPreambleIsRead(t *testing.T) {
	slices := testSlices(24, "1.2.3.100", "T1 TRA")
	for _, k := range []int{3, 11, 20} {
		slices[k].NoPreamble = true
	}
	s, err := ReadSeries(folderOf(slices), "d", SeqT1Ax, ReadOptions{Limits: DefaultLimits})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Meta.Slices) != 24 {
		t.Fatalf("%d of 24 slices read", len(s.Meta.Slices))
	}
	for _, k := range []int{3, 11, 20} {
		got, err := s.Slice(context.Background(), k)
		if err != nil {
			t.Fatalf("slice %d: %v", k, err)
		}
		with := slices[k]
		with.NoPreamble = false
		want, err := DecodeDICOMSlice(context.Background(), with.Encode(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Pix, want.Pix) {
			t.Errorf("slice %d without preamble decodes to other pixels", k)
		}
	}
}

// compressionVariants are slices whose 8-bit output takes each path of
// the decoder: the file's window, percentiles, signed rescaled values
// without and with a window.
func compressionVariants() map[string]imagingtest.DICOMSlice {
	base := testSlices(1, "1.2.3.100", "T1 TRA")[0]
	variants := map[string]imagingtest.DICOMSlice{}
	v := base
	v.WindowCenter, v.WindowWidth = 1500, 2001
	variants["window"] = v
	v = base
	variants["percentiles"] = v
	v = base
	v.Pixels = slices.Clone(base.Pixels)
	v.Signed, v.Slope, v.Intercept = true, 1.5, -7.25
	for i := range v.Pixels {
		v.Pixels[i] = uint16(int16(v.Pixels[i])-2048) & 0x0fff
	}
	variants["signed rescaled"] = v
	v.WindowCenter, v.WindowWidth = 100, 911
	variants["signed rescaled window"] = v
	return variants
}

// TestCompressedDICOMGivesTheSameBytes (issue 12, item 18): the same
// pixels give the same 8-bit output whatever the transfer syntax; the
// compressed files are made by dcmtk's own encoders (lossless JPEG, RLE,
// JPEG-LS), and decoded through dcmtk.
func TestCompressedDICOMGivesTheSameBytes(t *testing.T) {
	for _, tool := range []string{"dcmcjpeg", "dcmcrle", "dcmcjpls", "dcmdjpeg", "dcmdrle", "dcmdjpls"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("dcmtk's %s is not installed", tool)
		}
	}
	dir := t.TempDir()
	for name, sl := range compressionVariants() {
		native := sl.Encode()
		want, err := DecodeDICOMSlice(context.Background(), native, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		in := filepath.Join(dir, "in.dcm")
		os.WriteFile(in, native, 0o644)
		for _, enc := range [][]string{{"dcmcjpeg"}, {"dcmcjpeg", "+el", "+sv", "1"}, {"dcmcrle"}, {"dcmcjpls"}} {
			out := filepath.Join(dir, "out.dcm")
			if b, err := exec.Command(enc[0], append(enc[1:], in, out)...).CombinedOutput(); err != nil {
				t.Fatalf("%v: %v %s", enc, err, b)
			}
			comp, _ := os.ReadFile(out)
			got, err := DecodeDICOMSlice(context.Background(), comp, DecompressTools{TempDir: dir})
			if err != nil {
				t.Fatalf("%s, %v: %v", name, enc, err)
			}
			diff := 0
			for i := range want.Pix {
				if got.Pix[i] != want.Pix[i] {
					diff++
				}
			}
			if diff != 0 {
				t.Errorf("%s, %v: %d of %d pixels differ from the uncompressed file's", name, enc, diff, len(want.Pix))
			}
		}
	}
}

// TestNonMRSeriesIsRefused (issue 12, item 20): a CT series listed as an
// MR sequence is an error that names the modality.
func TestNonMRSeriesIsRefused(t *testing.T) {
	slices := testSlices(3, "1.2.3.100", "HEAD CT")
	for i := range slices {
		slices[i].Modality = "CT"
	}
	_, err := ReadSeries(folderOf(slices), "d", SeqT1Ax, ReadOptions{Limits: DefaultLimits})
	if err == nil || !strings.Contains(err.Error(), "CT") || !strings.Contains(err.Error(), "MR") {
		t.Fatalf("CT series read as %s: %v", SeqT1Ax, err)
	}
}

// TestMonochrome1IsShownInverted: in a MONOCHROME1 slice the lowest value
// is white (DICOM PS3.3 C.7.6.3.1.2), so the same stored values come out
// as 255 minus the MONOCHROME2 bytes, with the same window. They used to
// come out as if MONOCHROME2.
func TestMonochrome1IsShownInverted(t *testing.T) {
	for _, win := range []float64{0, 1800} { // percentiles, then the header's window
		m2 := testSlices(1, "1.2.3.100", "T1 TRA")[0]
		m2.WindowCenter, m2.WindowWidth = 1000, win
		m1 := m2
		m1.Photometric = "MONOCHROME1"
		want, err := DecodeDICOMSlice(context.Background(), m2.Encode(), nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeDICOMSlice(context.Background(), m1.Encode(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want.Pix {
			if got.Pix[i] != 255-want.Pix[i] {
				t.Fatalf("window width %v: pixel %d is %d in MONOCHROME1, %d in MONOCHROME2; want %d", win, i, got.Pix[i], want.Pix[i], 255-want.Pix[i])
			}
		}
	}
}

// TestPixelLayoutsItCannotShowAreRefused: a colour photometric
// interpretation or pixels stored above the low bits are refused by name,
// not shown as if they were plain MONOCHROME2.
func TestPixelLayoutsItCannotShowAreRefused(t *testing.T) {
	palette := testSlices(1, "1.2.3.100", "T1 TRA")[0]
	palette.Photometric = "PALETTE COLOR"
	high := testSlices(1, "1.2.3.100", "T1 TRA")[0]
	high.HighBit = 15 // 12 bits stored in the high bits of 16
	for name, c := range map[string]struct {
		slice imagingtest.DICOMSlice
		want  string
	}{
		"palette":  {palette, "photometric interpretation PALETTE COLOR"},
		"high bit": {high, "high bit 15 with 12 bits stored"},
	} {
		_, err := DecodeDICOMSlice(context.Background(), c.slice.Encode(), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
	}
}

// TestMissingPixelDataIsNotTruncation (issue 12, item 20): a complete
// header without a PixelData element says so, not "truncated".
func TestMissingPixelDataIsNotTruncation(t *testing.T) {
	sl := testSlices(1, "1.2.3.100", "T1 TRA")[0]
	sl.Rows, sl.Cols, sl.NoPixelData = 256, 256, true
	_, err := DecodeDICOMSlice(context.Background(), sl.Encode(), nil)
	if err == nil || strings.Contains(err.Error(), "truncated") || !strings.Contains(err.Error(), "no PixelData") {
		t.Fatalf("missing pixel data: %v", err)
	}
}

// referenceDecode is the decoder before the bulk reader, kept as the
// reference: github.com/suyashkumar/dicom reads the stored values, each is
// rescaled to a float, the window is the file's or the percentiles of the
// sorted values, and every value is windowed on its own.
func referenceDecode(t *testing.T, data []byte) []uint8 {
	t.Helper()
	ds, err := sdicom.Parse(bytes.NewReader(data), int64(len(data)), nil)
	if err != nil {
		t.Fatal(err)
	}
	num := func(tg tag.Tag, def float64) float64 {
		e, err := ds.FindElementByTag(tg)
		if err != nil {
			return def
		}
		switch v := e.Value.GetValue().(type) {
		case []int:
			return float64(v[0])
		case []string:
			f, err := strconv.ParseFloat(strings.TrimSpace(v[0]), 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
		t.Fatalf("%v: %T", tg, e.Value.GetValue())
		return 0
	}
	stored, signed := int(num(tag.BitsStored, 0)), num(tag.PixelRepresentation, 0) == 1
	slope, icpt := num(tag.RescaleSlope, 1), num(tag.RescaleIntercept, 0)
	center, width := num(tag.WindowCenter, 0), num(tag.WindowWidth, 0)
	pe, _ := ds.FindElementByTag(tag.PixelData)
	nf, err := pe.Value.GetValue().(sdicom.PixelDataInfo).Frames[0].GetNativeFrame()
	if err != nil {
		t.Fatal(err)
	}
	var raw []uint32
	switch r := nf.RawDataSlice().(type) {
	case []uint16:
		for _, v := range r {
			raw = append(raw, uint32(v))
		}
	case []uint8:
		for _, v := range r {
			raw = append(raw, uint32(v))
		}
	}
	mask := uint32(1)<<stored - 1
	vals := make([]float64, len(raw))
	for i, u := range raw {
		u &= mask
		v := int64(u)
		if signed && u&(1<<(stored-1)) != 0 {
			v -= int64(mask) + 1
		}
		vals[i] = float64(v)*slope + icpt
	}
	out := make([]uint8, len(vals))
	clamp := func(v float64) uint8 { return uint8(math.Max(0, math.Min(255, v))) }
	if width >= 1 {
		lo, hi := center-0.5-(width-1)/2, center-0.5+(width-1)/2
		den := math.Max(width-1, 1)
		if width-1 <= 0 {
			den = 1
		}
		for i, v := range vals {
			switch {
			case v <= lo:
				out[i] = 0
			case v > hi:
				out[i] = 255
			default:
				out[i] = clamp(math.Floor(((v-(center-0.5))/den+0.5)*255 + 0.5))
			}
		}
		return out
	}
	s := slices.Clone(vals)
	slices.Sort(s)
	n := float64(len(s) - 1)
	lo, hi := s[int(math.Floor(0.005*n))], s[int(math.Ceil(0.995*n))]
	if !(hi > lo) {
		hi = lo + 1
	}
	k := 255 / (hi - lo)
	for i, v := range vals {
		out[i] = clamp(math.Floor((v-lo)*k + 0.5))
	}
	return out
}

// TestBulkDecodeMatchesReference: the bulk reader's bytes equal the
// reference decoder's on random slices: 8 and 16 bits allocated, any bits
// stored, garbage above them, signed or not, positive, negative and
// fractional slopes, with and without a window.
func TestBulkDecodeMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	slopes := []float64{1, 2, 0.5, -1, -0.37, 1e-3, 3.3}
	for c := 0; c < 300; c++ {
		sl := testSlices(1, "1.2.3.100", "T1 TRA")[0]
		sl.BitsAllocated = []int{8, 16}[rng.IntN(2)]
		sl.BitsStored = 1 + rng.IntN(sl.BitsAllocated)
		sl.Rows, sl.Cols = 1+rng.IntN(40), 1+rng.IntN(40)
		sl.Signed = rng.IntN(2) == 0
		sl.Slope, sl.Intercept = slopes[rng.IntN(len(slopes))], math.Round(rng.NormFloat64()*1000)/8
		sl.WindowCenter, sl.WindowWidth = 0, 0
		if rng.IntN(2) == 0 {
			sl.WindowCenter, sl.WindowWidth = math.Round(rng.NormFloat64()*500), float64(1+rng.IntN(3000))
		}
		sl.Pixels = make([]uint16, sl.Rows*sl.Cols)
		spread := 1 + rng.IntN(1<<sl.BitsAllocated)
		for i := range sl.Pixels {
			sl.Pixels[i] = uint16(rng.IntN(spread))
			if sl.BitsAllocated == 8 {
				sl.Pixels[i] &= 0xff
			}
		}
		data := sl.Encode()
		got, err := DecodeDICOMSlice(context.Background(), data, nil)
		if err != nil {
			t.Fatalf("case %d: %v", c, err)
		}
		if want := referenceDecode(t, data); !bytes.Equal(got.Pix, want) {
			t.Fatalf("case %d (%d bits allocated, %d stored, signed %v, slope %v, intercept %v, window %v/%v): bytes differ from the reference",
				c, sl.BitsAllocated, sl.BitsStored, sl.Signed, sl.Slope, sl.Intercept, sl.WindowCenter, sl.WindowWidth)
		}
	}
}

// BenchmarkDecodeDICOMSlice decodes a 512×512 12-bit slice, windowed by
// the file's VOI window and by percentiles.
func BenchmarkDecodeDICOMSlice(b *testing.B) {
	for _, window := range []bool{true, false} {
		sl := imagingtest.DICOMSeries(imagingtest.Options{Size: 512}, 0, 1)[3]
		sl.WindowCenter, sl.WindowWidth = 0, 0
		name := "percentiles"
		if window {
			sl.WindowCenter, sl.WindowWidth, name = 1600, 3000, "window"
		}
		data := sl.Encode()
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := DecodeDICOMSlice(context.Background(), data, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestJPEGBaselineIsWindowedAsNative: a baseline JPEG slice (made by
// dcmcjpeg) goes through the header's rescale and window as the same
// slice uncompressed does (lossy: close, not equal), and a JPEG frame
// whose size differs from the header's is refused before it is decoded.
func TestJPEGBaselineIsWindowedAsNative(t *testing.T) {
	if _, err := exec.LookPath("dcmcjpeg"); err != nil {
		t.Skip("dcmtk is not installed")
	}
	sl := testSlices(1, "1.2.3.100", "T1 TRA")[0]
	sl.Rows, sl.Cols, sl.BitsAllocated, sl.BitsStored = 64, 64, 8, 8
	sl.Pixels = make([]uint16, 64*64)
	for i := range sl.Pixels {
		sl.Pixels[i] = uint16(96 + (i%64)/2) // a smooth ramp 96..127
	}
	sl.WindowCenter, sl.WindowWidth = 112, 32 // stretched 8×
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.dcm"), filepath.Join(dir, "out.dcm")
	os.WriteFile(in, sl.Encode(), 0o644)
	if b, err := exec.Command("dcmcjpeg", "+eb", "+q", "100", in, out).CombinedOutput(); err != nil {
		t.Fatalf("dcmcjpeg: %v %s", err, b)
	}
	comp, _ := os.ReadFile(out)
	want, err := DecodeDICOMSlice(context.Background(), sl.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeDICOMSlice(context.Background(), comp, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for i := range want.Pix {
		sum += max(int(got.Pix[i])-int(want.Pix[i]), int(want.Pix[i])-int(got.Pix[i]))
	}
	if mean := float64(sum) / float64(len(want.Pix)); mean > 4 {
		t.Errorf("JPEG baseline differs from the native slice by %.1f grey levels on average: not windowed alike", mean)
	}
	// Claim a 60000×60000 frame in the JPEG's SOF0 marker.
	i := bytes.Index(comp, []byte{0xff, 0xc0})
	if i < 0 {
		t.Fatal("no SOF0 marker")
	}
	copy(comp[i+5:], []byte{0xea, 0x60, 0xea, 0x60})
	if _, err := DecodeDICOMSlice(context.Background(), comp, nil); err == nil || !strings.Contains(err.Error(), "60000x60000") {
		t.Errorf("JPEG frame larger than the header: %v", err)
	}
}

// TestDICOMFilesListedFromAMixedFolder: a series listed file by file is
// read from a folder that holds two series (as a PACS export keeps them),
// with the geometry and pixels of the same series read as a folder of its
// own; a listed file that is missing, not DICOM or of the other series is
// refused by name.
func TestDICOMFilesListedFromAMixedFolder(t *testing.T) {
	t1 := testSlices(6, "1.2.3.100", "T1 TRA")
	t1c := testSlices(6, "1.2.3.200", "T1+C TRA")
	fsys, own := fstest.MapFS{}, fstest.MapFS{}
	var files []string
	for k := range t1 {
		t1c[k].Instance += 100
		name := fmt.Sprintf("pacs/P1/ST1/IM%03d", 2*k)
		fsys[name] = &fstest.MapFile{Data: t1[k].Encode()}
		fsys[fmt.Sprintf("pacs/P1/ST1/IM%03d", 2*k+1)] = &fstest.MapFile{Data: t1c[k].Encode()}
		own[fmt.Sprintf("d/IM%03d", k)] = &fstest.MapFile{Data: t1[k].Encode()}
		files = append(files, name)
	}
	fsys["pacs/P1/README"] = &fstest.MapFile{Data: []byte("not DICOM")}
	ctx := context.Background()
	opt := ReadOptions{Limits: DefaultLimits}
	listed, err := ReadDICOMFiles(fsys, files, SeqT1Ax, opt)
	if err != nil {
		t.Fatal(err)
	}
	folder, err := ReadSeries(own, "d", SeqT1Ax, opt)
	if err != nil {
		t.Fatal(err)
	}
	if listed.Dir != "pacs/P1/ST1 (6 listed files)" || len(listed.Files) != 6 || listed.Files[0] != "pacs/P1/ST1/IM000" {
		t.Errorf("listed series named %q, files %v", listed.Dir, listed.Files)
	}
	for i := range folder.Meta.Slices {
		a, b := listed.Meta.Slices[i], folder.Meta.Slices[i]
		if a.Instance != b.Instance || a.Position != b.Position || a.File != files[i] {
			t.Fatalf("slice %d: listed %+v, folder %+v", i, a, b)
		}
		ga, err := listed.Slice(ctx, i)
		if err != nil {
			t.Fatal(err)
		}
		gb, _ := folder.Slice(ctx, i)
		if !bytes.Equal(ga.Pix, gb.Pix) {
			t.Fatalf("slice %d: pixels differ", i)
		}
	}
	for name, c := range map[string]struct {
		files []string
		want  []string
	}{
		"missing":      {append(slices.Clone(files), "pacs/P1/ST1/IM999"), []string{"pacs/P1/ST1/IM999"}},
		"not DICOM":    {append(slices.Clone(files), "pacs/P1/README"), []string{"pacs/P1/README", "not a DICOM file"}},
		"other series": {append(slices.Clone(files), "pacs/P1/ST1/IM001"), []string{"1.2.3.100", "1.2.3.200", "list the files of one series only"}},
		"leaves root":  {[]string{"../x"}, []string{`"../x"`}},
		"empty":        {nil, []string{"no files listed"}},
	} {
		_, err := ReadDICOMFiles(fsys, c.files, SeqT1Ax, opt)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %v does not name %q", name, err, w)
			}
		}
	}
}

func TestListedSeriesName(t *testing.T) {
	for _, c := range []struct {
		files []string
		want  string
	}{
		{[]string{"a/b/c/1", "a/b/c/2"}, "a/b/c (2 listed files)"},
		{[]string{"a/b/c/1", "a/b/d/2", "a/b/3"}, "a/b (3 listed files)"},
		{[]string{"a/1", "b/2"}, ". (2 listed files)"},
		{[]string{"ab/1", "a/2"}, ". (2 listed files)"},
		{[]string{"1"}, ". (1 listed files)"},
	} {
		if got := ListedSeriesName(c.files); got != c.want {
			t.Errorf("%v: %q, want %q", c.files, got, c.want)
		}
	}
}
