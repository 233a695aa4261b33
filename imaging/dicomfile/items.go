package dicomfile

import "fmt"

// Items returns the items of the sequence element t of f (the data set,
// or an item returned by Items), each as a File whose Elements are the
// item's elements in file order; Find, Strings, Floats, Int and Items
// work on it as on the data set. It returns nil for a missing element or
// one that is not a sequence. Values are slices of the parsed data.
//
// A DICOMDIR's directory records are such items (DirectoryRecordSequence).
func (f *File) Items(t Tag) ([]*File, error) {
	e, ok := f.Find(t)
	if !ok || e.seq == nil {
		return nil, nil
	}
	if f.depth >= maxDepth {
		return nil, fmt.Errorf("sequence %v: nested deeper than %d", t, maxDepth)
	}
	d := e.seq.dec
	var items []*File
	for pos := e.seq.start; pos < len(d.data); {
		it, _, length, value, err := d.header(pos)
		if err != nil {
			return nil, fmt.Errorf("sequence %v: %w", t, err)
		}
		if it != itemTag {
			return nil, d.errAt(it, pos, "found inside sequence %v where an item was expected", t)
		}
		item := &File{Syntax: f.Syntax, BigEndian: d.big, depth: f.depth + 1}
		end := len(d.data)
		if length != undefinedLength {
			if uint64(length) > uint64(len(d.data)-value) {
				return nil, d.errAt(it, pos, "item of %d bytes, %d left in sequence %v: %w", length, len(d.data)-value, t, ErrTruncated)
			}
			end = value + int(length)
		}
		inner := d
		inner.data = d.data[:end]
		if pos, err = inner.itemElements(item, value, length == undefinedLength); err != nil {
			return nil, fmt.Errorf("sequence %v item %d: %w", t, len(items)+1, err)
		}
		items = append(items, item)
	}
	return items, nil
}

// itemElements reads the elements of an item from pos to the end of d's
// data, or, when delimited, to its item delimiter, and returns where the
// item ends.
func (d decoder) itemElements(item *File, pos int, delimited bool) (int, error) {
	for pos < len(d.data) {
		t, vr, length, value, err := d.header(pos)
		if err != nil {
			return 0, err
		}
		switch {
		case t == itemDelimTag && delimited:
			return value, nil
		case t.Group() == 0xFFFE:
			return 0, d.errAt(t, pos, "a delimiter or item where an element was expected")
		case length == undefinedLength:
			end, err := d.nested(vr).skipSequence(t, value, item.depth+1)
			if err != nil {
				return 0, err
			}
			item.Elements = append(item.Elements, d.sequence(t, vr, value, end-8))
			pos = end
		default:
			v, err := d.value(t, value, length)
			if err != nil {
				return 0, err
			}
			item.Elements = append(item.Elements, d.element(t, vr, value, v))
			pos = value + int(length)
		}
	}
	if delimited {
		return 0, fmt.Errorf("item without its delimiter: %w", ErrTruncated)
	}
	return pos, nil
}
