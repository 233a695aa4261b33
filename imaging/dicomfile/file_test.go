package dicomfile_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/npcorch/npcorch/imaging/dicomfile"
	"github.com/npcorch/npcorch/imaging/imagingtest"
)

func sample() imagingtest.DICOMSlice {
	px := make([]uint16, 12*10)
	for i := range px {
		px[i] = uint16(i*523) & 0x0fff
	}
	return imagingtest.DICOMSlice{PatientID: "P9", StudyUID: "1.2.3", SeriesUID: "1.2.3.4", SeriesDescription: "T2 FS AX",
		SeriesNumber: 7, FrameOfReference: "1.2.3.9", Instance: 12, Orientation: [6]float64{1, 0, 0, 0, 0.8, -0.6},
		Position: [3]float64{-100.5, 20, 31.25}, Spacing: [2]float64{0.5, 0.75}, Thickness: 4, Rows: 10, Cols: 12,
		BitsStored: 12, Signed: true, Slope: 2, Intercept: -10, WindowCenter: 40, WindowWidth: 400, Pixels: px}
}

// fields is what npcorch reads of a slice, whatever the encoding.
type fields struct {
	Modality, Series, Description, FoR string
	Number, Instance, Rows, Cols       int
	Position, Orientation, Spacing     []float64
	Bits, Stored, Signed               int
	Slope, Intercept, Center, Width    []float64
}

func read(f *dicomfile.File) fields {
	i := func(t dicomfile.Tag) int { v, _ := f.Int(t); return v }
	return fields{f.String(dicomfile.Modality), f.String(dicomfile.SeriesInstanceUID), f.String(dicomfile.SeriesDescription),
		f.String(dicomfile.FrameOfReferenceUID), i(dicomfile.SeriesNumber), i(dicomfile.InstanceNumber),
		i(dicomfile.Rows), i(dicomfile.Columns), f.Floats(dicomfile.ImagePositionPatient),
		f.Floats(dicomfile.ImageOrientationPatient), f.Floats(dicomfile.PixelSpacing), i(dicomfile.BitsAllocated),
		i(dicomfile.BitsStored), i(dicomfile.PixelRepresentation), f.Floats(dicomfile.RescaleSlope),
		f.Floats(dicomfile.RescaleIntercept), f.Floats(dicomfile.WindowCenter), f.Floats(dicomfile.WindowWidth)}
}

func TestParseOwnWriter(t *testing.T) {
	s := sample()
	f, err := dicomfile.Parse(s.Encode())
	if err != nil {
		t.Fatal(err)
	}
	got := read(f)
	want := fields{"MR", "1.2.3.4", "T2 FS AX", "1.2.3.9", 7, 12, 10, 12, []float64{-100.5, 20, 31.25},
		[]float64{1, 0, 0, 0, 0.8, -0.6}, []float64{0.5, 0.75}, 16, 12, 1, []float64{2}, []float64{-10}, []float64{40}, []float64{400}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read\n%+v\nwant\n%+v", got, want)
	}
	if !f.Preamble || f.Syntax != dicomfile.ExplicitVRLittleEndian || f.Pixels == nil || len(f.Pixels.Native) != 240 {
		t.Fatalf("file %+v", f)
	}
	if f.Pixels.Native[2] != byte(523&0xff) || f.Pixels.Native[3] != byte(523>>8) {
		t.Errorf("pixel bytes %v", f.Pixels.Native[:4])
	}
	// The nested sequence is listed, not entered.
	if e, ok := f.Find(0x00081140); !ok || e.VR.String() != "SQ" || e.Value != nil {
		t.Errorf("sequence element %+v %v", e, ok)
	}
	if _, ok := f.Find(0x00081155); ok {
		t.Error("an element inside a sequence was listed at the top level")
	}
}

