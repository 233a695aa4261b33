package dicomfile

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Tag is a data element tag: group << 16 | element.
type Tag uint32

// Group is the tag's group number.
func (t Tag) Group() uint16 { return uint16(t >> 16) }

// String writes the tag as dcmtk does: (7fe0,0010).
func (t Tag) String() string { return fmt.Sprintf("(%04x,%04x)", uint16(t>>16), uint16(t)) }

// Delimiters and lengths of PS3.5 section 7.5.
const (
	itemTag         Tag    = 0xFFFEE000
	itemDelimTag    Tag    = 0xFFFEE00D
	seqDelimTag     Tag    = 0xFFFEE0DD
	undefinedLength uint32 = 0xFFFFFFFF
)

// maxDepth bounds the nesting of sequences.
const maxDepth = 32

// maxInflated bounds the data set of a deflated file.
const maxInflated = 1 << 30

// Transfer syntaxes this package reads the data set of (any other is read
// as explicit VR little endian, whose pixel data is then encapsulated).
const (
	ImplicitVRLittleEndian         = "1.2.840.10008.1.2"
	ExplicitVRLittleEndian         = "1.2.840.10008.1.2.1"
	DeflatedExplicitVRLittleEndian = "1.2.840.10008.1.2.1.99"
	ExplicitVRBigEndian            = "1.2.840.10008.1.2.2"
)

// ErrNotDICOM is returned for data that has neither the "DICM" prefix nor
// a DICOM data element at its start.
var ErrNotDICOM = errors.New("not a DICOM file (no DICM preamble), nor a DICOM data set without one")

// ErrTruncated is wrapped by errors for data that ends inside an element.
var ErrTruncated = errors.New("the file ends inside it: truncated")

// VR is a value representation, two upper-case letters.
type VR [2]byte

// String returns the two letters.
func (v VR) String() string { return string(v[:]) }

// Element is one data element.
type Element struct {
	Tag Tag
	// VR is from the file in explicit VR syntaxes, else from this
	// package's dictionary (UN for tags it does not know).
	VR VR
	// Value is the value's bytes, a slice of the parsed data; nil for a
	// sequence of undefined length (whose contents Items reads).
	Value []byte
	// seq is where a sequence's items are, for Items; nil for other
	// elements.
	seq *span
}

// span is the items of a sequence: the decoder of its contents, whose
// data ends where the items end, and where the first item starts.
type span struct {
	dec   decoder
	start int
}

// Pixels is the value of the top-level (7fe0,0010) element.
type Pixels struct {
	// Offset is where the value starts in the data set (in the file, or
	// in the inflated data set of a deflated file).
	Offset int
	// Native is a native (uncompressed) value, nil when encapsulated.
	Native []byte
	// Fragments of an encapsulated value, after its basic offset table.
	Fragments [][]byte
	// Encapsulated is true for a value of undefined length.
	Encapsulated bool
}

// File is what Parse and ScanHeader read of a DICOM file.
type File struct {
	// Preamble is true when the file starts with 128 bytes and "DICM".
	Preamble bool
	// Meta holds the file meta information (group 0002), if any.
	Meta []Element
	// Syntax is the transfer syntax UID from the meta information, or the
	// one the data set's first element was read as when there is none.
	Syntax string
	// BigEndian is true when binary values are big endian.
	BigEndian bool
	// Elements are the top-level data set elements before the pixel data,
	// in file order.
	Elements []Element
	// HasPixelData is true when the data set has a top-level PixelData.
	HasPixelData bool
	// Pixels is the pixel data (Parse only; nil from ScanHeader).
	Pixels *Pixels
	// pixelAt is where the PixelData value starts in the data read (the
	// file, or the inflated data set), pixelLength its declared length
	// (undefinedLength when encapsulated); CheckPixelData reads them.
	pixelAt     int
	pixelLength uint32
	// inflated is true for a deflated file, whose pixel data is checked
	// when its data set is read (it is in memory whole).
	inflated bool
	// depth is how deep in sequences the elements are (0: the data set).
	depth int
}

// Parse reads a whole DICOM file in memory, its pixel data included.
// Values are slices of data (or of the inflated data set).
func Parse(data []byte) (*File, error) { return parse(data, true) }

