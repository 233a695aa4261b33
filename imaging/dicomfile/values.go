package dicomfile

import (
	"math"
	"strconv"
	"strings"
)

// Tags npcorch reads (PS3.6).
const (
	MediaStorageSOPClassUID   Tag = 0x00020002
	TransferSyntaxUID         Tag = 0x00020010
	DirectoryRecordSequence   Tag = 0x00041220
	DirectoryRecordType       Tag = 0x00041430
	ReferencedFileID          Tag = 0x00041500
	ImageType                 Tag = 0x00080008
	SOPClassUID               Tag = 0x00080016
	StudyDate                 Tag = 0x00080020
	Modality                  Tag = 0x00080060
	StudyDescription          Tag = 0x00081030
	SeriesDescription         Tag = 0x0008103E
	PatientName               Tag = 0x00100010
	PatientID                 Tag = 0x00100020
	ContrastBolusAgent        Tag = 0x00180010
	ScanningSequence          Tag = 0x00180020
	SequenceVariant           Tag = 0x00180021
	ScanOptions               Tag = 0x00180022
	MRAcquisitionType         Tag = 0x00180023
	SequenceName              Tag = 0x00180024
	SliceThickness            Tag = 0x00180050
	RepetitionTime            Tag = 0x00180080
	EchoTime                  Tag = 0x00180081
	InversionTime             Tag = 0x00180082
	ProtocolName              Tag = 0x00181030
	StudyInstanceUID          Tag = 0x0020000D
	SeriesInstanceUID         Tag = 0x0020000E
	SeriesNumber              Tag = 0x00200011
	InstanceNumber            Tag = 0x00200013
	ImagePositionPatient      Tag = 0x00200032
	ImageOrientationPatient   Tag = 0x00200037
	FrameOfReferenceUID       Tag = 0x00200052
	SamplesPerPixel           Tag = 0x00280002
	PhotometricInterpretation Tag = 0x00280004
	NumberOfFrames            Tag = 0x00280008
	Rows                      Tag = 0x00280010
	Columns                   Tag = 0x00280011
	PixelSpacing              Tag = 0x00280030
	BitsAllocated             Tag = 0x00280100
	BitsStored                Tag = 0x00280101
	HighBit                   Tag = 0x00280102
	PixelRepresentation       Tag = 0x00280103
	WindowCenter              Tag = 0x00281050
	WindowWidth               Tag = 0x00281051
	RescaleIntercept          Tag = 0x00281052
	RescaleSlope              Tag = 0x00281053
	PixelData                 Tag = 0x7FE00010
)

// dictionary gives the VRs of the tags above, for implicit VR data sets.
var dictionary = map[Tag]VR{
	DirectoryRecordSequence: {'S', 'Q'}, DirectoryRecordType: {'C', 'S'}, ReferencedFileID: {'C', 'S'},
	MediaStorageSOPClassUID: {'U', 'I'}, TransferSyntaxUID: {'U', 'I'}, SOPClassUID: {'U', 'I'},
	Modality: {'C', 'S'}, SeriesDescription: {'L', 'O'}, PatientID: {'L', 'O'}, SliceThickness: {'D', 'S'},
	StudyInstanceUID: {'U', 'I'}, SeriesInstanceUID: {'U', 'I'}, SeriesNumber: {'I', 'S'}, InstanceNumber: {'I', 'S'},
	ImagePositionPatient: {'D', 'S'}, ImageOrientationPatient: {'D', 'S'}, FrameOfReferenceUID: {'U', 'I'},
	SamplesPerPixel: {'U', 'S'}, PhotometricInterpretation: {'C', 'S'}, NumberOfFrames: {'I', 'S'},
	Rows: {'U', 'S'}, Columns: {'U', 'S'}, PixelSpacing: {'D', 'S'}, BitsAllocated: {'U', 'S'},
	BitsStored: {'U', 'S'}, HighBit: {'U', 'S'}, PixelRepresentation: {'U', 'S'}, WindowCenter: {'D', 'S'},
	WindowWidth: {'D', 'S'}, RescaleIntercept: {'D', 'S'}, RescaleSlope: {'D', 'S'}, PixelData: {'O', 'W'},
}

