// Package mrseries finds the MR series in a tree of DICOM files and says
// what each one is, from its headers alone.
//
// Scan walks a tree (any file names, with or without extensions or the
// DICOM preamble), honours a DICOMDIR where there is one (the files it
// references are checked, those it misses are named), reads every file
// only up to its pixel data (imaging/dicomfile.ScanHeader, in parallel),
// names a file cut short in its pixel data as unreadable (from its size
// and the pixel data element's offset and length: CheckPixelData), skips
// and counts what is not DICOM, and groups the files by patient, study
// and SeriesInstanceUID.
//
// Classify says what an acquisition is from its attributes: the weighting
// (T1, T2, PD, FLAIR, diffusion, …) from the series description, protocol
// and sequence names, or else from TR, TE and TI; contrast from
// ContrastBolusAgent and the description; fat suppression from the
// description and ScanOptions; the plane (axial, coronal, sagittal, or
// oblique with its angle) from ImageOrientationPatient. Localizers,
// derived images, multi-frame objects and other modalities are named as
// such. Every decision comes with the reason for it, and disagreements
// between the description and the geometry or the physics are kept.
//
// It is DICOM and MR knowledge only: it knows nothing of datasets,
// benchmarks or sequence slots (package tasks/importer maps classes to
// them), reads no pixel and writes nothing.
package mrseries
