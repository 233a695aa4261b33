package imaging

// Sequence names the joint sequence-plane classes of NPCBench (prompt A6).
// Plane-group and card builders refer to series by these names.
const (
	SeqT1Ax     = "T1_Ax"
	SeqT2Ax     = "T2_Ax"
	SeqT1CAx    = "T1+C_Ax"
	SeqT1Cor    = "T1_COR"
	SeqT1Sag    = "T1_SAG"
	SeqT1CSag   = "T1+C_SAG"
	SeqT1CCorFS = "T1+C_COR_FS"
)

// Sequences lists the seven classes in the option order of prompt A6 (A..G).
var Sequences = []string{SeqT1Ax, SeqT2Ax, SeqT1CAx, SeqT1Cor, SeqT1Sag, SeqT1CSag, SeqT1CCorFS}

// SeriesMeta is the geometry of one MRI series: the content of the
// series.json sidecar beside a folder of PNG/JPEG slices, or what the DICOM
// reader derives from the files' headers. Positions and spacings are in mm in
// the patient coordinate system, as DICOM defines them.
type SeriesMeta struct {
	// Sequence is one of Sequences.
	Sequence string `json:"sequence"`
	// FrameOfReference is the DICOM FrameOfReferenceUID; slices are only
	// matched across series that share it.
	FrameOfReference string `json:"frame_of_reference"`
	// Orientation is ImageOrientationPatient: the row direction cosines then
	// the column direction cosines. The slice normal is row × col.
	Orientation [6]float64 `json:"orientation"`
	// PixelSpacing is the (row, column) spacing in mm.
	PixelSpacing [2]float64 `json:"pixel_spacing"`
	// SliceThickness in mm; matching rejects a partner farther than half of it.
	SliceThickness float64 `json:"slice_thickness"`
	// Slices in any order; readers sort them along the slice normal.
	Slices []SliceMeta `json:"slices"`
}

// SliceMeta is one slice of a series.
type SliceMeta struct {
	// File is the image file name, relative to the series folder.
	File string `json:"file"`
	// Instance is the DICOM InstanceNumber; it breaks ties in ordering and
	// is how structure boxes name a slice.
	Instance int `json:"instance"`
	// Position is ImagePositionPatient: the centre of the first pixel, in mm.
	Position [3]float64 `json:"position"`
}
