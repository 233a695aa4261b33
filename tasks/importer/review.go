package importer

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"

	"github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/imaging/mrseries"
)

// ReviewName is the review table's file name in the dataset folder.
const ReviewName = "review.csv"

// reviewHeader are the review table's columns; a review read back needs
// patient, study_uid, series_uid and slot, and ignores the others.
var reviewHeader = []string{"patient", "study_date", "study_uid", "series_number", "series_uid", "description",
	"modality", "files", "folder", "class", "weighting", "contrast", "fat_suppressed", "plane", "angle", "slot", "why"}

// writeReview writes the review table: one row per series, in the
// tree's order.
func writeReview(entries []*entry) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(reviewHeader)
	for _, e := range entries {
		w.Write(reviewRow(e))
	}
	w.Flush()
	return b.Bytes()
}

func reviewRow(e *entry) []string {
	s, c := e.s, e.s.Class
	var weighting, contrast, fat, plane, angle string
	if c.Kind == mrseries.KindImage {
		weighting, contrast, fat, plane = c.Weighting, yesNo(c.Contrast), yesNo(c.FatSuppressed), c.Plane
		if c.Nearest != "" {
			angle = strconv.FormatFloat(c.Angle, 'f', 1, 64)
		}
	}
	why := append([]string(nil), c.Why...)
	for _, x := range c.Conflicts {
		why = append(why, "conflict: "+x)
	}
	for _, x := range s.Problems {
		why = append(why, "prep cannot read it: "+x)
	}
	why = append(why, e.notes...)
	return []string{s.PatientID, s.StudyDate, s.StudyUID, strconv.Itoa(s.Number), s.UID, s.Description, s.Modality,
		strconv.Itoa(len(s.Files)), imaging.CommonDir(s.Files), c.String(), weighting, contrast, fat, plane, angle, e.slot,
		strings.Join(why, "; ")}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// seriesKey identifies a series across runs: patient, study and series
// UIDs.
func seriesKey(patient, study, series string) string {
	return patient + "\x00" + study + "\x00" + series
}

// applyReview reads an edited review table and sets the slot of every
// series it lists (clearing those of the others); it returns the
// entries it listed. Every bad row is in the CellErrors it returns.
func applyReview(file string, entries []*entry) (map[*entry]bool, error) {
	s, err := readSheet(file)
	if err != nil {
		return nil, fmt.Errorf("review: %w", err)
	}
	col := map[string]int{}
	var errs CellErrors
	for _, name := range []string{"patient", "study_uid", "series_uid", "slot"} {
		if col[name] = s.column(name); col[name] < 0 {
			errs = append(errs, CellError{file, 1, name, "no such column: a review keeps the columns patient, study_uid, series_uid and slot of the table import wrote"})
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	byKey := map[string]*entry{}
	byUID := map[string]*entry{}
	for _, e := range entries {
		byKey[seriesKey(e.s.PatientID, e.s.StudyUID, e.s.UID)] = e
		byUID[e.s.UID] = e
	}
	listed := map[*entry]bool{}
	rowOf := map[*entry]int{}
	slotRow := map[string]int{} // patient and slot → row
	slots := map[*entry]string{}
	for _, r := range s.rows {
		bad := func(column, format string, args ...any) {
			errs = append(errs, CellError{file, r.n, column, fmt.Sprintf(format, args...)})
		}
		patient, study, uid := r.cell(col["patient"]), r.cell(col["study_uid"]), r.cell(col["series_uid"])
		e := byKey[seriesKey(patient, study, uid)]
		if e == nil {
			switch other := byUID[uid]; {
			case other != nil && other.s.PatientID != patient:
				bad("patient", "series %s belongs to patient %q, not %q", uid, other.s.PatientID, patient)
			case other != nil:
				bad("study_uid", "series %s is in study %s, not %q", uid, other.s.StudyUID, study)
			default:
				bad("series_uid", "series %q of patient %q is not in the DICOM tree (run import without --review for a fresh table)", uid, patient)
			}
			continue
		}
		if first, dup := rowOf[e]; dup {
			bad("series_uid", "series %s is listed again (first in row %d)", uid, first)
			continue
		}
		rowOf[e], listed[e] = r.n, true
		slot, err := canonicalSlot(r.cell(col["slot"]))
		if err != nil {
			bad("slot", "%v", err)
			continue
		}
		if slot == "" {
			continue
		}
		if reason := unfit(e.s); reason != "" {
			bad("slot", "%s cannot fill %s: %s", seriesName(e.s), slot, reason)
			continue
		}
		k := patient + "\x00" + slot
		if first, dup := slotRow[k]; dup {
			bad("slot", "row %d already puts a series of patient %s in %s: keep one", first, patient, slot)
			continue
		}
		slotRow[k] = r.n
		slots[e] = slot
	}
	if len(errs) > 0 {
		return nil, errs
	}
	for _, e := range entries {
		e.slot = slots[e]
		if e.slot == "" {
			continue
		}
		e.note("%s: chosen in the review", e.slot)
		if auto, _ := fit(e.s.Class); auto != e.slot {
			e.note("the classification alone fits %s", orNone(auto))
		}
	}
	return listed, nil
}

func orNone(slot string) string {
	if slot == "" {
		return "no slot"
	}
	return slot
}

// canonicalSlot returns the slot named (in any letter case), "" for an
// empty cell, or an error.
func canonicalSlot(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	for _, sp := range slotSpecs {
		if strings.EqualFold(v, sp.name) {
			return sp.name, nil
		}
	}
	names := make([]string, len(slotSpecs))
	for i, sp := range slotSpecs {
		names[i] = sp.name
	}
	return "", fmt.Errorf("%q is not a sequence slot: use one of %s, or leave it empty", v, strings.Join(names, ", "))
}

// unfit says why a series can fill no slot whatever the review says, or
// "".
func unfit(s *mrseries.Series) string {
	switch {
	case s.Class.Kind != mrseries.KindImage:
		return "it is " + s.Class.String() + " (" + strings.Join(s.Class.Why, "; ") + ")"
	case len(s.Problems) > 0:
		return "prep cannot read it: " + strings.Join(s.Problems, "; ")
	}
	return ""
}
