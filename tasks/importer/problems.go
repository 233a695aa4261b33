package importer

import "fmt"

// ProblemKind names a sort of unresolved problem.
type ProblemKind string

// Kinds of problems; docs/dataset.md says what to do about each.
const (
	// KindUnclassified: an MR series whose weighting or plane is unknown.
	KindUnclassified ProblemKind = "unclassified"
	// KindMissing: a patient lacks a slot its cohorts need.
	KindMissing ProblemKind = "missing"
	// KindDuplicate: several equally good candidates for a slot.
	KindDuplicate ProblemKind = "duplicate"
	// KindStudies: candidates in several studies of one patient.
	KindStudies ProblemKind = "studies"
	// KindConflict: the description of a chosen series disagrees with its
	// geometry or its TR/TE.
	KindConflict ProblemKind = "conflict"
	// KindNoImages: a label row whose patient has no MR series.
	KindNoImages ProblemKind = "no_images"
	// KindNoLabels: a patient with MR series and no label row (not
	// imported).
	KindNoLabels ProblemKind = "no_labels"
	// KindNotReviewed: with --review, a series the review does not list.
	KindNotReviewed ProblemKind = "not_reviewed"
	// KindUnreadable: a file that looks like DICOM and could not be read,
	// or one a DICOMDIR references that is missing.
	KindUnreadable ProblemKind = "unreadable"
	// KindMatch: series of one plane's groups that prep cannot match
	// (different frames of reference, or planes not parallel).
	KindMatch ProblemKind = "match"
	// KindCoverage: a T or N stage without the axial range its plane
	// groups need.
	KindCoverage ProblemKind = "coverage"
	// KindPatientID: an ID that cannot name prep's output folder.
	KindPatientID ProblemKind = "patient_id"
	// KindDecoder: a chosen series in a transfer syntax whose
	// decompressing program (dcmtk, GDCM) is not installed.
	KindDecoder ProblemKind = "decoder"
)

// Problem is one unresolved thing, naming the patient (or file) it
// concerns.
type Problem struct {
	Kind    ProblemKind
	Patient string
	Text    string
}

func (p Problem) String() string {
	if p.Patient == "" {
		return fmt.Sprintf("%s: %s", p.Kind, p.Text)
	}
	return fmt.Sprintf("%s: patient %s: %s", p.Kind, p.Patient, p.Text)
}
