package mrseries

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Kind says what sort of object a series is.
type Kind string

// Kinds of series. Only KindImage series have a weighting and a plane.
const (
	KindImage      Kind = "image"      // MR images
	KindLocalizer  Kind = "localizer"  // scouts, surveys, localizers
	KindDerived    Kind = "derived"    // projections (MIP) and subtractions
	KindMultiFrame Kind = "multiframe" // enhanced or other multi-frame objects
	KindNotMR      Kind = "not_mr"     // another modality
	KindNoImage    Kind = "no_image"   // MR objects without pixel data
)

// Weightings and other contrasts an MR series can have.
const (
	T1          = "T1"
	T2          = "T2"
	PD          = "PD"
	T2Star      = "T2*"
	FLAIR       = "FLAIR"
	Diffusion   = "DWI"
	SWI         = "SWI"
	Angiography = "MRA"
	Perfusion   = "perfusion"
)

// Planes of a series' slices.
const (
	Axial    = "axial"
	Coronal  = "coronal"
	Sagittal = "sagittal"
	Oblique  = "oblique"
)

// ObliqueDegrees is how far a slice normal may lie from the nearest axis
// of the patient before the series counts as oblique.
const ObliqueDegrees = 15.0

// Acquisition is what Classify reads of a series (of its first file, and
// MixedOrientations of all of them).
type Acquisition struct {
	Modality                                string
	Description, Protocol, SequenceName     string
	ImageType, ScanningSequence             []string
	SequenceVariant, ScanOptions            []string
	RepetitionTime, EchoTime, InversionTime float64 // ms, 0 when absent
	ContrastAgent                           string  // ContrastBolusAgent
	Orientation                             []float64
	Frames                                  int
	Enhanced, HasPixels, MixedOrientations  bool
}

// Class is what Classify found, and why.
type Class struct {
	Kind Kind
	// Weighting is T1, T2, PD, T2*, FLAIR, DWI, SWI, MRA or perfusion; ""
	// when unknown.
	Weighting     string
	Contrast      bool
	FatSuppressed bool
	// Plane is axial, coronal, sagittal or oblique; "" when unknown.
	Plane string
	// Nearest is the standard plane nearest the slices (Plane, unless
	// oblique), and Angle the angle between the slice normal and that
	// plane's axis, in degrees.
	Nearest string
	Angle   float64
	// Why gives the reason of each decision, in order.
	Why []string
	// Conflicts are disagreements between the description and the
	// geometry or the physics; the decision each one took is in its text.
	Conflicts []string
}

// Classified reports whether the series is known for what it is: any
// kind other than an image, or an image with a weighting and a plane.
func (c Class) Classified() bool {
	return c.Kind != KindImage || c.Weighting != "" && c.Plane != ""
}

// String says what the series is in a few words: "T1 +C FS coronal",
// "T2 oblique (32.0° from axial)", "localizer", "not MR (CT)".
func (c Class) String() string {
	if c.Kind != KindImage {
		return kindNames[c.Kind]
	}
	var parts []string
	w := c.Weighting
	if w == "" {
		w = "unknown weighting"
	}
	parts = append(parts, w)
	if c.Contrast {
		parts = append(parts, "+C")
	}
	if c.FatSuppressed {
		parts = append(parts, "FS")
	}
	switch {
	case c.Plane == "":
		parts = append(parts, "unknown plane")
	case c.Plane == Oblique:
		parts = append(parts, fmt.Sprintf("oblique (%.1f° from %s)", c.Angle, c.Nearest))
	default:
		parts = append(parts, c.Plane)
	}
	return strings.Join(parts, " ")
}

var kindNames = map[Kind]string{KindLocalizer: "localizer", KindDerived: "derived image", KindMultiFrame: "multi-frame",
	KindNotMR: "not MR", KindNoImage: "no image"}

