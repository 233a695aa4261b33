package synth

import (
	"hash/fnv"
	"math/rand/v2"

	"github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/tasks/dataset"
)

// patient is everything drawn and labelled for one patient.
type patient struct {
	id      string
	cohorts []string
	// origin is the nasopharynx in patient coordinates (mm).
	origin [3]float64
	// side is +1 when the primary lies on the patient's left, -1 right.
	side   float64
	tStage int // the reference T category
	ruleT  int // the T rule applied to the invasion labels
	nStage int
	// findings are the 27 annotated cards in the structure list's order.
	findings []finding
	// primary is the nasopharyngeal primary tumour.
	primary ellipsoid
	// solids is the phantom in painting order.
	solids   []ellipsoid
	series   []series
	coverage dataset.Coverage
	slide    *slide
	episode  *dataset.Episode
}

// finding is one card: a structure on one side, its outline and label.
type finding struct {
	structure string
	side      string // "left", "right" or "" for a midline structure
	invaded   bool
	outline   ellipsoid
	boxes     []dataset.Box
}

// patientRand returns the random source of one patient: a PCG seeded with
// the dataset seed and the patient id, so that patients do not depend on
// each other or on the order they are planned in.
func patientRand(seed int64, id, stream string) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), hash64(stream, id)))
}

// hash64 is the FNV-1a hash of its parts, separated by a zero byte.
func hash64(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// series is one MRI series to write: its sidecar and how to draw it.
type series struct {
	meta     imaging.SeriesMeta // Slices in the order the sidecar lists them
	dir      string             // relative to the dataset root
	contrast contrast
	bits16   bool
	axes     axes
	slices   []sliceAt // by instance: slices[k].instance == k+1
}

// sliceAt is one slice: its instance number, file and first-pixel centre.
type sliceAt struct {
	instance int
	file     string
	pos      [3]float64
}

// axes describes an axis-aligned orientation: the patient axis and sign the
// rows and the columns run along, and the axis of the slice normal.
type axes struct {
	row, col, normal int
	rowSign, colSign float64
}

// slide is one pathology slide to draw.
type slide struct {
	file          string // relative to the dataset root
	label         int    // 1 = nasopharyngeal carcinoma
	width, height int
	seed          [2]uint64
}