// TestParseDCMTKEncodings reads the same slice rewritten by dcmtk's
// dcmconv in every encoding it writes, with and without preamble and meta
// information: every field and every pixel value must be the same.
func TestParseDCMTKEncodings(t *testing.T) {
	if _, err := exec.LookPath("dcmconv"); err != nil {
		t.Skip("dcmtk is not installed")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.dcm")
	os.WriteFile(in, sample().Encode(), 0o644)
	base, err := dicomfile.Parse(sample().Encode())
	if err != nil {
		t.Fatal(err)
	}
	want := read(base)
	for _, c := range []struct {
		args   []string
		syntax string
		meta   bool
	}{
		{[]string{"+ti"}, dicomfile.ImplicitVRLittleEndian, true},
		{[]string{"+te", "-e"}, dicomfile.ExplicitVRLittleEndian, true},
		{[]string{"+tb"}, dicomfile.ExplicitVRBigEndian, true},
		{[]string{"+td"}, dicomfile.DeflatedExplicitVRLittleEndian, true},
		{[]string{"+ti", "-F"}, dicomfile.ImplicitVRLittleEndian, false},
		{[]string{"+te", "-F"}, dicomfile.ExplicitVRLittleEndian, false},
		{[]string{"+tb", "-F"}, dicomfile.ExplicitVRBigEndian, false},
	} {
		name := strings.Join(c.args, " ")
		out := filepath.Join(dir, "out.dcm")
		if b, err := exec.Command("dcmconv", append(c.args, in, out)...).CombinedOutput(); err != nil {
			t.Fatalf("dcmconv %s: %v %s", name, err, b)
		}
		data, _ := os.ReadFile(out)
		variants := map[string][]byte{name: data}
		if c.meta {
			variants[name+", preamble cut off"] = data[132:]
		}
		for vname, data := range variants {
			f, err := dicomfile.Parse(data)
			if err != nil {
				t.Fatalf("%s: %v", vname, err)
			}
			if f.Syntax != c.syntax || (len(f.Meta) > 0) != c.meta {
				t.Errorf("%s: syntax %s, %d meta elements", vname, f.Syntax, len(f.Meta))
			}
			if got := read(f); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: read\n%+v\nwant\n%+v", vname, got, want)
			}
			px := f.Pixels.Native
			if c.syntax == dicomfile.ExplicitVRBigEndian {
				px = swap16(px)
			}
			if !bytes.Equal(px, base.Pixels.Native) {
				t.Errorf("%s: pixel data differs", vname)
			}
			h, err := dicomfile.ScanHeader(iotest.OneByteReader(bytes.NewReader(data)))
			if err != nil || !h.HasPixelData || h.Pixels != nil || !reflect.DeepEqual(read(h), want) {
				t.Errorf("%s: header scan %v %+v", vname, err, h)
			}
		}
	}
}

func swap16(b []byte) []byte {
	out := make([]byte, len(b))
	for i := 0; i+1 < len(b); i += 2 {
		out[i], out[i+1] = b[i+1], b[i]
	}
	return out
}

func TestEncapsulatedFragments(t *testing.T) {
	if _, err := exec.LookPath("dcmcrle"); err != nil {
		t.Skip("dcmtk is not installed")
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.dcm"), filepath.Join(dir, "out.dcm")
	os.WriteFile(in, sample().Encode(), 0o644)
	if b, err := exec.Command("dcmcrle", in, out).CombinedOutput(); err != nil {
		t.Fatalf("dcmcrle: %v %s", err, b)
	}
	data, _ := os.ReadFile(out)
	f, err := dicomfile.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if f.Syntax != "1.2.840.10008.1.2.5" || !f.Pixels.Encapsulated || len(f.Pixels.Fragments) != 1 || f.Pixels.Native != nil {
		t.Fatalf("RLE file: syntax %s, pixels %+v", f.Syntax, f.Pixels)
	}
	// An RLE fragment starts with its 64-byte header: the segment count.
	if fr := f.Pixels.Fragments[0]; len(fr) < 64 || fr[0] != 2 {
		t.Errorf("RLE fragment of %d bytes starts %v", len(fr), fr[:4])
	}
}

func TestRefusals(t *testing.T) {
	good := sample().Encode()
	noPixels := sample()
	noPixels.NoPixelData = true
	for name, c := range map[string]struct {
		data []byte
		want error
		text string
	}{
		"empty":             {nil, dicomfile.ErrNotDICOM, ""},
		"text":              {[]byte("this is a text file, not DICOM at all"), dicomfile.ErrNotDICOM, ""},
		"png":               {[]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"), dicomfile.ErrNotDICOM, ""},
		"preamble only":     {good[:132], dicomfile.ErrTruncated, "preamble"},
		"cut in meta":       {good[:150], dicomfile.ErrTruncated, "file meta"},
		"cut in header":     {good[:701], dicomfile.ErrTruncated, ""},
		"cut in pixel data": {good[:len(good)-7], dicomfile.ErrTruncated, "(7fe0,0010)"},
	} {
		_, err := dicomfile.Parse(c.data)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: %v, want %v mentioning %q", name, err, c.want, c.text)
		}
	}
	f, err := dicomfile.Parse(noPixels.Encode())
	if err != nil || f.HasPixelData || f.Pixels != nil {
		t.Errorf("file without pixel data: %v %+v", err, f)
	}
}

// BenchmarkScanHeader reads the header of a 512×512 slice from memory.
func BenchmarkScanHeader(b *testing.B) {
	s := sample()
	s.Rows, s.Cols, s.Pixels = 512, 512, make([]uint16, 512*512)
	data := s.Encode()
	for b.Loop() {
		if _, err := dicomfile.ScanHeader(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}