// implicitVR is the VR of t in an implicit VR data set.
func implicitVR(t Tag) VR {
	if vr, ok := dictionary[t]; ok {
		return vr
	}
	return VR{'U', 'N'}
}

// Find returns the element with tag t: from the meta information for
// group 0002, else from the data set's top level.
func (f *File) Find(t Tag) (Element, bool) {
	list := f.Elements
	if t.Group() == 0x0002 {
		list = f.Meta
	}
	for _, e := range list {
		if e.Tag == t {
			return e, true
		}
	}
	return Element{}, false
}

// Strings returns the values of a text element, split at backslashes,
// each without surrounding spaces and NULs; binary integers and floats
// are written in decimal. Nil when the element is missing or a sequence.
func (f *File) Strings(t Tag) []string {
	e, ok := f.Find(t)
	if !ok || e.Value == nil {
		return nil
	}
	if n := binarySize(e.VR); n > 0 {
		out := make([]string, 0, len(e.Value)/n)
		for p := 0; p+n <= len(e.Value); p += n {
			out = append(out, strconv.FormatFloat(f.binary(e.VR, e.Value[p:p+n]), 'g', -1, 64))
		}
		return out
	}
	parts := strings.Split(string(e.Value), "\\")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(strings.Trim(p, "\x00"))
	}
	return parts
}

// String returns the first of Strings, or "".
func (f *File) String(t Tag) string {
	if s := f.Strings(t); len(s) > 0 {
		return s[0]
	}
	return ""
}

// Floats returns the numbers of a decimal string (DS, IS, or any text) or
// binary numeric element; nil when the element is missing or any value is
// not a finite number.
func (f *File) Floats(t Tag) []float64 {
	e, ok := f.Find(t)
	if !ok || e.Value == nil {
		return nil
	}
	var out []float64
	if n := binarySize(e.VR); n > 0 {
		for p := 0; p+n <= len(e.Value); p += n {
			out = append(out, f.binary(e.VR, e.Value[p:p+n]))
		}
	} else {
		for v := range strings.SplitSeq(string(e.Value), "\\") {
			x, err := strconv.ParseFloat(strings.TrimSpace(strings.Trim(v, "\x00")), 64)
			if err != nil {
				return nil
			}
			out = append(out, x)
		}
	}
	for _, x := range out {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
	}
	return out
}

// Int returns the first number of Floats, truncated, when it is within
// the 32-bit integers.
func (f *File) Int(t Tag) (int, bool) {
	v := f.Floats(t)
	if len(v) == 0 || v[0] < math.MinInt32 || v[0] > math.MaxInt32 {
		return 0, false
	}
	return int(v[0]), true
}

// binarySize is the size of one value of a binary numeric VR, 0 for others.
func binarySize(vr VR) int {
	switch vr {
	case VR{'U', 'S'}, VR{'S', 'S'}:
		return 2
	case VR{'U', 'L'}, VR{'S', 'L'}, VR{'F', 'L'}:
		return 4
	case VR{'F', 'D'}:
		return 8
	}
	return 0
}

// binary reads one binary numeric value in the file's byte order.
func (f *File) binary(vr VR, b []byte) float64 {
	d := decoder{data: b, big: f.BigEndian}
	switch vr {
	case VR{'U', 'S'}:
		return float64(d.u16(0))
	case VR{'S', 'S'}:
		return float64(int16(d.u16(0)))
	case VR{'U', 'L'}:
		return float64(d.u32(0))
	case VR{'S', 'L'}:
		return float64(int32(d.u32(0)))
	case VR{'F', 'L'}:
		return float64(math.Float32frombits(d.u32(0)))
	}
	hi, lo := uint64(d.u32(0)), uint64(d.u32(4))
	if !f.BigEndian {
		hi, lo = lo, hi
	}
	return math.Float64frombits(hi<<32 | lo)
}

// trimValue is a string value without trailing NULs and spaces.
func trimValue(b []byte) string {
	return strings.TrimSpace(strings.Trim(string(b), "\x00"))
}
