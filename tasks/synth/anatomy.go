package synth

import (
	"fmt"
	"math"

	"github.com/npcorch/npcorch/configs"
)

// tissue is one material of the MRI phantom. Its grey level depends on the
// contrast the series is acquired with (see contrastTable).
type tissue uint8

const (
	air tissue = iota
	fat
	muscle
	cortex // cortical bone
	marrow // fatty bone marrow
	brain
	csf
	mucosa
	artery // flow void
	venous // cavernous sinus: slow flow, strongly enhancing
	vitreous
	gland // parotid, thyroid
	tumour
	node // lymph node
	cord // spinal cord
	numTissues
)

// contrast is the weighting of a series; it decides each tissue's grey level.
type contrast int

const (
	contrastT1    contrast = iota // T1-weighted
	contrastT2                    // T2-weighted
	contrastT1C                   // T1-weighted after gadolinium
	contrastT1CFS                 // T1-weighted after gadolinium, fat suppressed
)

// levels returns the 8-bit grey level of each tissue under contrast c, so
// that a T1 panel (bright fat, dark fluid) looks unlike a T2 panel (bright
// fluid and mucosa), a contrast-enhanced one (bright tumour, mucosa and
// cavernous sinus) and a fat-suppressed one (dark fat and marrow).
func levels(c contrast) [numTissues]uint8 {
	switch c {
	case contrastT2:
		return [numTissues]uint8{air: 0, fat: 196, muscle: 52, cortex: 12, marrow: 148, brain: 134, csf: 246, mucosa: 206, artery: 8, venous: 104, vitreous: 240, gland: 150, tumour: 164, node: 176, cord: 122}
	case contrastT1C:
		return [numTissues]uint8{air: 0, fat: 228, muscle: 94, cortex: 14, marrow: 204, brain: 121, csf: 36, mucosa: 188, artery: 12, venous: 224, vitreous: 42, gland: 172, tumour: 176, node: 160, cord: 114}
	case contrastT1CFS:
		return [numTissues]uint8{air: 0, fat: 42, muscle: 88, cortex: 12, marrow: 58, brain: 118, csf: 30, mucosa: 198, artery: 10, venous: 232, vitreous: 36, gland: 104, tumour: 196, node: 182, cord: 108}
	default:
		return [numTissues]uint8{air: 0, fat: 228, muscle: 82, cortex: 14, marrow: 198, brain: 116, csf: 34, mucosa: 104, artery: 10, venous: 92, vitreous: 40, gland: 158, tumour: 98, node: 96, cord: 110}
	}
}

// big stands for an unbounded radius or clip.
const big = 1e9

// ellipsoid is an axis-aligned solid of the phantom, in patient coordinates
// (mm, DICOM LPS: +x patient left, +y posterior, +z superior), optionally
// cut by an axis-aligned clip box. A radius of big makes an elliptic
// cylinder along that axis.
type ellipsoid struct {
	c, r   [3]float64
	lo, hi [3]float64
	t      tissue
}

// solid returns an unclipped ellipsoid.
func solid(t tissue, c, r [3]float64) ellipsoid {
	return ellipsoid{c: c, r: r, lo: [3]float64{-big, -big, -big}, hi: [3]float64{big, big, big}, t: t}
}

// scaled returns e with every finite radius multiplied by k and tissue t.
func (e ellipsoid) scaled(k float64, t tissue) ellipsoid {
	for i := range e.r {
		if e.r[i] < big {
			e.r[i] *= k
		}
	}
	e.t = t
	return e
}

// inset returns e with every finite radius reduced by d mm and tissue t.
func (e ellipsoid) inset(d float64, t tissue) ellipsoid {
	for i := range e.r {
		if e.r[i] < big {
			e.r[i] -= d
		}
	}
	e.t = t
	return e
}

// clipZ returns e cut to lo ≤ z ≤ hi.
func (e ellipsoid) clipZ(lo, hi float64) ellipsoid {
	e.lo[2], e.hi[2] = lo, hi
	return e
}

// moved returns e translated by o.
func (e ellipsoid) moved(o [3]float64) ellipsoid {
	for i := range o {
		e.c[i] += o[i]
		if e.lo[i] > -big {
			e.lo[i] += o[i]
		}
		if e.hi[i] < big {
			e.hi[i] += o[i]
		}
	}
	return e
}

// contains reports whether point p lies in e.
func (e ellipsoid) contains(p [3]float64) bool {
	s := 0.0
	for i := range p {
		if p[i] < e.lo[i] || p[i] > e.hi[i] {
			return false
		}
		d := (p[i] - e.c[i]) / e.r[i]
		s += d * d
	}
	return s <= 1
}

// structureKind says how a base structure is drawn.
type structureKind int

const (
	kindMuscle structureKind = iota // muscle inside a fat plane
	kindFat                         // fat-filled space
	kindBone                        // cortex around marrow
	kindSinus                       // mucosa around air
	kindVenous                      // enhancing venous sinus
	kindSheath                      // fat around a flow void
	kindAirway                      // mucosa around a narrow air lumen
	kindSoft                        // fibrocartilage, drawn as gland-like tissue
)

