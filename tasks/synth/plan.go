package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks/dataset"
)

// DiscordantPatient is the one L3 patient whose reference T stage disagrees
// with the deterministic T rule applied to its own invasion labels, as one
// patient in a hundred does in the paper (the rule scores 99/100 on gold
// evidence). Its reference T stage is one category above the T stage the
// rule gives for its invasion labels (T1 where the rule gives T2). It is a
// member of the cards cohort of the default dataset; a dataset with fewer
// than three L3 patients has no discordant patient.
const DiscordantPatient = "P03"

// balanced returns n values cycling through pool, shuffled by r, so that a
// handful of patients still spreads over every category.
func balanced(n int, pool []int, r *rand.Rand) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = pool[i%len(pool)]
	}
	r.Shuffle(n, func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// planDataset draws the labels and the phantom of every patient.
func planDataset(opt Options, st *configs.Structures) ([]*patient, error) {
	r := rand.New(rand.NewPCG(uint64(opt.Seed), hash64("dataset")))
	n, m := opt.Patients, opt.CarePath
	tL3 := balanced(n, []int{1, 2, 3, 4}, r)
	nL3 := balanced(n, []int{0, 1, 2, 3}, r)
	positive := (n*9 + 8) / 16 // 5 of 8, like the paper's 39 of 69
	pathL3 := make([]int, n)
	for i := range positive {
		pathL3[i] = 1
	}
	r.Shuffle(n, func(i, j int) { pathL3[i], pathL3[j] = pathL3[j], pathL3[i] })
	// CarePath patients lean to T3, as the paper's episodes do.
	tCP := balanced(m, []int{3, 2, 4, 3, 1}, r)
	nCP := balanced(m, []int{1, 2, 0, 3}, r)

	cards := (n + 1) / 2
	var out []*patient
	for i := range n {
		id := fmt.Sprintf("P%02d", i+1)
		cohorts := []string{dataset.CohortPathology, dataset.CohortSequence}
		if i < cards {
			cohorts = append(cohorts, dataset.CohortCards)
		}
		if i >= cards || n == 1 {
			cohorts = append(cohorts, dataset.CohortTGroups)
		}
		cohorts = append(cohorts, dataset.CohortNGroups)
		p, err := planPatient(opt, st, spec{id: id, cohorts: cohorts, tStage: tL3[i], nStage: nL3[i], pathology: pathL3[i], discordant: id == DiscordantPatient})
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	for i := range m {
		id := fmt.Sprintf("C%02d", i+1)
		p, err := planPatient(opt, st, spec{id: id, cohorts: []string{dataset.CohortCarePath}, tStage: tCP[i], nStage: nCP[i], pathology: 1})
		if err != nil {
			return nil, err
		}
		// One care item of the whole set is excluded from scoring, as the
		// paper excludes six: the last question of C02 (C01 when alone).
		excluded := i == 1 || (m == 1 && i == 0)
		p.episode = planEpisode(opt.Seed, p, st, i, excluded)
		// Every other CarePath patient and the last are in the L6
		// controls' cohort (the paper: 25 of 100), asked its own fixed
		// control questions: two patients at least when there are two.
		if i%2 == 0 || i == m-1 {
			p.cohorts = append(p.cohorts, dataset.CohortCareControl)
			p.episode.ControlQuestions = controlQuestions(p.episode.Questions)
		}
		out = append(out, p)
	}
	return out, nil
}

// spec is what the dataset decides about a patient before drawing it.
type spec struct {
	id             string
	cohorts        []string
	tStage, nStage int
	pathology      int
	discordant     bool // see DiscordantPatient
}

// planPatient draws one patient: invasion, phantom, series geometry,
// boxes, coverage and slide.
func planPatient(opt Options, st *configs.Structures, sp spec) (*patient, error) {
	id := sp.id
	r := patientRand(opt.Seed, id, "patient")
	p := &patient{id: id, cohorts: sp.cohorts, tStage: sp.tStage, ruleT: sp.tStage, nStage: sp.nStage}
	if sp.discordant {
		p.ruleT = sp.tStage - 1
		if p.ruleT < 1 {
			p.ruleT = 2
		}
	}
	p.origin = [3]float64{round2(r.Float64()*6 - 3), round2(r.Float64()*6 - 3), round2(r.Float64()*80 - 40)}
	p.side = 1
	if r.IntN(2) == 1 {
		p.side = -1
	}
	if err := p.planFindings(st, r); err != nil {
		return nil, fmt.Errorf("patient %s: %w", id, err)
	}
	p.planSolids()
	p.planSeries(opt, r)
	p.planCoverage(r)
	if err := p.planBoxes(opt.ImageSize); err != nil {
		return nil, fmt.Errorf("patient %s: %w", id, err)
	}
	p.slide = &slide{
		file:   id + "/pathology/slide.png",
		label:  sp.pathology,
		width:  opt.SlideWidth,
		height: opt.SlideHeight,
		seed:   [2]uint64{uint64(opt.Seed), hash64("slide", id)},
	}
	return p, nil
}

// planFindings chooses which structures the tumour invades so that the T
// rule gives p.ruleT, and lays out the 27 cards.
func (p *patient) planFindings(st *configs.Structures, r *rand.Rand) error {
	byLevel := map[int][]int{}
	for i, s := range st.List {
		byLevel[s.TLevel] = append(byLevel[s.TLevel], i)
	}
	invaded := make([]bool, len(st.List))
	pick := func(level int) error {
		c := byLevel[level]
		if len(c) == 0 {
			return fmt.Errorf("no structure of the structure list has t_level %d, so no T%d tumour can be drawn; add one to structures.yaml", level, level)
		}
		invaded[c[r.IntN(len(c))]] = true
		return nil
	}
	// Besides the structures that set the T category, the tumour reaches
	// a few of lower level: up to two that do not upstage for T1.
	var lower []int
	var extra int
	if p.ruleT == 1 {
		lower = slices.Clone(byLevel[1])
		extra = r.IntN(3)
	} else {
		if err := pick(p.ruleT); err != nil {
			return err
		}
		if r.Float64() < 0.35 {
			if err := pick(p.ruleT); err != nil {
				return err
			}
		}
		for l := 1; l < p.ruleT; l++ {
			lower = append(lower, byLevel[l]...)
		}
		extra = r.IntN(p.ruleT + 1)
	}
	r.Shuffle(len(lower), func(i, j int) { lower[i], lower[j] = lower[j], lower[i] })
	for _, i := range lower[:min(extra, len(lower))] {
		invaded[i] = true
	}

	var ids []string
	ipsi, contra := "left", "right"
	if p.side < 0 {
		ipsi, contra = contra, ipsi
	}
	for i, s := range st.List {
		if invaded[i] {
			ids = append(ids, s.ID)
		}
		if !s.Bilateral {
			if err := p.addFinding(s, "", invaded[i], r); err != nil {
				return err
			}
			continue
		}
		sides := map[string]bool{}
		if invaded[i] {
			switch u := r.Float64(); {
			case u < 0.65:
				sides[ipsi] = true
			case u < 0.85:
				sides[ipsi], sides[contra] = true, true
			default:
				sides[contra] = true
			}
		}
		for _, side := range []string{"left", "right"} {
			if err := p.addFinding(s, side, sides[side], r); err != nil {
				return err
			}
		}
	}
	if got, want := st.TRule(ids), fmt.Sprintf("T%d", p.ruleT); got != want {
		return fmt.Errorf("internal error: invasion of %v gives %s by the T rule, planned %s", ids, got, want)
	}
	return nil
}

// addFinding appends one card, its structure placed with up to 0.8 mm of
// jitter per axis.
func (p *patient) addFinding(s configs.Structure, side string, invaded bool, r *rand.Rand) error {
	pl, err := placeOf(s, side == "right")
	if err != nil {
		return err
	}
	for i := range pl.c {
		pl.c[i] = round2(pl.c[i] + r.Float64()*1.6 - 0.8)
	}
	f := finding{structure: s.ID, side: side, invaded: invaded, outline: solid(fat, pl.c, pl.r).moved(p.origin)}
	p.findings = append(p.findings, f)
	return nil
}

// planSolids assembles the phantom: anatomy, then the structures, then the
// tumour (the primary and every invaded card's structure), then the nodes.
func (p *patient) planSolids() {
	p.solids = background(p.origin)
	for _, f := range p.findings {
		pl, _ := layout(f.structure)
		pl.c = f.outline.c
		p.solids = append(p.solids, pl.draw([3]float64{})...)
	}
	p.primary = solid(tumour, primaryTumour.c, primaryTumour.r)
	p.primary.c[0] *= p.side
	p.primary = p.primary.moved(p.origin)
	p.solids = append(p.solids, p.primary)
	for _, f := range p.findings {
		if f.invaded {
			p.solids = append(p.solids, f.outline.scaled(0.85, tumour))
		}
	}
	p.solids = append(p.solids, nodes(p.nStage, p.side, p.origin)...)
}

// planCoverage sets the T range (suprasellar cistern to inferior C3) and
// the longer N range (skull base to the lowest axial slice, standing in for
// the sternoclavicular joint), both inside the axial series.
func (p *patient) planCoverage(r *rand.Rand) {
	z := p.origin[2]
	jit := func() float64 { return r.Float64()*2 - 1 }
	bottom := math.Inf(1)
	for _, s := range p.series {
		if s.meta.Sequence == axialSequences[0] {
			for _, sl := range s.slices {
				bottom = min(bottom, sl.pos[2])
			}
		}
	}
	p.coverage = dataset.Coverage{
		T: dataset.Range{From: round2(z + 35 + jit()), To: round2(z - 56 + jit())},
		N: dataset.Range{From: round2(z + 18 + jit()), To: round2(bottom + 2.5 + r.Float64())},
	}
}