// Classify says what an acquisition is; see the package comment.
func Classify(a Acquisition) Class {
	var c Class
	text := readTexts(a)
	switch {
	case a.Modality != "" && a.Modality != "MR":
		c.Kind = KindNotMR
		c.why("modality %s", a.Modality)
	case !a.HasPixels:
		c.Kind = KindNoImage
		c.why("no pixel data")
	case a.Enhanced || a.Frames > 1:
		c.Kind = KindMultiFrame
		c.why("%d frames in one file: npcorch reads single-frame slices (split it with dcmtk first)", max(a.Frames, 1))
	case slices.Contains(a.ImageType, "LOCALIZER"):
		c.Kind = KindLocalizer
		c.why("ImageType LOCALIZER")
	case text.localizer != nil:
		c.Kind = KindLocalizer
		c.why("%s", text.localizer)
	case derivedType(a.ImageType) != "":
		c.Kind = KindDerived
		c.why("ImageType %s", derivedType(a.ImageType))
	case text.derived != nil:
		c.Kind = KindDerived
		c.why("%s", text.derived)
	default:
		c.Kind = KindImage
		c.weighting(a, text)
		c.contrast(a, text)
		c.fatSuppression(a, text)
		c.plane(a, text)
	}
	return c
}

func (c *Class) why(format string, args ...any) { c.Why = append(c.Why, fmt.Sprintf(format, args...)) }

func (c *Class) conflict(format string, args ...any) {
	c.Conflicts = append(c.Conflicts, fmt.Sprintf(format, args...))
}

// derivedType returns the ImageType value that makes an image derived (a
// projection or a subtraction), or "".
func derivedType(imageType []string) string {
	for _, v := range imageType {
		switch v {
		case "MIP", "MINIP", "PROJECTION IMAGE", "SUBTRACTION", "SUB":
			return v
		}
	}
	return ""
}

// weighting decides the weighting from the texts, else from TR, TE and TI.
func (c *Class) weighting(a Acquisition, t texts) {
	phys, physFS, physWhy := physics(a)
	if t.weighting != nil {
		c.Weighting = t.weighting.value
		c.why("%s: %s", c.Weighting, t.weighting)
		if (phys == T1 || phys == T2) && (c.Weighting == T1 || c.Weighting == T2) && phys != c.Weighting {
			c.conflict("the %s says %s, %s suggest %s: %s was used", t.weighting.field, c.Weighting, physWhy, phys, c.Weighting)
		}
		return
	}
	if t.ambiguous != "" {
		c.why("weighting unknown: %s", t.ambiguous)
		return
	}
	if phys == "" {
		if physWhy == "" {
			physWhy = "no TR and TE"
		}
		c.why("weighting unknown: none in the description or protocol, and %s", physWhy)
		return
	}
	c.Weighting = phys
	c.FatSuppressed = physFS
	c.why("%s: %s (none in the description or protocol)", phys, physWhy)
}

// physics reads a weighting from TR, TE and TI (spin-echo rules of thumb,
// inversion recovery by its TI), and whether it is a STIR.
func physics(a Acquisition) (weighting string, stir bool, why string) {
	tr, te, ti := a.RepetitionTime, a.EchoTime, a.InversionTime
	if tr <= 0 || te <= 0 {
		return "", false, ""
	}
	why = fmt.Sprintf("TR %g ms, TE %g ms", tr, te)
	if ti > 0 {
		why += fmt.Sprintf(", TI %g ms", ti)
	}
	switch {
	case ti > 0 && ti < 300 && te >= 40:
		return T2, true, why + " (short-TI inversion recovery)"
	case ti >= 1500:
		return FLAIR, false, why + " (long TI)"
	case ti >= 300 && te < 30:
		return T1, false, why + " (inversion-recovery T1)"
	case te <= 30 && tr <= 1000:
		return T1, false, why + " (short TR and TE)"
	case te >= 60 && tr >= 1500:
		return T2, false, why + " (long TR and TE)"
	case te <= 30 && tr >= 1500:
		return PD, false, why + " (long TR, short TE)"
	}
	return "", false, why + ": no clear weighting"
}

// noAgent are ContrastBolusAgent values that mean none was given.
var noAgent = map[string]bool{"": true, "NONE": true, "NO": true, "N/A": true, "NA": true, "0": true, "NIL": true, "-": true}

