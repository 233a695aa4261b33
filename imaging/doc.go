// Package imaging owns every pixel npcorch sends to a model: reading MRI
// series (DICOM folders, or lists of DICOM files, read by
// imaging/dicomfile, one SeriesInstanceUID of modality MR each, with dcmtk and GDCM (JPEG 2000) decompressing the transfer syntaxes Go
// does not decode; or PNG/JPEG folders with a series.json sidecar) and
// pathology slides (OpenSlide behind the build tag openslide, or plain
// PNG/JPEG/TIFF), the pure transforms that build NPCBench's inputs, and
// lossless PNG output.
//
// DICOM pixels: stored values are masked, sign-extended, rescaled and
// windowed (the file's VOI window, else the 0.5–99.5 percentiles) through
// one table of every stored value present, read in bulk; a compressed
// file is decompressed first and then decoded the same way, so the same
// pixels give the same bytes whatever the transfer syntax. Header scans
// read each file only up to its pixel data.
//
// Geometry: slices are ordered along the slice normal (row × column of
// the orientation, dot the position; ties by instance) and matched across
// series only within one frame of reference and with parallel normals,
// nearest along the reference normal, rejected beyond half the partner's
// slice thickness (SortSlices, MatchSlices, PlanGroups).
//
// Images: plane groups (512-px tiles under 36-px caption bands: axial
// 512×1644, coronal 512×1096), sub-sampling to K groups (SampleGroups),
// 3×3 sequence panels without text, 4×3 structure cards with a yellow box
// (*image.Paletted, or RGB when every gray level is used), ten 4×3
// CarePath pages, and pathology overviews with openslide-python's
// get_thumbnail logic. Resampling reproduces Pillow's Lanczos bit for bit,
// so outputs equal those of a Pillow pipeline (scripts/bench).
//
// Transforms are pure and deterministic: the same input gives the same
// bytes. Readers refuse oversized images from their headers and never
// panic on hostile input. The batch executor (image jobs, worker pool,
// cache) lives in imaging/prep. This package knows nothing of datasets,
// tasks, models, requests, scores or the output folder layout (which
// images a task needs is tasks/prepare's), and never writes into its
// inputs.
//
// PNG is npcorch's only output format, and this package holds its one PNG
// writer (PNGEncoder, EncodePNG; tasks/synth writes its dataset with it
// too) and a PNG reader (DecodePNG) that gives image/png's result, faster
// for 8-bit gray, RGB and RGBA (inflate by github.com/klauspost/compress)
// and through image/png for every other PNG and every failure.
//
// Speed without changing a byte: ReadOverview shrinks a plain PNG slide
// while decoding it, a row at a time; a TileCache (ReadOptions.Tiles)
// resizes a slice once for all the outputs of a batch that show it; and
// cards that use every gray level stay gray with their boxes (BoxedGray)
// until the encoder writes them as RGB. Tiles enlarged by about two run
// their six-tap Lanczos passes unrolled, with coefficients computed once
// per axis for all the tiles of a TileCache; the PNG writer sums each row
// filter as it makes it, computes Paeth eight bytes at a time and stops it
// as soon as it cannot win. On amd64 with AVX2, the Lanczos passes over
// RGBA rows (horizontal) and every vertical pass, the RGB to RGBA
// expansion and the reversal of the Average and Paeth row filters run on
// the assembly kernels of imaging/internal/kernels, tested against the Go
// loops that run elsewhere (and with the build tag purego). In a build
// with the libdeflate tag, a PNG's whole image data is inflated in one
// call; on Linux it and the inflated rows live in memory mapped for one
// decode, outside Go's heap.
package imaging
