package score

import (
	"fmt"
	"sort"
)

// PathologyClasses are the answers of prompts A5 and A11.
func PathologyClasses() []string { return []string{"0", "1"} }

// TClasses are the T categories, T1..T4.
func TClasses() []string { return []string{"T1", "T2", "T3", "T4"} }

// NClasses are the N categories, N0..N3.
func NClasses() []string { return []string{"N0", "N1", "N2", "N3"} }

// Episode is one patient's scored L6 CarePath answers.
type Episode struct {
	Patient string `json:"patient"`
	// Pathology (A11) and TStage (A12's T_stage) give d_p and t_p.
	Pathology Unit `json:"pathology"`
	TStage    Unit `json:"t_stage"`
	// Care holds every care decision (A13), excluded ones included and
	// marked; Gold and Pred are option letters.
	Care []Unit `json:"care"`
}

// Intersections are the patient counts of Eq. A3: n_ab counts patients
// with all-care correctness C_p = a and pathology∧T correctness F_p = b.
type Intersections struct {
	N11 int `json:"n11"`
	N10 int `json:"n10"`
	N01 int `json:"n01"`
	N00 int `json:"n00"`
}

// CarePathScore holds the L6 endpoints (Eq. 1, A2, A3).
type CarePathScore struct {
	// Patients counts episodes; Scored those with every unit run, the P of
	// the patient-level endpoints.
	Patients int `json:"patients"`
	Scored   int `json:"scored"`
	// Decisions counts scored care decisions (the N of Care); Excluded the
	// care decisions never scored; NotRun every unit without an answer.
	Decisions int  `json:"decisions"`
	Excluded  int  `json:"excluded"`
	NotRun    int  `json:"not_run"`
	Complete  bool `json:"complete"`
	// Care = 100·Σc/N over the scored, run care decisions.
	Care *Score `json:"care,omitempty"`
	// CarePatientMacro is the mean of per-patient care accuracy.
	CarePatientMacro *Score `json:"care_patient_macro,omitempty"`
	// AllCare = 100·n(C_p = 1)/P, Strict = 100·n11/P, PathologyAndT =
	// 100·n(F_p = 1)/P; each with exact and bootstrap intervals.
	AllCare       *Score        `json:"all_care,omitempty"`
	Strict        *Score        `json:"strict,omitempty"`
	PathologyAndT *Score        `json:"pathology_and_t,omitempty"`
	Intersections Intersections `json:"intersections"`
	// CareFailures tallies failed care extractions.
	CareFailures []FailureCount `json:"care_failures,omitempty"`
	// Pathology and TStage are the class tables of the two diagnostic
	// tasks over all episodes.
	Pathology TaskScore `json:"pathology"`
	TStage    TaskScore `json:"t_stage"`
}

// CarePath scores L6 episodes. Every episode needs at least one scored
// (non-excluded) care decision, as the paper's S_p is nonempty; an episode
// without one, or a patient listed twice, is an error naming the patient.
func CarePath(episodes []Episode, opt Options) (CarePathScore, error) {
	opt, err := opt.resolved()
	if err != nil {
		return CarePathScore{}, err
	}
	eps := append([]Episode(nil), episodes...)
	sort.SliceStable(eps, func(i, j int) bool { return eps[i].Patient < eps[j].Patient })
	var cs CarePathScore
	cs.Patients = len(eps)
	var paths, ts, care []Unit
	careStats := make([][]float64, len(eps))
	macroStats := make([][]float64, len(eps))
	allStats := make([][]float64, len(eps))
	strictStats := make([][]float64, len(eps))
	fStats := make([][]float64, len(eps))
	for i, ep := range eps {
		if i > 0 && ep.Patient == eps[i-1].Patient {
			return CarePathScore{}, fmt.Errorf("score: CarePath patient %s is listed twice; give one episode per patient", ep.Patient)
		}
		p, t := withPatient(ep.Pathology, ep.Patient), withPatient(ep.TStage, ep.Patient)
		paths, ts = append(paths, p), append(ts, t)
		incomplete := p.NotRun || t.NotRun
		cs.NotRun += int(b2f(p.NotRun) + b2f(t.NotRun))
		var c, n float64
		scoredCare := 0
		for _, u := range ep.Care {
			u = withPatient(u, ep.Patient)
			care = append(care, u)
			switch {
			case u.Excluded:
				cs.Excluded++
				continue
			case u.NotRun:
				cs.NotRun++
				incomplete = true
			default:
				cs.Decisions++
				n++
				c += b2f(u.Correct())
			}
			scoredCare++
		}
		if scoredCare == 0 {
			return CarePathScore{}, fmt.Errorf("score: CarePath patient %s has no scored care decision (all excluded or none given); the paper's S_p must be nonempty, check the episode in the dataset", ep.Patient)
		}
		careStats[i] = []float64{c, n}
		if incomplete {
			for _, s := range []*[]float64{&macroStats[i], &allStats[i], &strictStats[i], &fStats[i]} {
				*s = []float64{0, 0}
			}
			continue
		}
		cs.Scored++
		allCare := c == n
		f := p.Correct() && t.Correct()
		macroStats[i] = []float64{c / n, 1}
		allStats[i] = []float64{b2f(allCare), 1}
		strictStats[i] = []float64{b2f(allCare && f), 1}
		fStats[i] = []float64{b2f(f), 1}
		switch {
		case allCare && f:
			cs.Intersections.N11++
		case allCare:
			cs.Intersections.N10++
		case f:
			cs.Intersections.N01++
		default:
			cs.Intersections.N00++
		}
	}
	cs.Complete = cs.NotRun == 0
	rs := newResampler(len(eps), opt)
	cs.Care = scoreFromStats(careStats, rs, ratio(0, 1))
	cs.CarePatientMacro = scoreFromStats(macroStats, rs, ratio(0, 1))
	cs.AllCare = scoreFromStats(allStats, rs, ratio(0, 1))
	cs.Strict = scoreFromStats(strictStats, rs, ratio(0, 1))
	cs.PathologyAndT = scoreFromStats(fStats, rs, ratio(0, 1))
	for _, s := range []*Score{cs.AllCare, cs.Strict, cs.PathologyAndT} {
		opt.exact(s)
	}
	cs.CareFailures = countFailures(care)
	if cs.Pathology, err = Classify(paths, PathologyClasses(), opt); err != nil {
		return CarePathScore{}, fmt.Errorf("CarePath pathology: %w", err)
	}
	if cs.TStage, err = Classify(ts, TClasses(), opt); err != nil {
		return CarePathScore{}, fmt.Errorf("CarePath T stage: %w", err)
	}
	return cs, nil
}

func withPatient(u Unit, patient string) Unit {
	u.Patient = patient
	return u
}
