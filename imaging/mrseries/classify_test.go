package mrseries

import (
	"math"
	"strings"
	"testing"
)

// Orientations (ImageOrientationPatient) of the standard planes.
var (
	axial    = []float64{1, 0, 0, 0, 1, 0}
	coronal  = []float64{1, 0, 0, 0, 0, -1}
	sagittal = []float64{0, 1, 0, 0, 0, -1}
)

// tilted is an axial orientation rotated by deg degrees about the x axis.
func tilted(deg float64) []float64 {
	r := deg * math.Pi / 180
	return []float64{1, 0, 0, 0, math.Cos(r), math.Sin(r)}
}

func mr(desc string, o []float64) Acquisition {
	return Acquisition{Modality: "MR", Description: desc, Orientation: o, Frames: 1, HasPixels: true}
}

func TestClassify(t *testing.T) {
	with := func(a Acquisition, f func(*Acquisition)) Acquisition { f(&a); return a }
	for _, c := range []struct {
		name string
		a    Acquisition
		want string // Class.String()
		why  []string
		// conflict, when set, must be in Conflicts; else there are none.
		conflict string
	}{
		{"T1WI TRA", mr("T1WI TRA", axial), "T1 axial", []string{`T1: "T1WI" in the series description`, "no contrast: no ContrastBolusAgent", "no fat suppression", "axial: the slice normal (0.000, 0.000, 1.000) is 0.0° from the axial axis"}, ""},
		{"T2 FS AX", mr("T2 FS AX", axial), "T2 FS axial", []string{`fat suppressed: "FS" in the series description`}, ""},
		{"T1+C COR FS", mr("T1+C COR FS", coronal), "T1 +C FS coronal", []string{`contrast: "+C" in the series description`}, ""},
		{"Siemens names", mr("t1_tse_tra", axial), "T1 axial", nil, ""},
		{"post gad", mr("AX T1 POST GAD", axial), "T1 +C axial", []string{`contrast: "POST"`}, ""},
		{"C+ before", mr("C+ T1 SAG", sagittal), "T1 +C sagittal", []string{`contrast: "C+"`}, ""},
		{"T1C+", mr("T1C+ AX", axial), "T1 +C axial", nil, ""},
		{"agent only", with(mr("T1 SAG", sagittal), func(a *Acquisition) { a.ContrastAgent = "Gadovist" }), "T1 +C sagittal", []string{`contrast: ContrastBolusAgent "Gadovist"`}, ""},
		{"agent NONE", with(mr("T1 SAG", sagittal), func(a *Acquisition) { a.ContrastAgent = "none" }), "T1 sagittal", nil, ""},
		{"pre beats agent", with(mr("T1 PRE SAG", sagittal), func(a *Acquisition) { a.ContrastAgent = "Gadovist" }), "T1 sagittal", []string{`no contrast: "PRE"`}, `ContrastBolusAgent "Gadovist" is set, the series description says "PRE": no contrast was used`},
		{"pre and post", with(mr("T1 PRE POST", axial), func(a *Acquisition) { a.ContrastAgent = "Gd" }), "T1 +C axial", []string{`contrast: ContrastBolusAgent "Gd"`}, ""},
		{"T1 from TR/TE", with(mr("SE 2", axial), func(a *Acquisition) { a.RepetitionTime, a.EchoTime = 520, 12 }), "T1 axial", []string{"T1: TR 520 ms, TE 12 ms (short TR and TE) (none in the description or protocol)"}, ""},
		{"T2 from TR/TE", with(mr("", coronal), func(a *Acquisition) { a.RepetitionTime, a.EchoTime = 4000, 100 }), "T2 coronal", nil, ""},
		{"STIR from TI", with(mr("", coronal), func(a *Acquisition) { a.RepetitionTime, a.EchoTime, a.InversionTime = 4000, 60, 160 }), "T2 FS coronal", []string{"fat suppressed: a short-TI inversion recovery (STIR)"}, ""},
		{"no weighting", mr("SE 2", axial), "unknown weighting axial", []string{"weighting unknown: none in the description or protocol, and no TR and TE"}, ""},
		{"mid TR", with(mr("series 3", axial), func(a *Acquisition) { a.RepetitionTime, a.EchoTime = 1200, 45 }), "unknown weighting axial", []string{"no clear weighting"}, ""},
		{"physics disagrees", with(mr("T2 TRA", axial), func(a *Acquisition) { a.RepetitionTime, a.EchoTime = 500, 10 }), "T2 axial", nil, "the series description says T2, TR 500 ms, TE 10 ms (short TR and TE) suggest T1: T2 was used"},
		{"protocol fills in", with(mr("Series 5", axial), func(a *Acquisition) { a.Protocol = "T2_TSE_TRA" }), "T2 axial", []string{`T2: "T2" in the protocol name`}, ""},
		{"STIR", mr("STIR COR", coronal), "T2 FS coronal", nil, ""},
		{"T2 FLAIR", mr("T2 FLAIR AX", axial), "FLAIR axial", nil, ""},
		{"T2*", mr("T2* GRE TRA", axial), "T2* axial", []string{`T2*: "T2*" in the series description`}, ""},
		{"T2 *", mr("ax t2 * fl2d", axial), "T2* axial", nil, ""},
		{"T1 FLAIR", mr("T1 FLAIR SAG", sagittal), "T1 sagittal", nil, ""},
		{"diffusion", mr("DWI b1000 TRA", axial), "DWI axial", nil, ""},
		{"ADC", mr("T2 ADC", axial), "DWI axial", nil, ""},
		{"Dixon water", mr("T2W_TSE_DIXON_W", axial), "T2 FS axial", []string{`fat suppressed: "DIXON water"`}, ""},
		{"Philips", mr("sT1W_3D_TFE", sagittal), "T1 sagittal", nil, ""},
		{"fat sat words", mr("T1 fat sat cor", coronal), "T1 FS coronal", nil, ""},
		{"ScanOptions FS", with(mr("T1 COR", coronal), func(a *Acquisition) { a.ScanOptions = []string{"PFP", "FS"} }), "T1 FS coronal", []string{"fat suppressed: ScanOptions FS"}, ""},
		{"Chinese", mr("T1WI增强 冠状位 压脂", coronal), "T1 +C FS coronal", []string{`contrast: "增强"`, `fat suppressed: "压脂"`}, ""},
		{"Chinese plain axial", mr("T2WI平扫 轴位", axial), "T2 axial", []string{`no contrast: "平扫"`}, ""},
		{"T1 and T2", mr("T1 T2 map", axial), "unknown weighting axial", []string{`weighting unknown: the series description names "T1" and "T2"`}, ""},
		{"tilted axial", mr("T1 TRA", tilted(10)), "T1 axial", []string{"is 10.0° from the axial axis"}, ""},
		{"oblique", mr("T2 OBL", tilted(30)), "T2 oblique (30.0° from axial)", []string{"oblique: the slice normal (0.000, -0.500, 0.866) is 30.0° from the axial axis (more than 15°)"}, ""},
		{"oblique named coronal", mr("T2 COR OBL", tilted(60)), "T2 oblique (30.0° from coronal)", nil, ""},
		{"description plane wrong", mr("T1 COR", axial), "T1 axial", nil, "the series description says coronal, ImageOrientationPatient axial: the orientation was used"},
		{"no orientation", mr("T1 SAG", nil), "T1 sagittal", []string{`sagittal: no ImageOrientationPatient; "SAG" in the series description`}, ""},
		{"no orientation, no plane", mr("T1", nil), "T1 unknown plane", nil, ""},
		{"no normal", mr("T1", []float64{1, 0, 0, 1, 0, 0}), "T1 unknown plane", []string{"has no slice normal"}, ""},
		{"mixed orientations", with(mr("T1 something", axial), func(a *Acquisition) { a.MixedOrientations = true }), "T1 unknown plane", []string{"several orientations"}, ""},
		{"localizer word", mr("3-plane Localizer", axial), "localizer", []string{`"LOCALIZER" in the series description`}, ""},
		{"scout", mr("AAHead_Scout", sagittal), "localizer", nil, ""},
		{"localizer image type", with(mr("T1 SAG", sagittal), func(a *Acquisition) { a.ImageType = []string{"ORIGINAL", "PRIMARY", "LOCALIZER"} }), "localizer", []string{"ImageType LOCALIZER"}, ""},
		{"Chinese localizer", mr("定位像", axial), "localizer", nil, ""},
		{"MIP", with(mr("TOF 3D", axial), func(a *Acquisition) { a.ImageType = []string{"DERIVED", "PRIMARY", "MIP"} }), "derived image", []string{"ImageType MIP"}, ""},
		{"subtraction", mr("T1 +C SUB", axial), "derived image", nil, ""},
		{"CT", with(mr("HEAD", axial), func(a *Acquisition) { a.Modality = "CT" }), "not MR", []string{"modality CT"}, ""},
		{"no pixels", with(mr("", nil), func(a *Acquisition) { a.HasPixels = false }), "no image", nil, ""},
		{"multi-frame", with(mr("T1 3D", axial), func(a *Acquisition) { a.Frames = 176 }), "multi-frame", []string{"176 frames"}, ""},
	} {
		got := Classify(c.a)
		if got.String() != c.want {
			t.Errorf("%s: %q, want %q (why %q)", c.name, got.String(), c.want, got.Why)
		}
		why := strings.Join(got.Why, "\n")
		for _, w := range c.why {
			if !strings.Contains(why, w) {
				t.Errorf("%s: why does not say %q:\n%s", c.name, w, why)
			}
		}
		switch {
		case c.conflict == "" && len(got.Conflicts) > 0:
			t.Errorf("%s: conflicts %q", c.name, got.Conflicts)
		case c.conflict != "" && strings.Join(got.Conflicts, "\n") != c.conflict:
			t.Errorf("%s: conflicts %q, want %q", c.name, got.Conflicts, c.conflict)
		}
		wantClassified := !strings.Contains(c.want, "unknown")
		if got.Classified() != wantClassified {
			t.Errorf("%s: Classified() = %v", c.name, got.Classified())
		}
	}
}

