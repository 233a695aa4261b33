package mrseries

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// mark is one finding in a text field: its value, the words that made it
// and the field they are in.
type mark struct {
	value, token, field string
}

func (m *mark) String() string { return fmt.Sprintf("%q in the %s", m.token, m.field) }

// texts are the findings in an acquisition's description and protocol
// name (the description first: the protocol fills only what it leaves).
type texts struct {
	weighting, contrast, fat, plane, localizer, derived *mark
	// ambiguous says why a field named several weightings, when no field
	// named one.
	ambiguous string
}

func readTexts(a Acquisition) texts {
	var t texts
	for _, f := range [...]struct{ name, text string }{{"series description", a.Description}, {"protocol name", a.Protocol}} {
		m := scanText(f.text, f.name)
		for _, p := range [...]struct{ dst, src **mark }{{&t.weighting, &m.weighting}, {&t.contrast, &m.contrast},
			{&t.fat, &m.fat}, {&t.plane, &m.plane}, {&t.localizer, &m.localizer}, {&t.derived, &m.derived}} {
			if *p.dst == nil {
				*p.dst = *p.src
			}
		}
		if t.ambiguous == "" {
			t.ambiguous = m.ambiguous
		}
	}
	return t
}

// Words of descriptions and protocol names, upper case.
var (
	// weightWord matches T1, T1W, T1WI, sT1W (Philips), T2FS, T1C, T1CE,
	// T1+C's T1, PDW: weighting, then fat suppression or contrast.
	weightWord = regexp.MustCompile(`^S?(T1|T2|PD)(W|WI)?(FS)?(C|CE|GD|POST)?(FS)?$`)
	families   = map[string]string{
		"MPRAGE": T1, "SPGR": T1, "FSPGR": T1, "BRAVO": T1, "VIBE": T1, "LAVA": T1, "THRIVE": T1,
		"STIR": T2, "HASTE": T2, "T2STAR": T2Star,
		"FLAIR": FLAIR, "DARKFLUID": FLAIR,
		"DWI": Diffusion, "DIFF": Diffusion, "DIFFUSION": Diffusion, "ADC": Diffusion, "EADC": Diffusion,
		"TRACEW": Diffusion, "DTI": Diffusion, "RESOLVE": Diffusion, "IVIM": Diffusion,
		"SWI": SWI, "SWAN": SWI, "SWIP": SWI,
		"TOF": Angiography, "MRA": Angiography, "ANGIO": Angiography,
		"PERF": Perfusion, "PERFUSION": Perfusion, "DCE": Perfusion, "DSC": Perfusion, "ASL": Perfusion,
	}
	// decisive families name the series whatever else the text says.
	decisive = map[string]bool{Diffusion: true, SWI: true, Angiography: true, Perfusion: true, T2Star: true}
	// t2star finds T2* (a gradient echo, not a T2), which tokenize would
	// cut to T2.
	t2star      = regexp.MustCompile(`(?i)(^|[^A-Za-z0-9])T2\s*\*`)
	contrastYes = set("POST", "GD", "GAD", "GADO", "GADOLINIUM", "CE", "ENH", "ENHANCED", "CONTRAST", "POSTCONTRAST",
		"POSTGD", "POSTGAD", "KM", "MDC")
	contrastNo = set("PRE", "PRECONTRAST", "NATIVE", "NATIV", "PLAIN", "NC", "NONCONTRAST", "NONCON", "UNENHANCED",
		"NONENHANCED")
	// plusContrast are the words that make a contrast mark beside "+".
	plusContrast = set("C", "GD", "GAD", "GADO", "CE", "CONTRAST")
	fatWords     = set("FS", "FATSAT", "FSAT", "FATSUP", "FATSUPP", "FATSUPPRESSED", "SPIR", "SPAIR", "STIR")
	fatSecond    = set("SAT", "SUP", "SUPP", "SUPPRESSION", "SUPPRESSED")
	planeWords   = map[string]string{"AX": Axial, "AXI": Axial, "AXIAL": Axial, "TRA": Axial, "TRAN": Axial,
		"TRANS": Axial, "TRANSVERSE": Axial, "TRANSVERSAL": Axial, "COR": Coronal, "CORO": Coronal,
		"CORONAL": Coronal, "SAG": Sagittal, "SAGITTAL": Sagittal, "SAGITAL": Sagittal, "OBL": Oblique,
		"OBLIQUE": Oblique}
	localizerWords = set("LOC", "LOCALIZER", "LOCALISER", "LOCALIZERS", "SCOUT", "SURVEY", "PILOT", "TRIPILOT",
		"3PLANE", "3PL", "AAHEAD", "AAHEADSCOUT", "PLANLOC", "LOCATOR")
	derivedWords = set("MIP", "MINIP", "SUB", "SUBTRACTION", "SUBTRACTED")
	// cjk are the Chinese words of the same marks, found inside runs of
	// Han characters.
	cjk = []struct{ word, aspect, value string }{
		{"增强", "contrast", "yes"}, {"平扫", "contrast", "no"},
		{"压脂", "fat", "yes"}, {"抑脂", "fat", "yes"}, {"脂肪抑制", "fat", "yes"}, {"脂肪饱和", "fat", "yes"}, {"脂抑", "fat", "yes"},
		{"轴位", "plane", Axial}, {"横断", "plane", Axial}, {"横轴", "plane", Axial}, {"冠状", "plane", Coronal},
		{"矢状", "plane", Sagittal}, {"定位", "localizer", "yes"},
	}
)

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// tokenize splits a text into upper-case runs of ASCII letters and
// digits, runs of other letters, and "+" signs; everything else
// separates.
func tokenize(s string) []string {
	var out []string
	var cur strings.Builder
	curASCII := false
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for _, r := range s {
		ascii := r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r))
		other := r >= 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r))
		switch {
		case ascii || other:
			if cur.Len() > 0 && curASCII != ascii {
				flush()
			}
			curASCII = ascii
			cur.WriteRune(unicode.ToUpper(r))
		case r == '+':
			flush()
			out = append(out, "+")
		default:
			flush()
		}
	}
	flush()
	return out
}

