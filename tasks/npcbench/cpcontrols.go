package npcbench

import (
	"github.com/npcorch/npcorch/tasks/score"
)

// CarePathControls names the L6 matched controls in a campaign's task
// list (with the pathology and MRI tasks whose answers the own-findings
// condition writes), and the composite that compares them.
const CarePathControls = "carepath_controls"

// The paper (C.4): "Fourteen local models answer the same 146 care
// questions for 25 patients …, using predicted or reference pathology, MRI
// T stage, and invaded structures. Supplied N/M and overall-stage fields
// remain fixed."; the serial control "uses gold pathology and MRI
// evidence", reported as persistent-minus-stateless all-care correctness.
var carePathPairings = []pairing{
	{"L6 reference − own findings", CPCareOwnFindings, CPCareRefFindings},
	{"L6 no image findings − own findings", CPCareOwnFindings, CPCareNoFindings},
	{"L6 serial − stateless (reference findings)", CPCareRefFindings, CPCareSerial},
}

// carePathControls compares the L6 conditions by patient-macro care
// accuracy (Eq. A5), all-care and decision accuracy.
func carePathControls() *score.Composite {
	return controls(CarePathControls, "L6 image-evidence and serial controls: patient-macro care accuracy",
		"Patient-macro care accuracy per model on the control cohort's questions with the model's own image findings, the reference findings, no image findings, and the reference findings in one serial conversation; the paired differences are in scores.md.",
		carePathPairings, []string{"Own findings", "Reference findings", "No image findings", "Serial"},
		[]string{CPCareOwnFindings, CPCareRefFindings, CPCareNoFindings, CPCareSerial},
		func(ts *score.TaskScore) *score.Score { return orMicro(ts.PatientMacro, ts) })
}
