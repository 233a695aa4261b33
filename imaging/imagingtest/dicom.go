package imagingtest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/npcorch/npcorch/imaging"
)

// DICOM transfer syntaxes the writer uses.
const (
	ExplicitVRLittleEndian = "1.2.840.10008.1.2.1"
	MRImageStorage         = "1.2.840.10008.5.1.4.1.1.4"
)

// DICOMSlice is one single-frame grayscale slice file, written in explicit
// VR little endian with a header shaped like a scanner's (patient, study,
// series, acquisition and private elements, a nested sequence) so that
// header scans do realistic work.
type DICOMSlice struct {
	Modality          string // "" means MR
	PatientID         string
	StudyUID          string
	SeriesUID         string
	SeriesDescription string
	SeriesNumber      int
	FrameOfReference  string
	Instance          int
	Orientation       [6]float64
	Position          [3]float64
	Spacing           [2]float64
	Thickness         float64
	Rows, Cols        int
	// BitsAllocated is 8 or 16 (0 means 16); BitsStored ≤ it (0: all).
	BitsAllocated, BitsStored int
	Signed                    bool
	// Slope 0 writes no rescale elements.
	Slope, Intercept float64
	// Window, when Width > 0, is written as the first VOI window.
	WindowCenter, WindowWidth float64
	// Pixels holds Rows×Cols stored values (the low BitsAllocated bits).
	Pixels []uint16
	// NoPreamble leaves out the 128-byte preamble and "DICM".
	NoPreamble bool
	// NoPixelData leaves out the PixelData element.
	NoPixelData bool
	// RepetitionTime and EchoTime in ms (0: 500 and 12, a T1's).
	RepetitionTime, EchoTime float64
	// InversionTime in ms is written when not 0.
	InversionTime float64
	// ContrastAgent is written as ContrastBolusAgent when not "".
	ContrastAgent string
	// ImageType replaces ORIGINAL\PRIMARY\M\ND when not "".
	ImageType string
	// Protocol is the ProtocolName ("" writes the series description).
	Protocol string
	// NoGeometry leaves out ImagePositionPatient and
	// ImageOrientationPatient.
	NoGeometry bool
	// Photometric replaces MONOCHROME2 when not "".
	Photometric string
	// HighBit replaces BitsStored-1 when not 0.
	HighBit int
}

// element is one data element to write.
type element struct {
	tag   uint32
	vr    string
	value []byte
	items [][]element // SQ items, written with undefined lengths
}

func str(tag uint32, vr, s string) element {
	b := []byte(s)
	if len(b)%2 == 1 {
		pad := byte(' ')
		if vr == "UI" || vr == "OB" {
			pad = 0
		}
		b = append(b, pad)
	}
	return element{tag: tag, vr: vr, value: b}
}

func us(tag uint32, v int) element {
	return element{tag: tag, vr: "US", value: binary.LittleEndian.AppendUint16(nil, uint16(v))}
}

func ds(tag uint32, vs ...float64) element {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = strconv.FormatFloat(v, 'g', 10, 64)
	}
	return str(tag, "DS", strings.Join(parts, "\\"))
}

// Encode returns the file's bytes.
func (s DICOMSlice) Encode() []byte {
	s = s.withDefaults()
	sop := fmt.Sprintf("%s.%d", s.SeriesUID, s.Instance)
	els := s.dataset(sop)
	var out bytes.Buffer
	if !s.NoPreamble {
		out.Write(make([]byte, 128))
		out.WriteString("DICM")
	}
	writeFileMeta(&out, sop)
	for _, e := range els {
		writeElement(&out, e)
	}
	return out.Bytes()
}

// withDefaults fills the fields a test left zero: an MR slice of 16-bit
// MONOCHROME2 pixels, a T1-like spin echo, its protocol its description.
func (s DICOMSlice) withDefaults() DICOMSlice {
	if s.Modality == "" {
		s.Modality = "MR"
	}
	if s.BitsAllocated == 0 {
		s.BitsAllocated = 16
	}
	if s.BitsStored == 0 {
		s.BitsStored = s.BitsAllocated
	}
	if s.RepetitionTime == 0 {
		s.RepetitionTime = 500
	}
	if s.EchoTime == 0 {
		s.EchoTime = 12
	}
	if s.ImageType == "" {
		s.ImageType = "ORIGINAL\\PRIMARY\\M\\ND"
	}
	if s.Protocol == "" {
		s.Protocol = s.SeriesDescription
	}
	if s.Photometric == "" {
		s.Photometric = "MONOCHROME2"
	}
	if s.HighBit == 0 {
		s.HighBit = s.BitsStored - 1
	}
	return s
}

