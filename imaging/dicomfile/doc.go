// Package dicomfile reads what npcorch needs of a DICOM file (PS3.10,
// encoded as PS3.5 says): the file meta information, the top-level data
// elements before the pixel data, and the pixel data itself — the raw
// bytes of a native value, or the fragments of an encapsulated one —
// without decoding a pixel. It works on bytes in memory and copies
// nothing: element values are slices of the input.
//
// It reads files with and without the 128-byte preamble (and without file
// meta information, guessing the encoding from the first element as dcmtk
// does), implicit and explicit VR little endian, explicit VR big endian,
// and deflated explicit VR little endian. Sequences are walked (defined
// or undefined lengths, nested to a bounded depth) and kept as one
// element each; File.Items reads their items (a DICOMDIR's directory
// records) on demand. ScanHeader reads a file only up to its pixel data,
// so a header scan touches a few kilobytes of each file; CheckPixelData
// then checks from the file's size and a few item headers, without reading
// a pixel, that the pixel data the header declares lies whole in the file.
//
// It owns no state and knows nothing of series, modalities, windows or
// images (package imaging interprets the elements). It never panics on
// hostile input: every length is checked against the data left, and
// errors name the element and its offset.
package dicomfile