func TestTokenize(t *testing.T) {
	for in, want := range map[string]string{
		"T1+C COR FS":       "T1|+|C|COR|FS",
		"t1_tse_tra_fs":     "T1|TSE|TRA|FS",
		"C+ T1":             "C|+|T1",
		"T1WI增强 冠状位":        "T1WI|增强|冠状位",
		"Ax T2 (FRFSE)/3mm": "AX|T2|FRFSE|3MM",
		"":                  "",
	} {
		if got := strings.Join(tokenize(in), "|"); got != want {
			t.Errorf("tokenize(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzClassify: no description, protocol, orientation or timing panics,
// and the class holds together: a known kind, an image with a reason for
// each decision, a plane that agrees with its angle, and a plane and an
// angle that do not depend on which of row and column comes first.
func FuzzClassify(f *testing.F) {
	f.Add("T1+C COR FS", "", 1.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, "")
	f.Add("T2 FS AX", "t2_tse_tra", 1.0, 0.0, 0.0, 0.0, 0.866, 0.5, 4000.0, 100.0, 0.0, "")
	f.Add("", "", 0.0, 1.0, 0.0, 0.0, 0.0, -1.0, 500.0, 10.0, 900.0, "Gadovist")
	f.Add("T1WI增强 冠状位 压脂", "3-plane loc", 1e308, -1e308, 0.0, 0.0, 1.0, 0.0, -1.0, 1e-300, 0.0, "NONE")
	f.Fuzz(func(t *testing.T, desc, proto string, o0, o1, o2, o3, o4, o5, tr, te, ti float64, agent string) {
		a := Acquisition{Modality: "MR", Description: desc, Protocol: proto, HasPixels: true, Frames: 1,
			Orientation: []float64{o0, o1, o2, o3, o4, o5}, RepetitionTime: tr, EchoTime: te, InversionTime: ti, ContrastAgent: agent}
		c := Classify(a)
		if c.String() == "" || len(c.Why) == 0 {
			t.Fatalf("class %+v", c)
		}
		if c.Kind != KindImage {
			return
		}
		if len(c.Why) != 4 {
			t.Fatalf("%d reasons for an image: %q", len(c.Why), c.Why)
		}
		switch c.Plane {
		case Axial, Coronal, Sagittal:
			if c.Angle > ObliqueDegrees || c.Nearest != c.Plane && c.Nearest != "" {
				t.Fatalf("plane %s at %g° from %s", c.Plane, c.Angle, c.Nearest)
			}
		case Oblique:
			if !(c.Angle > ObliqueDegrees && c.Angle <= 54.8) {
				t.Fatalf("oblique at %g°", c.Angle)
			}
		case "":
		default:
			t.Fatalf("plane %q", c.Plane)
		}
		p1, a1, _, ok1 := PlaneOf(a.Orientation)
		p2, a2, _, ok2 := PlaneOf([]float64{o3, o4, o5, o0, o1, o2})
		if ok1 != ok2 || p1 != p2 || math.Abs(a1-a2) > 1e-9 {
			t.Fatalf("row and column swapped: %s %g° vs %s %g°", p1, a1, p2, a2)
		}
	})
}