// ScanHeader reads a DICOM file from r only up to its pixel data: it
// reads a first chunk and more only while the header goes on. The data
// set of a deflated file is read whole. Bound r (io.LimitReader) to bound
// what is read.
func ScanHeader(r io.Reader) (*File, error) {
	buf := make([]byte, 0, 16<<10)
	eof := false
	for {
		for !eof && len(buf) < cap(buf) {
			n, err := r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if err == io.EOF {
				eof = true
			} else if err != nil {
				return nil, err
			}
		}
		f, err := parse(buf, false)
		switch {
		case eof:
			return f, err
		case err == nil && f.HasPixelData:
			return f, nil
		case err != nil && !errors.Is(err, ErrTruncated):
			return nil, err
		}
		// The header goes on past what was read.
		buf = slices.Grow(buf, len(buf))
	}
}

// decoder reads elements of one encoding from data.
type decoder struct {
	data     []byte
	explicit bool
	big      bool
	inflated bool // data is an inflated data set: offsets are not file offsets
}

func (d decoder) u16(p int) uint16 {
	b := d.data[p : p+2]
	if d.big {
		return uint16(b[0])<<8 | uint16(b[1])
	}
	return uint16(b[0]) | uint16(b[1])<<8
}

func (d decoder) u32(p int) uint32 {
	b := d.data[p : p+4]
	if d.big {
		return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	}
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// errAt wraps err with the element and where it is.
func (d decoder) errAt(t Tag, pos int, format string, args ...any) error {
	where := "at byte"
	if d.inflated {
		where = "at byte of the inflated data set"
	}
	return fmt.Errorf("element %v %s %d: %w", t, where, pos, fmt.Errorf(format, args...))
}

// header reads the element header at pos: its tag, VR, value length and
// where its value starts.
func (d decoder) header(pos int) (t Tag, vr VR, length uint32, value int, err error) {
	if len(d.data)-pos < 8 {
		return 0, vr, 0, 0, fmt.Errorf("element header at byte %d: %w", pos, ErrTruncated)
	}
	t = Tag(d.u16(pos))<<16 | Tag(d.u16(pos+2))
	if t.Group() == 0xFFFE || !d.explicit {
		// Items and delimiters have no VR in any syntax.
		vr = implicitVR(t)
		return t, vr, d.u32(pos + 4), pos + 8, nil
	}
	vr = VR{d.data[pos+4], d.data[pos+5]}
	if !validVR(vr) {
		return t, vr, 0, 0, d.errAt(t, pos, "invalid value representation %q", vr[:])
	}
	if longVR(vr) {
		if len(d.data)-pos < 12 {
			return t, vr, 0, 0, d.errAt(t, pos, "%w", ErrTruncated)
		}
		return t, vr, d.u32(pos + 8), pos + 12, nil
	}
	return t, vr, uint32(d.u16(pos + 6)), pos + 8, nil
}

// value returns the defined-length value at pos.
func (d decoder) value(t Tag, pos int, length uint32) ([]byte, error) {
	if uint64(length) > uint64(len(d.data)-pos) {
		return nil, d.errAt(t, pos, "value of %d bytes, %d left: %w", length, len(d.data)-pos, ErrTruncated)
	}
	return d.data[pos : pos+int(length)], nil
}

// skipSequence skips the items of a sequence of undefined length whose
// value starts at pos, and returns where the sequence ends.
func (d decoder) skipSequence(t Tag, pos, depth int) (int, error) {
	if depth > maxDepth {
		return 0, d.errAt(t, pos, "sequences nested deeper than %d", maxDepth)
	}
	for {
		it, _, length, value, err := d.header(pos)
		if err != nil {
			return 0, fmt.Errorf("sequence %v: %w", t, err)
		}
		switch {
		case it == seqDelimTag:
			return value, nil
		case it != itemTag:
			return 0, d.errAt(it, pos, "found inside sequence %v where an item was expected", t)
		case length == undefinedLength:
			if pos, err = d.skipItem(t, value, depth); err != nil {
				return 0, err
			}
		default:
			if _, err := d.value(it, value, length); err != nil {
				return 0, err
			}
			pos = value + int(length)
		}
	}
}

// skipItem skips the elements of an item of undefined length and its
// delimiter.
func (d decoder) skipItem(seq Tag, pos, depth int) (int, error) {
	for {
		t, vr, length, value, err := d.header(pos)
		if err != nil {
			return 0, fmt.Errorf("sequence %v: %w", seq, err)
		}
		switch {
		case t == itemDelimTag:
			return value, nil
		case length == undefinedLength:
			if pos, err = d.nested(vr).skipSequence(t, value, depth+1); err != nil {
				return 0, err
			}
		default:
			if _, err := d.value(t, value, length); err != nil {
				return 0, err
			}
			pos = value + int(length)
		}
	}
}

// nested is the decoder for the contents of a sequence of undefined
// length with VR vr: an explicit UN holds implicit VR little endian
// (PS3.5 6.2.2).
func (d decoder) nested(vr VR) decoder {
	if d.explicit && vr == (VR{'U', 'N'}) {
		d.explicit, d.big = false, false
	}
	return d
}

// pixelData reads the value of the top-level PixelData element.
func (d decoder) pixelData(pos int, length uint32) (*Pixels, error) {
	px := &Pixels{Offset: pos}
	if length != undefinedLength {
		v, err := d.value(PixelData, pos, length)
		if err != nil {
			return nil, err
		}
		px.Native = v
		return px, nil
	}
	px.Encapsulated = true
	for first := true; ; first = false {
		t, _, n, value, err := d.header(pos)
		if err != nil {
			return nil, fmt.Errorf("pixel data %v: %w", PixelData, err)
		}
		switch {
		case t == seqDelimTag:
			return px, nil
		case t != itemTag || n == undefinedLength:
			return nil, d.errAt(t, pos, "found in encapsulated pixel data where a fragment was expected")
		}
		frag, err := d.value(t, value, n)
		if err != nil {
			return nil, err
		}
		if !first { // the first item is the basic offset table
			px.Fragments = append(px.Fragments, frag)
		}
		pos = value + int(n)
	}
}

// dataSet reads the top-level elements from pos; withPixels reads the
// pixel data's value too.
func (d decoder) dataSet(f *File, pos int, withPixels bool) error {
	f.Elements = make([]Element, 0, 64)
	for pos < len(d.data) {
		t, vr, length, value, err := d.header(pos)
		if err != nil {
			return err
		}
		switch {
		case t == PixelData:
			f.HasPixelData, f.pixelAt, f.pixelLength, f.inflated = true, value, length, d.inflated
			if withPixels || d.inflated {
				var px *Pixels
				if px, err = d.pixelData(value, length); withPixels {
					f.Pixels = px
				}
			}
			return err
		case t.Group() == 0xFFFE:
			if t == itemDelimTag || t == seqDelimTag {
				// A stray delimiter (some writers leave one): skip it.
				pos = value
				continue
			}
			return d.errAt(t, pos, "an item outside any sequence")
		case length == undefinedLength:
			end, err := d.nested(vr).skipSequence(t, value, 1)
			if err != nil {
				return err
			}
			f.Elements = append(f.Elements, d.sequence(t, vr, value, end-8))
			pos = end
		default:
			v, err := d.value(t, value, length)
			if err != nil {
				return err
			}
			f.Elements = append(f.Elements, d.element(t, vr, value, v))
			pos = value + int(length)
		}
	}
	return nil
}

// sequence is the element of a sequence whose items lie in [start, end).
func (d decoder) sequence(t Tag, vr VR, start, end int) Element {
	nd := d.nested(vr)
	nd.data = nd.data[:end]
	return Element{Tag: t, VR: VR{'S', 'Q'}, seq: &span{dec: nd, start: start}}
}

// element is a defined-length element: a sequence when its VR says so.
func (d decoder) element(t Tag, vr VR, pos int, v []byte) Element {
	if vr != (VR{'S', 'Q'}) {
		return Element{Tag: t, VR: vr, Value: v}
	}
	e := d.sequence(t, vr, pos, pos+len(v))
	e.Value = v
	return e
}

// parse reads the preamble, the meta information and the data set.
func parse(data []byte, withPixels bool) (*File, error) {
	f := &File{}
	pos := 0
	if len(data) >= 132 && string(data[128:132]) == "DICM" {
		f.Preamble, pos = true, 132
	}
	le := decoder{data: data, explicit: true}
	if len(data)-pos >= 6 && le.u16(pos) == 0x0002 && validVR(VR{data[pos+4], data[pos+5]}) {
		end, err := le.meta(f, pos)
		if err != nil {
			return nil, fmt.Errorf("file meta information: %w", err)
		}
		pos = end
	}
	if f.Preamble && pos == len(data) {
		return nil, fmt.Errorf("the file ends after its preamble: %w", ErrTruncated)
	}
	d, err := syntaxDecoder(f, data, pos)
	if err != nil {
		return nil, err
	}
	if f.Syntax == DeflatedExplicitVRLittleEndian {
		inflated, err := inflate(data[pos:])
		if err != nil {
			return nil, err
		}
		d, pos = decoder{data: inflated, explicit: true, inflated: true}, 0
	}
	if err := d.dataSet(f, pos, withPixels); err != nil {
		return f, err
	}
	return f, nil
}

// meta reads group 0002 (always explicit VR little endian) from pos and
// returns where it ends: at the end its group length gives, or, without
// one, at the first element of another group.
func (d decoder) meta(f *File, pos int) (int, error) {
	end := -1 // where the group length says the meta information ends
	for {
		if end >= 0 && pos >= end || end < 0 && (len(d.data)-pos < 2 || d.u16(pos) != 0x0002) {
			break
		}
		t, vr, length, value, err := d.header(pos)
		if err != nil {
			return 0, err
		}
		if t.Group() != 0x0002 || length == undefinedLength {
			return 0, d.errAt(t, pos, "not a file meta element")
		}
		v, err := d.value(t, value, length)
		if err != nil {
			return 0, err
		}
		if t == 0x00020000 && len(v) == 4 && len(f.Meta) == 0 {
			end = value + 4 + int(d.u32(value))
		}
		f.Meta = append(f.Meta, Element{Tag: t, VR: vr, Value: v})
		pos = value + int(length)
	}
	if end >= 0 && pos != end {
		return 0, fmt.Errorf("the group length ends it at byte %d, its last element at byte %d", end, pos)
	}
	if ts, ok := f.Find(TransferSyntaxUID); ok {
		f.Syntax = trimValue(ts.Value)
	}
	return pos, nil
}

// syntaxDecoder returns the decoder of the data set at pos: by the meta
// information's transfer syntax, or, without one, by the first element.
func syntaxDecoder(f *File, data []byte, pos int) (decoder, error) {
	switch f.Syntax {
	case ImplicitVRLittleEndian:
		return decoder{data: data}, nil
	case ExplicitVRBigEndian:
		f.BigEndian = true
		return decoder{data: data, explicit: true, big: true}, nil
	case "":
	default:
		return decoder{data: data, explicit: true}, nil
	}
	if len(data)-pos < 8 {
		if f.Preamble || len(f.Meta) > 0 {
			if len(data) == pos {
				return decoder{data: data}, nil // an empty data set
			}
			return decoder{}, fmt.Errorf("data set at byte %d: %w", pos, ErrTruncated)
		}
		return decoder{}, ErrNotDICOM
	}
	vr := VR{data[pos+4], data[pos+5]}
	le, be := decoder{data: data}, decoder{data: data, big: true}
	switch {
	case validVR(vr) && plausibleGroup(le.u16(pos)):
		f.Syntax = ExplicitVRLittleEndian
		return decoder{data: data, explicit: true}, nil
	case validVR(vr) && plausibleGroup(be.u16(pos)):
		f.Syntax, f.BigEndian = ExplicitVRBigEndian, true
		return decoder{data: data, explicit: true, big: true}, nil
	case plausibleGroup(le.u16(pos)):
		f.Syntax = ImplicitVRLittleEndian
		return decoder{data: data}, nil
	}
	if f.Preamble || len(f.Meta) > 0 {
		return decoder{}, fmt.Errorf("data set at byte %d: no data element there (group %04x)", pos, le.u16(pos))
	}
	return decoder{}, ErrNotDICOM
}

// plausibleGroup accepts the groups a data set without meta information
// starts with: (0004,xxxx) of a DICOMDIR up to (0010,xxxx).
func plausibleGroup(g uint16) bool { return g%2 == 0 && g >= 0x0004 && g <= 0x0010 }

// inflate returns the raw-deflated data set, at most maxInflated bytes.
func inflate(b []byte) ([]byte, error) {
	r := flate.NewReader(bytes.NewReader(b))
	defer r.Close()
	out, err := io.ReadAll(io.LimitReader(r, maxInflated+1))
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("deflated data set: %w", ErrTruncated)
	}
	if err != nil {
		return nil, fmt.Errorf("deflated data set: %w", err)
	}
	if len(out) > maxInflated {
		return nil, fmt.Errorf("deflated data set inflates to more than %d bytes", maxInflated)
	}
	return out, nil
}

func validVR(v VR) bool { return v[0] >= 'A' && v[0] <= 'Z' && v[1] >= 'A' && v[1] <= 'Z' }

// longVR reports the explicit VRs with a 32-bit length (PS3.5 7.1.2).
func longVR(v VR) bool {
	switch v {
	case VR{'O', 'B'}, VR{'O', 'D'}, VR{'O', 'F'}, VR{'O', 'L'}, VR{'O', 'V'}, VR{'O', 'W'},
		VR{'S', 'Q'}, VR{'S', 'V'}, VR{'U', 'C'}, VR{'U', 'N'}, VR{'U', 'R'}, VR{'U', 'T'}, VR{'U', 'V'}:
		return true
	}
	return false
}