// dataset is the slice's data set, in tag order: the header every slice
// has, the optional elements the slice sets, and the pixels.
func (s DICOMSlice) dataset(sop string) []element {
	els := s.header(sop)
	if s.InversionTime != 0 {
		els = append(els, ds(0x00180082, s.InversionTime))
	}
	if s.ContrastAgent != "" {
		els = append(els, str(0x00180010, "LO", s.ContrastAgent))
	}
	if s.NoGeometry {
		els = slices.DeleteFunc(els, func(e element) bool { return e.tag == 0x00200032 || e.tag == 0x00200037 })
	}
	if s.WindowWidth > 0 {
		els = append(els, ds(0x00281050, s.WindowCenter), ds(0x00281051, s.WindowWidth))
	}
	if s.Slope != 0 {
		els = append(els, ds(0x00281052, s.Intercept), ds(0x00281053, s.Slope), str(0x00281054, "LO", "US"))
	}
	if !s.NoPixelData {
		els = append(els, s.pixelData())
	}
	sort.SliceStable(els, func(a, b int) bool { return els[a].tag < els[b].tag })
	return els
}

// header is what every slice has: the study, series and instance, the
// patient, the acquisition, the geometry and the pixel format.
func (s DICOMSlice) header(sop string) []element {
	pr := 0
	if s.Signed {
		pr = 1
	}
	return []element{
		str(0x00080005, "CS", "ISO_IR 100"),
		str(0x00080008, "CS", s.ImageType),
		str(0x00080016, "UI", MRImageStorage),
		str(0x00080018, "UI", sop),
		str(0x00080020, "DA", "20240101"),
		str(0x00080030, "TM", "101500"),
		str(0x00080060, "CS", s.Modality),
		str(0x00080070, "LO", "npcorch imagingtest"),
		str(0x00081030, "LO", "MRI NASOPHARYNX"),
		str(0x0008103E, "LO", s.SeriesDescription),
		{tag: 0x00081140, vr: "SQ", items: [][]element{{
			str(0x00081150, "UI", MRImageStorage),
			str(0x00081155, "UI", s.SeriesUID+".999"),
		}}},
		str(0x00100010, "PN", "TEST^"+s.PatientID),
		str(0x00100020, "LO", s.PatientID),
		str(0x00100030, "DA", "19700101"),
		str(0x00100040, "CS", "O"),
		str(0x00180020, "CS", "SE"),
		str(0x00180021, "CS", "SK"),
		str(0x00180022, "CS", "SAT1"),
		str(0x00180023, "CS", "2D"),
		ds(0x00180050, s.Thickness),
		ds(0x00180080, s.RepetitionTime),
		ds(0x00180081, s.EchoTime),
		ds(0x00180087, 3),
		ds(0x00180088, s.Thickness),
		str(0x00181030, "LO", s.Protocol),
		str(0x00185100, "CS", "HFS"),
		{tag: 0x00190010, vr: "LO", value: []byte("NPCORCH PRIVATE ")},
		{tag: 0x00191008, vr: "OB", value: bytes.Repeat([]byte{0xA5}, 256)},
		str(0x0020000D, "UI", s.StudyUID),
		str(0x0020000E, "UI", s.SeriesUID),
		str(0x00200010, "SH", "1"),
		str(0x00200011, "IS", strconv.Itoa(s.SeriesNumber)),
		str(0x00200013, "IS", strconv.Itoa(s.Instance)),
		ds(0x00200032, s.Position[:]...),
		ds(0x00200037, s.Orientation[:]...),
		str(0x00200052, "UI", s.FrameOfReference),
		ds(0x00201041, s.Position[2]),
		us(0x00280002, 1),
		str(0x00280004, "CS", s.Photometric),
		us(0x00280010, s.Rows),
		us(0x00280011, s.Cols),
		ds(0x00280030, s.Spacing[:]...),
		us(0x00280100, s.BitsAllocated),
		us(0x00280101, s.BitsStored),
		us(0x00280102, s.HighBit),
		us(0x00280103, pr),
	}
}

// pixelData is the pixel data element: OB for 8-bit pixels (padded to an
// even length), OW for 16-bit ones.
func (s DICOMSlice) pixelData() element {
	if s.BitsAllocated == 8 {
		px := make([]byte, len(s.Pixels), len(s.Pixels)+1)
		for i, v := range s.Pixels {
			px[i] = byte(v)
		}
		if len(px)%2 == 1 {
			px = append(px, 0)
		}
		return element{tag: 0x7FE00010, vr: "OB", value: px}
	}
	px := make([]byte, 2*len(s.Pixels))
	for i, v := range s.Pixels {
		binary.LittleEndian.PutUint16(px[2*i:], v)
	}
	return element{tag: 0x7FE00010, vr: "OW", value: px}
}

