package mrseries

import (
	"github.com/npcorch/npcorch/imaging/dicomfile"
)

// Header is what a study import reads of one DICOM file.
type Header struct {
	PatientID, PatientName string
	StudyUID, StudyDate    string
	StudyDescription       string
	SeriesUID              string
	SeriesNumber           int
	InstanceNumber         int
	SOPClass, Modality     string
	// Syntax is the transfer syntax the file is read in.
	Syntax string
	// Acquisition holds what Classify reads.
	Acquisition Acquisition
	// Orientation is ImageOrientationPatient (6 numbers) and Position
	// ImagePositionPatient (3), nil when absent or malformed.
	Orientation, Position []float64
	FrameOfReference      string
	Rows, Cols            int
	// Frames is NumberOfFrames (1 when absent); Samples SamplesPerPixel.
	Frames, Samples int
	// HasPixels is true when the file has pixel data.
	HasPixels bool
}

// Enhanced (multi-frame) MR image storage keeps its geometry per frame.
const sopEnhancedMR = "1.2.840.10008.5.1.4.1.1.4.1"

// ReadHeader reads a Header from a file's elements.
func ReadHeader(f *dicomfile.File) Header {
	h := Header{
		PatientID:        f.String(dicomfile.PatientID),
		PatientName:      f.String(dicomfile.PatientName),
		StudyUID:         f.String(dicomfile.StudyInstanceUID),
		StudyDate:        f.String(dicomfile.StudyDate),
		StudyDescription: f.String(dicomfile.StudyDescription),
		SeriesUID:        f.String(dicomfile.SeriesInstanceUID),
		SOPClass:         f.String(dicomfile.SOPClassUID),
		Modality:         f.String(dicomfile.Modality),
		Syntax:           f.Syntax,
		FrameOfReference: f.String(dicomfile.FrameOfReferenceUID),
		HasPixels:        f.HasPixelData,
		Frames:           1,
		Samples:          1,
	}
	if h.SOPClass == "" {
		h.SOPClass = f.String(dicomfile.MediaStorageSOPClassUID)
	}
	h.SeriesNumber, _ = f.Int(dicomfile.SeriesNumber)
	h.InstanceNumber, _ = f.Int(dicomfile.InstanceNumber)
	h.Rows, _ = f.Int(dicomfile.Rows)
	h.Cols, _ = f.Int(dicomfile.Columns)
	if n, ok := f.Int(dicomfile.NumberOfFrames); ok && n > 0 {
		h.Frames = n
	}
	if n, ok := f.Int(dicomfile.SamplesPerPixel); ok && n > 0 {
		h.Samples = n
	}
	if o := f.Floats(dicomfile.ImageOrientationPatient); len(o) == 6 {
		h.Orientation = o
	}
	if p := f.Floats(dicomfile.ImagePositionPatient); len(p) == 3 {
		h.Position = p
	}
	h.Acquisition = Acquisition{
		Modality:         h.Modality,
		Description:      f.String(dicomfile.SeriesDescription),
		Protocol:         f.String(dicomfile.ProtocolName),
		SequenceName:     f.String(dicomfile.SequenceName),
		ImageType:        f.Strings(dicomfile.ImageType),
		ScanningSequence: f.Strings(dicomfile.ScanningSequence),
		SequenceVariant:  f.Strings(dicomfile.SequenceVariant),
		ScanOptions:      f.Strings(dicomfile.ScanOptions),
		RepetitionTime:   first(f.Floats(dicomfile.RepetitionTime)),
		EchoTime:         first(f.Floats(dicomfile.EchoTime)),
		InversionTime:    first(f.Floats(dicomfile.InversionTime)),
		ContrastAgent:    f.String(dicomfile.ContrastBolusAgent),
		Orientation:      h.Orientation,
		Frames:           h.Frames,
		Enhanced:         h.SOPClass == sopEnhancedMR,
		HasPixels:        h.HasPixels,
	}
	return h
}

func first(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return v[0]
}