// place is where a base structure lies in the phantom, relative to the
// nasopharynx: the centre of its left instance (x > 0) for bilateral ones,
// and its radii. Radii along y and z are at least 8 mm, so that every
// structure crosses at least three 5 mm axial and coronal slices.
type place struct {
	c, r [3]float64
	kind structureKind
}

// layoutIDs lists the structure ids the phantom can draw, in the order of
// the default structures.yaml.
func layoutIDs() []string {
	return []string{
		"nasal_passage", "oropharynx", "levator_veli_palatini", "carotid_sheath",
		"parapharyngeal_space", "medial_pterygoid", "lateral_pterygoid", "longus_capitis",
		"clivus", "basisphenoid", "petrous_apex", "pterygoid_base", "sphenoid_sinus",
		"ethmoid_sinus", "atlas", "axis", "foramen_lacerum", "cavernous_sinus",
	}
}

// layout places the 18 base structures of configs/structures.yaml. The
// boxes of the layout are pairwise disjoint with a margin (a tested
// property), so the tumour painted over an invaded structure never reaches
// another one.
func layout(id string) (place, bool) {
	p := func(x, y, z, rx, ry, rz float64, k structureKind) (place, bool) {
		return place{c: [3]float64{x, y, z}, r: [3]float64{rx, ry, rz}, kind: k}, true
	}
	switch id {
	case "ethmoid_sinus":
		return p(0, -50, 30, 10, 9, 8, kindSinus)
	case "sphenoid_sinus":
		return p(0, -28, 28, 10, 8.5, 8, kindSinus)
	case "cavernous_sinus":
		return p(20, -24, 28, 5.5, 8.5, 8, kindVenous)
	case "basisphenoid":
		return p(0, -8, 26.5, 10, 8, 8, kindBone)
	case "clivus":
		return p(0, 12.5, 20, 8, 8.5, 9.5, kindBone)
	case "petrous_apex":
		return p(26.5, 8.5, 22, 7.5, 8.5, 8, kindBone)
	case "foramen_lacerum":
		return p(0, -8, 7.5, 5.5, 8, 8, kindSoft)
	case "pterygoid_base":
		return p(20, -30.5, 9.5, 5.5, 8, 8, kindBone)
	case "lateral_pterygoid":
		return p(38.5, -22, 3.5, 6.5, 8.5, 8.5, kindMuscle)
	case "medial_pterygoid":
		return p(30, -26, -17, 5.5, 8.5, 9.5, kindMuscle)
	case "parapharyngeal_space":
		return p(24.5, -5.5, -1.5, 5.5, 8.5, 9.5, kindFat)
	case "levator_veli_palatini":
		return p(12, -12, -18.5, 3.5, 8, 8, kindMuscle)
	case "carotid_sheath":
		return p(28.5, 14.5, -22, 4.5, 8, 13.5, kindSheath)
	case "longus_capitis":
		return p(10, 16.5, -12.5, 3.5, 8, 13.5, kindMuscle)
	case "atlas":
		return p(0, 36.5, -22.5, 15.5, 9.5, 8, kindBone)
	case "axis":
		return p(0, 36.5, -43, 11.5, 9.5, 10, kindBone)
	case "oropharynx":
		return p(0, -4, -43, 11.5, 8, 9.5, kindAirway)
	case "nasal_passage":
		return p(0, -48, 5.5, 8.5, 11.5, 9.5, kindAirway)
	}
	return place{}, false
}

// primaryTumour is the nasopharyngeal primary (fossa of Rosenmüller) on the
// patient's left, relative to the nasopharynx; it touches no structure.
var primaryTumour = place{c: [3]float64{4, -26, 4}, r: [3]float64{6.5, 6.5, 8.5}}

// placeOf returns where the structure with this id lies, mirrored to the
// patient's right (x < 0) when right is set.
func placeOf(st configs.Structure, right bool) (place, error) {
	p, ok := layout(st.ID)
	if !ok {
		return place{}, fmt.Errorf("structure %q of the structure list has no place in the synthetic phantom; add it to the layout in tasks/synth/anatomy.go or use the default structures.yaml", st.ID)
	}
	if right {
		p.c[0] = -p.c[0]
	}
	return p, nil
}

// draw returns the solids that depict a structure of this kind, outermost
// first.
func (p place) draw(o [3]float64) []ellipsoid {
	e := solid(fat, p.c, p.r).moved(o)
	switch p.kind {
	case kindMuscle:
		return []ellipsoid{e, e.scaled(0.78, muscle)}
	case kindFat:
		return []ellipsoid{e}
	case kindBone:
		e.t = cortex
		return []ellipsoid{e, e.scaled(0.72, marrow)}
	case kindSinus:
		e.t = mucosa
		return []ellipsoid{e, e.scaled(0.7, air)}
	case kindVenous:
		e.t = venous
		return []ellipsoid{e}
	case kindSheath:
		return []ellipsoid{e, e.scaled(0.45, artery)}
	case kindAirway:
		e.t = mucosa
		return []ellipsoid{e, e.scaled(0.5, air)}
	default:
		e.t = gland
		return []ellipsoid{e}
	}
}

