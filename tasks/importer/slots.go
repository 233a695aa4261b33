package importer

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/imaging/mrseries"
)

// slotSpec is what fills one of NPCBench's sequence slots.
type slotSpec struct {
	name      string
	weighting string
	contrast  bool
	plane     string
	// fatSuppressed: the slot needs it (T1+C_COR_FS); the others prefer
	// series without it and take one with it when there is no other.
	fatSuppressed bool
}

// slotSpecs are the slots in the order of prompt A6 (imaging.Sequences).
var slotSpecs = []slotSpec{
	{imaging.SeqT1Ax, mrseries.T1, false, mrseries.Axial, false},
	{imaging.SeqT2Ax, mrseries.T2, false, mrseries.Axial, false},
	{imaging.SeqT1CAx, mrseries.T1, true, mrseries.Axial, false},
	{imaging.SeqT1Cor, mrseries.T1, false, mrseries.Coronal, false},
	{imaging.SeqT1Sag, mrseries.T1, false, mrseries.Sagittal, false},
	{imaging.SeqT1CSag, mrseries.T1, true, mrseries.Sagittal, false},
	{imaging.SeqT1CCorFS, mrseries.T1, true, mrseries.Coronal, true},
}

// fit returns the slot a class fills and its rank there (0: as the slot
// wants it; 1: fat-suppressed where the slot prefers none), or "" when
// none.
func fit(c mrseries.Class) (slot string, rank int) {
	if c.Kind != mrseries.KindImage {
		return "", 0
	}
	for _, sp := range slotSpecs {
		if sp.weighting != c.Weighting || sp.contrast != c.Contrast || sp.plane != c.Plane {
			continue
		}
		switch {
		case sp.fatSuppressed && !c.FatSuppressed:
			continue
		case !sp.fatSuppressed && c.FatSuppressed:
			return sp.name, 1
		}
		return sp.name, 0
	}
	return "", 0
}

// nearMiss says why an image series fills no slot, when a review could
// still put it in one.
func nearMiss(c mrseries.Class) string {
	switch {
	case c.Kind != mrseries.KindImage || !c.Classified():
		return ""
	case c.Plane == mrseries.Oblique:
		return fmt.Sprintf("oblique (%.1f° from %s): no slot takes it without a review", c.Angle, c.Nearest)
	case c.Weighting == mrseries.T1 && c.Contrast && c.Plane == mrseries.Coronal && !c.FatSuppressed:
		return "T1+C coronal without fat suppression: T1+C_COR_FS needs it; put it there in the review if it will do"
	case c.Weighting != mrseries.T1 && c.Weighting != mrseries.T2:
		return fmt.Sprintf("%s: no NPCBench slot takes it", c.Weighting)
	}
	return "no NPCBench slot takes this combination"
}

// entry is one series of the tree and what the import decided for it.
type entry struct {
	s *mrseries.Series
	// slot is the slot it fills, "" for none.
	slot string
	// notes say how slots were decided, for the review table.
	notes []string
}

func (e *entry) note(format string, args ...any) {
	e.notes = append(e.notes, fmt.Sprintf(format, args...))
}

// seriesName names a series for a user.
func seriesName(s *mrseries.Series) string {
	return fmt.Sprintf("series %d %q (%s)", s.Number, s.Description, s.UID)
}

// candidate is a series that fits a slot, its rank there, and the other
// slots of its plane group none of whose candidates lie parallel to it.
type candidate struct {
	e     *entry
	rank  int
	apart []slotAngle
	// along are the other slots of its plane group with a candidate
	// parallel to it.
	along []string
}

// slotAngle is another slot of a plane group and the angle from a
// candidate to the nearest of that slot's candidates, in degrees.
type slotAngle struct {
	slot  string
	angle float64
}

// planeGroups are the slots whose series prep matches slice by slice, by
// plane: their series must lie in parallel planes.
var planeGroups = [][]string{imaging.AxialGroupSequences, imaging.CoronalGroupSequences}

// markApart sets, for every candidate of a plane group's slot, the other
// slots of the group (with candidates) none of whose candidates lie
// parallel to it, and those with one that does. Prep matches slices of
// parallel planes only, so pick ranks a candidate parallel to the other
// slots' series above one that is not, before any preference on fat
// suppression.
func markApart(bySlot map[string][]candidate) {
	for _, group := range planeGroups {
		for _, slot := range group {
			for i := range bySlot[slot] {
				c := &bySlot[slot][i]
				for _, other := range group {
					if other == slot || len(bySlot[other]) == 0 {
						continue
					}
					if angle, ok := nearestParallel(c.e, bySlot[other]); ok {
						c.along = append(c.along, other)
					} else {
						c.apart = append(c.apart, slotAngle{other, angle})
					}
				}
			}
		}
	}
}

