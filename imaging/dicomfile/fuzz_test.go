package dicomfile_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/npcorch/npcorch/imaging/dicomfile"
)

// FuzzParse: no input panics; whatever Parse reads, ScanHeader reads the
// same header of; every accessor works on every element, and on every
// element of every item of every sequence (Items).
func FuzzParse(f *testing.F) {
	s := sample()
	f.Add(s.Encode())
	s.NoPreamble, s.BitsAllocated, s.BitsStored = true, 8, 8
	f.Add(s.Encode())
	s.NoPixelData = true
	f.Add(s.Encode())
	// Implicit VR without meta: Rows (US) then an undefined-length
	// sequence with one empty item, then pixel data.
	f.Add([]byte("\x08\x00\x60\x00\x02\x00\x00\x00MR" +
		"\x08\x00\x40\x11\xff\xff\xff\xff\xfe\xff\x00\xe0\xff\xff\xff\xff\xfe\xff\x0d\xe0\x00\x00\x00\x00\xfe\xff\xdd\xe0\x00\x00\x00\x00" +
		"\x28\x00\x10\x00\x02\x00\x00\x00\x01\x00" +
		"\xe0\x7f\x10\x00\x02\x00\x00\x00\x07\x00"))
	// Cut in its pixel data, and encapsulated pixel data (a basic offset
	// table, one fragment, a delimiter) whole and cut.
	f.Add(s.Encode()[:len(s.Encode())-5])
	encap := []byte("\x08\x00\x60\x00CS\x02\x00MR" +
		"\xe0\x7f\x10\x00OB\x00\x00\xff\xff\xff\xff" +
		"\xfe\xff\x00\xe0\x00\x00\x00\x00\xfe\xff\x00\xe0\x04\x00\x00\x00abcd\xfe\xff\xdd\xe0\x00\x00\x00\x00")
	f.Add(encap)
	f.Add(encap[:len(encap)-6])
	f.Fuzz(func(t *testing.T, data []byte) {
		file, perr := dicomfile.Parse(data)
		head, err := dicomfile.ScanHeader(bytes.NewReader(data))
		if err == nil {
			// The header scan's check of the pixel data's extent passes
			// exactly the files whose pixel data Parse (prep) reads.
			check := head.CheckPixelData(bytes.NewReader(data), int64(len(data)))
			if errors.Is(check, dicomfile.ErrShortPixelData) {
				check = nil
			}
			if (check == nil) != (perr == nil) {
				t.Fatalf("CheckPixelData says %v, Parse %v", check, perr)
			}
		}
		if perr != nil {
			return
		}
		if err != nil {
			t.Fatalf("Parse read it, ScanHeader failed: %v", err)
		}
		if len(head.Elements) != len(file.Elements) || head.HasPixelData != file.HasPixelData || head.Syntax != file.Syntax {
			t.Fatalf("ScanHeader read %d elements, Parse %d", len(head.Elements), len(file.Elements))
		}
		for i, e := range file.Elements {
			if h := head.Elements[i]; h.Tag != e.Tag || !bytes.Equal(h.Value, e.Value) {
				t.Fatalf("element %d: %v vs %v", i, h.Tag, e.Tag)
			}
			file.Strings(e.Tag)
			file.Floats(e.Tag)
			file.Int(e.Tag)
			readItems(file, e.Tag, 0)
		}
		if file.HasPixelData != (file.Pixels != nil) {
			t.Fatal("pixel data seen but not read")
		}
	})
}

// readItems calls every accessor on the items of sequence t of f and,
// a few levels deep, of the sequences inside them.
func readItems(f *dicomfile.File, t dicomfile.Tag, depth int) {
	items, err := f.Items(t)
	if err != nil || depth > 3 {
		return
	}
	for _, it := range items {
		for _, e := range it.Elements {
			it.Strings(e.Tag)
			it.Floats(e.Tag)
			readItems(it, e.Tag, depth+1)
		}
	}
}