// background returns the solids of the head and neck that are no structure
// of the panel, in painting order, for a patient whose nasopharynx is at o.
func background(o [3]float64) []ellipsoid {
	var s []ellipsoid
	add := func(e ellipsoid) { s = append(s, e.moved(o)) }
	both := func(e ellipsoid) {
		add(e)
		e.c[0] = -e.c[0]
		add(e)
	}
	head := solid(fat, [3]float64{0, 5, 40}, [3]float64{78, 95, 100})
	neck := solid(fat, [3]float64{0, 15, 0}, [3]float64{58, 64, big}).clipZ(-big, 0)
	add(head)
	add(neck)
	add(head.inset(6, muscle))
	add(neck.inset(6, muscle))
	// Skull vault and brain above the skull base.
	skull := solid(cortex, [3]float64{0, 10, 62}, [3]float64{70, 86, 70}).clipZ(34, big)
	add(skull)
	add(skull.inset(3, marrow))
	add(skull.inset(6, cortex))
	add(skull.inset(8, brain))
	add(solid(csf, [3]float64{0, -4, 41}, [3]float64{11, 8, 5}))    // suprasellar cistern
	both(solid(csf, [3]float64{10, 12, 76}, [3]float64{5, 18, 10})) // lateral ventricles
	// Orbits, maxillary sinuses, hard palate, mandible, parotids.
	both(solid(fat, [3]float64{33, -66, 30}, [3]float64{15, 15, 13}))
	both(solid(vitreous, [3]float64{33, -70, 31}, [3]float64{10.5, 10.5, 10.5}))
	maxillary := solid(mucosa, [3]float64{30, -47, -1}, [3]float64{11, 12, 12})
	both(maxillary)
	both(maxillary.scaled(0.75, air))
	add(solid(cortex, [3]float64{0, -46, -13}, [3]float64{24, 20, 2.5}))
	both(solid(cortex, [3]float64{44, -38, -44}, [3]float64{4.5, 22, 16}))
	both(solid(gland, [3]float64{52, 2, -16}, [3]float64{8, 13, 16}))
	// Airway: nasopharynx, oropharynx, hypopharynx and larynx.
	add(solid(air, [3]float64{0, -26, 4}, [3]float64{9, 7, 9}))
	add(solid(air, [3]float64{0, -4, 0}, [3]float64{7, 6, big}).clipZ(-60, -5))
	add(solid(air, [3]float64{0, -10, 0}, [3]float64{9, 6, big}).clipZ(-big, -56))
	// Cervical spine below C2, canal and cord, great vessels, thyroid.
	body := solid(cortex, [3]float64{0, 36, 0}, [3]float64{13, 11, big}).clipZ(-big, -56)
	add(body)
	add(body.inset(2.5, marrow))
	add(solid(csf, [3]float64{0, 57, 0}, [3]float64{9, 8, big}).clipZ(-big, 10))
	add(solid(cord, [3]float64{0, 57, 0}, [3]float64{5, 4.5, big}).clipZ(-big, 12))
	both(solid(artery, [3]float64{26, 12, 0}, [3]float64{4, 4, big}).clipZ(-big, -38))
	both(solid(artery, [3]float64{34, 18, 0}, [3]float64{5, 4, big}).clipZ(-big, -38))
	add(solid(gland, [3]float64{0, -18, -86}, [3]float64{20, 8, 10}))
	return s
}

// nodes returns the metastatic lymph nodes of an N category on side s (+1
// left, -1 right) for a patient whose nasopharynx is at o: none for N0, one
// or two ipsilateral upper-neck nodes for N1, bilateral nodes for N2, and a
// large node reaching the lower neck for N3.
func nodes(n int, s float64, o [3]float64) []ellipsoid {
	at := func(x, y, z, r float64) ellipsoid {
		return solid(node, [3]float64{s * x, y, z}, [3]float64{r, r, r * 1.2}).moved(o)
	}
	switch n {
	case 1:
		return []ellipsoid{at(43, 4, -42, 7), at(41, 8, -60, 5)}
	case 2:
		return []ellipsoid{at(43, 4, -42, 7), at(-43, 4, -46, 6.5)}
	case 3:
		return []ellipsoid{at(43, 4, -42, 7), at(43, 6, -68, 11)}
	}
	return nil
}

// sq returns x².
func sq(x float64) float64 { return x * x }

// round2 rounds a length in mm to 0.01 mm, so that the values written to
// JSON are short and exact.
func round2(x float64) float64 { return math.Round(x*100) / 100 }