// nearestParallel returns the smallest angle between e's slice planes and
// those of cands, and whether one of them lies parallel to e.
func nearestParallel(e *entry, cands []candidate) (float64, bool) {
	nearest := math.Inf(1)
	for _, o := range cands {
		angle, ok := parallel(e, o.e)
		if ok {
			return angle, true
		}
		nearest = min(nearest, angle)
	}
	return nearest, false
}

// describeApart says how far a candidate lies from the other slots of its
// plane group: "15.0° from T1_Ax, 15.0° from T1+C_Ax".
func describeApart(apart []slotAngle) string {
	parts := make([]string, len(apart))
	for i, a := range apart {
		parts[i] = fmt.Sprintf("%.1f° from %s", a.angle, a.slot)
	}
	return strings.Join(parts, ", ")
}

// annotate notes why series that come close fill no slot.
func annotate(entries []*entry) {
	for _, e := range entries {
		slot, _ := fit(e.s.Class)
		switch {
		case slot != "" && len(e.s.Problems) > 0:
			e.note("would fit %s, but prep cannot read it", slot)
		case slot == "" && nearMiss(e.s.Class) != "":
			e.note("%s", nearMiss(e.s.Class))
		}
	}
}

// chooseSlots fills a patient's slots from its series, from one study,
// and returns the problems met: series it cannot classify, candidates
// from several studies, several candidates for a slot, conflicts in a
// chosen series.
func chooseSlots(patient string, entries []*entry) []Problem {
	var probs []Problem
	bySlot := map[string][]candidate{}
	for _, e := range entries {
		c := e.s.Class
		if c.Kind == mrseries.KindImage && !c.Classified() {
			var unknown []string
			for _, w := range c.Why {
				if strings.Contains(w, "unknown") {
					unknown = append(unknown, w)
				}
			}
			probs = append(probs, Problem{KindUnclassified, patient, fmt.Sprintf("%s: %s; set its slot in the review (or leave it empty there)", seriesName(e.s), strings.Join(unknown, "; "))})
			continue
		}
		if slot, rank := fit(c); slot != "" && len(e.s.Problems) == 0 {
			bySlot[slot] = append(bySlot[slot], candidate{e: e, rank: rank})
		}
	}
	study, others := primaryStudy(bySlot)
	if len(others) > 0 {
		probs = append(probs, Problem{KindStudies, patient, fmt.Sprintf("series fit the slots in %d studies: used study %s, not %s; choose in the review to use others",
			len(others)+1, study, strings.Join(others, ", "))})
	}
	inStudy := map[string][]candidate{}
	for _, sp := range slotSpecs {
		for _, c := range bySlot[sp.name] {
			if c.e.s.StudyUID == study {
				inStudy[sp.name] = append(inStudy[sp.name], c)
			} else {
				c.e.note("candidate for %s: not used, from study %s (the import used study %s)", sp.name, c.e.s.StudyUID, study)
			}
		}
	}
	markApart(inStudy)
	for _, sp := range slotSpecs {
		probs = append(probs, pick(patient, sp.name, inStudy[sp.name])...)
	}
	return probs
}

// primaryStudy returns the study whose series fill the most slots (ties:
// the earliest date, then the lower UID), and the other studies with
// candidates.
func primaryStudy(bySlot map[string][]candidate) (string, []string) {
	type study struct {
		uid, date string
		slots     int
	}
	var studies []*study
	for _, sp := range slotSpecs {
		counted := map[string]bool{}
		for _, c := range bySlot[sp.name] {
			uid := c.e.s.StudyUID
			i := slices.IndexFunc(studies, func(s *study) bool { return s.uid == uid })
			if i < 0 {
				i = len(studies)
				studies = append(studies, &study{uid: uid, date: c.e.s.StudyDate})
			}
			if !counted[uid] {
				counted[uid] = true
				studies[i].slots++
			}
		}
	}
	if len(studies) == 0 {
		return "", nil
	}
	slices.SortFunc(studies, func(a, b *study) int {
		return cmp.Or(cmp.Compare(b.slots, a.slots), strings.Compare(a.date, b.date), strings.Compare(a.uid, b.uid))
	})
	var others []string
	for _, s := range studies[1:] {
		others = append(others, s.uid)
	}
	return studies[0].uid, others
}