func (c *Class) contrast(a Acquisition, t texts) {
	agent := strings.TrimSpace(a.ContrastAgent)
	hasAgent := !noAgent[strings.ToUpper(agent)]
	switch {
	case t.contrast != nil && t.contrast.value == "yes":
		c.Contrast = true
		c.why("contrast: %s", t.contrast)
	case t.contrast != nil:
		c.why("no contrast: %s", t.contrast)
		if hasAgent {
			c.conflict("ContrastBolusAgent %q is set, the %s says %q: no contrast was used", agent, t.contrast.field, t.contrast.token)
		}
	case hasAgent:
		c.Contrast = true
		c.why("contrast: ContrastBolusAgent %q", agent)
	default:
		c.why("no contrast: no ContrastBolusAgent and no contrast mark in the description or protocol")
	}
}

func (c *Class) fatSuppression(a Acquisition, t texts) {
	switch {
	case t.fat != nil:
		c.FatSuppressed = true
		c.why("fat suppressed: %s", t.fat)
	case slices.Contains(a.ScanOptions, "FS"):
		c.FatSuppressed = true
		c.why("fat suppressed: ScanOptions FS")
	case c.FatSuppressed:
		c.why("fat suppressed: a short-TI inversion recovery (STIR)")
	default:
		c.why("no fat suppression in the description, protocol or ScanOptions")
	}
}

// plane decides the plane from the orientation, else from the texts.
func (c *Class) plane(a Acquisition, t texts) {
	if a.MixedOrientations {
		c.why("plane unknown: the slices lie in several orientations")
		return
	}
	if len(a.Orientation) != 6 {
		if t.plane == nil || t.plane.value == Oblique {
			c.why("plane unknown: no ImageOrientationPatient, and no plane in the description or protocol")
			return
		}
		c.Plane, c.Nearest = t.plane.value, t.plane.value
		c.why("%s: no ImageOrientationPatient; %s", c.Plane, t.plane)
		return
	}
	plane, angle, n, ok := PlaneOf(a.Orientation)
	if !ok {
		c.why("plane unknown: ImageOrientationPatient %v has no slice normal", a.Orientation)
		return
	}
	c.Nearest, c.Angle = plane, angle
	c.Plane = plane
	if angle > ObliqueDegrees {
		c.Plane = Oblique
		c.why("oblique: the slice normal (%.3f, %.3f, %.3f) is %.1f° from the %s axis (more than %g°)", n[0], n[1], n[2], angle, plane, ObliqueDegrees)
	} else {
		c.why("%s: the slice normal (%.3f, %.3f, %.3f) is %.1f° from the %s axis", plane, n[0], n[1], n[2], angle, plane)
	}
	if t.plane != nil && t.plane.value != Oblique && t.plane.value != plane {
		c.conflict("the %s says %s, ImageOrientationPatient %s: the orientation was used", t.plane.field, t.plane.value, plane)
	}
}

// PlaneOf returns the standard plane nearest slices of orientation o (row
// cosines then column cosines), the angle in degrees between their normal
// (row × column, normalised) and that plane's axis, and the normal; ok is
// false when o has no normal.
func PlaneOf(o []float64) (plane string, angle float64, normal [3]float64, ok bool) {
	if len(o) != 6 {
		return "", 0, normal, false
	}
	n := [3]float64{o[1]*o[5] - o[2]*o[4], o[2]*o[3] - o[0]*o[5], o[0]*o[4] - o[1]*o[3]}
	norm := math.Sqrt(n[0]*n[0] + n[1]*n[1] + n[2]*n[2])
	if !(norm > 1e-6) || math.IsInf(norm, 0) {
		return "", 0, normal, false
	}
	for i := range n {
		n[i] = n[i]/norm + 0 // + 0: no negative zero in what is shown
	}
	axis := 2
	for i := 1; i >= 0; i-- {
		if math.Abs(n[i]) > math.Abs(n[axis]) {
			axis = i
		}
	}
	angle = math.Acos(math.Min(1, math.Abs(n[axis]))) * 180 / math.Pi
	return [3]string{Sagittal, Coronal, Axial}[axis], angle, n, true
}