// scanText reads the marks of one field. Contradictory words (T1 and T2,
// PRE and POST, two planes) leave that aspect unmarked.
func scanText(s, field string) texts {
	var t texts
	toks := tokenize(t2star.ReplaceAllString(s, "${1}T2STAR"))
	var weights []*mark // T1, T2, PD, FLAIR and decisive families, in order
	contrasts, planes := map[string]*mark{}, map[string]*mark{}
	note := func(dst **mark, value, token string) {
		if *dst == nil {
			*dst = &mark{value, token, field}
		}
	}
	for i, tok := range toks {
		prev, next := word(toks, i-1), word(toks, i+1)
		if tok[0] >= 0x80 {
			for _, c := range cjk {
				if !strings.Contains(tok, c.word) {
					continue
				}
				switch c.aspect {
				case "contrast":
					put(contrasts, c.value, c.word, field)
				case "fat":
					note(&t.fat, c.value, c.word)
				case "plane":
					put(planes, c.value, c.word, field)
				case "localizer":
					note(&t.localizer, c.value, c.word)
				}
			}
			continue
		}
		if m := weightWord.FindStringSubmatch(tok); m != nil {
			weights = append(weights, &mark{m[1], tok, field})
			if m[3] != "" || m[5] != "" {
				note(&t.fat, "yes", tok)
			}
			if m[4] != "" {
				put(contrasts, "yes", tok, field)
			}
		}
		if f, ok := families[tok]; ok {
			shown := tok
			if f == T2Star {
				shown = "T2*"
			}
			weights = append(weights, &mark{f, shown, field})
		}
		switch {
		case contrastYes[tok]:
			put(contrasts, "yes", tok, field)
		case contrastNo[tok]:
			put(contrasts, "no", tok, field)
		case tok == "+" && plusContrast[next]:
			put(contrasts, "yes", "+"+next, field)
		case tok == "+" && plusContrast[prev]:
			put(contrasts, "yes", prev+"+", field)
		case fatWords[tok]:
			note(&t.fat, "yes", tok)
		case tok == "FAT" && fatSecond[next]:
			note(&t.fat, "yes", "FAT "+next)
		case tok == "DIXON" && (slices.Contains(toks, "W") || slices.Contains(toks, "WATER")):
			note(&t.fat, "yes", "DIXON water")
		case localizerWords[tok]:
			note(&t.localizer, "yes", tok)
		case derivedWords[tok]:
			note(&t.derived, "yes", tok)
		}
		if p, ok := planeWords[tok]; ok {
			put(planes, p, tok, field)
		}
	}
	t.weighting, t.ambiguous = decideWeighting(weights, field)
	t.contrast = only(contrasts)
	t.plane = only(planes)
	return t
}

// put keeps the first mark of each value.
func put(m map[string]*mark, value, token, field string) {
	if m[value] == nil {
		m[value] = &mark{value, token, field}
	}
}

// word returns toks[i], or "" outside toks.
func word(toks []string, i int) string {
	if i < 0 || i >= len(toks) {
		return ""
	}
	return toks[i]
}

// only returns the one mark of a set, nil for none or several.
func only(m map[string]*mark) *mark {
	if len(m) != 1 {
		return nil
	}
	for _, v := range m {
		return v
	}
	return nil
}

// decideWeighting chooses among the weighting words of one field: a
// decisive family (diffusion, SWI, angiography, perfusion) wins; T1 with
// FLAIR is T1 (a T1 FLAIR), T2 with FLAIR is FLAIR; T1, T2 and PD
// together are ambiguous.
func decideWeighting(weights []*mark, field string) (*mark, string) {
	var base []*mark
	var flair *mark
	for _, w := range weights {
		switch {
		case decisive[w.value]:
			return w, ""
		case w.value == FLAIR:
			if flair == nil {
				flair = w
			}
		case !slices.ContainsFunc(base, func(b *mark) bool { return b.value == w.value }):
			base = append(base, w)
		}
	}
	switch {
	case len(base) > 1:
		names := make([]string, len(base))
		for i, b := range base {
			names[i] = fmt.Sprintf("%q", b.token)
		}
		return nil, fmt.Sprintf("the %s names %s", field, strings.Join(names, " and "))
	case len(base) == 1 && (flair == nil || base[0].value == T1):
		return base[0], ""
	case flair != nil:
		return flair, ""
	}
	return nil, ""
}