// pick chooses among a slot's candidates: those parallel to the most
// other slots of its plane group first (markApart), then the best rank,
// then the latest series (highest number, then more files, then the
// UID); several equally good are a problem to confirm in the review.
func pick(patient, slot string, cands []candidate) []Problem {
	if len(cands) == 0 {
		return nil
	}
	slices.SortStableFunc(cands, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(len(a.apart), len(b.apart)), cmp.Compare(a.rank, b.rank), cmp.Compare(b.e.s.Number, a.e.s.Number),
			cmp.Compare(len(b.e.s.Files), len(a.e.s.Files)), strings.Compare(a.e.s.UID, b.e.s.UID))
	})
	best := cands[0]
	best.e.slot = slot
	tied := 0
	for _, c := range cands[1:] {
		if c.rank == best.rank && len(c.apart) == len(best.apart) {
			tied++
		}
	}
	var probs []Problem
	if tied > 0 {
		var names []string
		for _, c := range cands[:tied+1] {
			names = append(names, seriesName(c.e.s))
		}
		probs = append(probs, Problem{KindDuplicate, patient, fmt.Sprintf("%s: %d candidates (%s): chose series %d, the latest; confirm or change it in the review",
			slot, tied+1, strings.Join(names, ", "), best.e.s.Number)})
	}
	noteChosen(slot, cands, tied)
	for _, conflict := range best.e.s.Class.Conflicts {
		probs = append(probs, Problem{KindConflict, patient, fmt.Sprintf("%s chosen for %s: %s; confirm it in the review", seriesName(best.e.s), slot, conflict)})
	}
	return probs
}

// noteChosen notes in the review why pick chose cands[0] for slot, and
// why not each other candidate; tied is how many are as good as it.
func noteChosen(slot string, cands []candidate, tied int) {
	best := cands[0]
	var alternatives []string
	for _, c := range cands[1:] {
		if len(c.apart) > len(best.apart) && c.rank < best.rank {
			alternatives = append(alternatives, fmt.Sprintf("%s, %s", seriesName(c.e.s), describeApart(c.apart)))
		}
	}
	switch {
	case tied > 0:
		best.e.note("%s: chosen, the latest of %d candidates", slot, tied+1)
	case best.rank == 1 && len(alternatives) > 0:
		best.e.note("%s: chosen, though fat-suppressed: it lies parallel to %s, and prep matches slices of parallel planes only; the alternative is %s (set it in the review to use it instead)",
			slot, strings.Join(best.along, " and "), strings.Join(alternatives, "; "))
	case best.rank == 1:
		best.e.note("%s: chosen, though fat-suppressed: the slot prefers none and there is no other", slot)
	default:
		best.e.note("%s: chosen", slot)
	}
	for _, c := range cands[1:] {
		switch {
		case len(c.apart) > len(best.apart) && c.rank < best.rank:
			c.e.note("candidate for %s: the alternative, not chosen (%s, and prep matches slices of parallel planes only): series %d was; set %s here in the review to use this one",
				slot, describeApart(c.apart), best.e.s.Number, slot)
		case len(c.apart) > len(best.apart):
			c.e.note("candidate for %s: not chosen (%s, and prep matches slices of parallel planes only): series %d was", slot, describeApart(c.apart), best.e.s.Number)
		case c.rank > best.rank:
			c.e.note("candidate for %s: not chosen (fat-suppressed, and the slot prefers none): series %d was", slot, best.e.s.Number)
		default:
			c.e.note("candidate for %s: not chosen (the latest series number, then the most files, is chosen): series %d was", slot, best.e.s.Number)
		}
	}
}

// closeTo names the series of a patient that come close to filling a
// slot it lacks: of its weighting and contrast, in or near its plane, or
// fitting it but unreadable by prep.
func closeTo(slot string, entries []*entry) []string {
	sp := slotSpecs[slices.IndexFunc(slotSpecs, func(sp slotSpec) bool { return sp.name == slot })]
	var out []string
	for _, e := range entries {
		c := e.s.Class
		if c.Kind != mrseries.KindImage || c.Weighting != sp.weighting || c.Contrast != sp.contrast || c.Nearest != sp.plane {
			continue
		}
		switch {
		case e.slot != "":
		case len(e.s.Problems) > 0:
			out = append(out, fmt.Sprintf("%s is %s, but prep cannot read it (%s)", seriesName(e.s), c, strings.Join(e.s.Problems, "; ")))
		default:
			out = append(out, fmt.Sprintf("%s is %s", seriesName(e.s), c))
		}
	}
	return out
}

// parallel reports whether two series' slice planes are parallel as prep
// requires, and the angle between them.
func parallel(a, b *entry) (float64, bool) {
	na, nb := normal(a), normal(b)
	c := math.Min(1, math.Abs(na[0]*nb[0]+na[1]*nb[1]+na[2]*nb[2]))
	return math.Acos(c) * 180 / math.Pi, c >= 1-imaging.ParallelTolerance
}

func normal(e *entry) [3]float64 {
	_, _, n, _ := mrseries.PlaneOf(e.s.Acquisition.Orientation)
	return n
}