// writeFileMeta writes the file meta information (group 0002, explicit VR
// little endian) of an MR image with that SOP instance UID, its group
// length first.
func writeFileMeta(out *bytes.Buffer, sop string) {
	meta := []element{
		{tag: 0x00020001, vr: "OB", value: []byte{0, 1}},
		str(0x00020002, "UI", MRImageStorage),
		str(0x00020003, "UI", sop),
		str(0x00020010, "UI", ExplicitVRLittleEndian),
		str(0x00020012, "UI", "1.2.826.0.1.3680043.8.498.0.1"),
	}
	var mb bytes.Buffer
	for _, e := range meta {
		writeElement(&mb, e)
	}
	writeElement(out, element{tag: 0x00020000, vr: "UL", value: binary.LittleEndian.AppendUint32(nil, uint32(mb.Len()))})
	out.Write(mb.Bytes())
}

// longVR are the explicit VRs with a reserved field and a 32-bit length.
var longVR = map[string]bool{"OB": true, "OD": true, "OF": true, "OL": true, "OV": true, "OW": true,
	"SQ": true, "SV": true, "UC": true, "UN": true, "UR": true, "UT": true, "UV": true}

// writeElement writes e in explicit VR little endian; sequences and their
// items get undefined lengths and delimiters.
func writeElement(w *bytes.Buffer, e element) {
	le := binary.LittleEndian
	w.Write(le.AppendUint16(nil, uint16(e.tag>>16)))
	w.Write(le.AppendUint16(nil, uint16(e.tag)))
	w.WriteString(e.vr)
	switch {
	case e.vr == "SQ":
		w.Write([]byte{0, 0, 0xff, 0xff, 0xff, 0xff})
		for _, item := range e.items {
			w.Write([]byte{0xfe, 0xff, 0x00, 0xe0, 0xff, 0xff, 0xff, 0xff})
			for _, sub := range item {
				writeElement(w, sub)
			}
			w.Write([]byte{0xfe, 0xff, 0x0d, 0xe0, 0, 0, 0, 0})
		}
		w.Write([]byte{0xfe, 0xff, 0xdd, 0xe0, 0, 0, 0, 0})
	case longVR[e.vr]:
		w.Write([]byte{0, 0})
		w.Write(le.AppendUint32(nil, uint32(len(e.value))))
		w.Write(e.value)
	default:
		w.Write(le.AppendUint16(nil, uint16(len(e.value))))
		w.Write(e.value)
	}
}

// DICOMSeries returns the slices of series si (an index into Plans) of
// patient p, as WriteSeries stores them with dicom set: Slice's pixels as
// 12-bit values in 16 bits (×16 plus a little texture), one series in
// three signed with a rescale, one in two with a VOI window (the others
// are windowed by percentiles), instances numbered along the plan.
func DICOMSeries(o Options, p, si int) []DICOMSlice {
	o.defaults()
	sp := Plans(o)[si]
	out := make([]DICOMSlice, sp.Slices)
	for k := range out {
		g := Slice(si, k, p, o.Size, false).(*image.Gray)
		px := make([]uint16, len(g.Pix))
		for i, v := range g.Pix {
			px[i] = uint16(v)*16 + uint16(i%13)
		}
		sl := DICOMSlice{
			PatientID: fmt.Sprintf("P%03d", p+1), StudyUID: fmt.Sprintf("%s.%d", uidRoot, p+1),
			SeriesUID: fmt.Sprintf("%s.%d.%d", uidRoot, p+1, si+1), SeriesDescription: sp.Sequence, SeriesNumber: si + 1,
			FrameOfReference: FrameOfReference, Instance: k + 1, Orientation: sp.Orientation, Position: sp.Position(k),
			Spacing: [2]float64{0.9, 0.9}, Thickness: sp.Thickness, Rows: o.Size, Cols: o.Size, BitsStored: 12, Pixels: px,
		}
		if si%3 == 1 {
			sl.Signed, sl.Slope, sl.Intercept = true, 2, -1024
			for i, v := range px {
				px[i] = uint16(int16(v)-2048) & 0x0fff
			}
		}
		if si%2 == 0 {
			sl.WindowCenter, sl.WindowWidth = 1600, 3000
		}
		if sp.Sequence == imaging.SeqT2Ax {
			sl.RepetitionTime, sl.EchoTime = 4000, 100 // a T2's, as an import reads them
		}
		out[k] = sl
	}
	return out
}

// uidRoot prefixes the generated UIDs.
const uidRoot = "1.2.826.0.1.3680043.8.498.77"
