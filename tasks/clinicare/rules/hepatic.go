package rules

import (
	"fmt"
	"time"
)

// Ascitic-fluid items (ids of the synthetic dictionary; MIMIC's ascites items are matched by label in practice).
const (
	itemAscitesWBC   = "59001"
	itemAscitesPolys = "59002"
	itemAscitesRBC   = "59003"
)

// ascitic is one paracentesis sample: neutrophil count, RBC-corrected count, and the rows behind them.
type ascitic struct {
	at             time.Time
	anc, corrected float64
	rows           []Record
}

// judgeHepatic decides whether SBP was present at admission: a diagnostic paracentesis within 48 h with an
// ascitic neutrophil count ≥ 250 cells/µL, corrected by one neutrophil per 250 red cells.
func judgeHepatic(src Source, c Case) (Outcome, error) {
	adm, admit, _, err := admission(src, c.HadmID)
	if err != nil {
		return Outcome{}, err
	}
	all := ascitesSamples(src, c.HadmID)
	var win []ascitic
	for _, s := range all {
		if !s.at.Before(admit) && !s.at.After(admit.Add(48*time.Hour)) {
			win = append(win, s)
		}
	}
	if len(win) == 0 {
		if len(all) > 0 {
			return outcome(Lack, "paracentesis_outside_window", "the only paracentesis is more than 48 h after admission", append(all[0].rows, adm)...), nil
		}
		return outcome(Lack, "no_paracentesis", "no diagnostic paracentesis this admission", adm), nil
	}
	best := win[0]
	for _, s := range win {
		if s.anc > best.anc {
			best = s
		}
	}
	why := fmt.Sprintf("ascitic neutrophils %.0f/µL (RBC-corrected %.0f)", best.anc, best.corrected)
	switch {
	case best.anc >= 250 && best.corrected >= 250:
		return outcome(Yes, "sbp_confirmed", why, best.rows...), nil
	case best.anc >= 250:
		return outcome(Ambiguous, "traumatic_tap", why+": the count depends on the red-cell correction", best.rows...), nil
	}
	if cult := positiveCultures(src, c.HadmID, admit); len(cult) > 0 {
		return outcome(Ambiguous, "bacterascites", why+" with a positive culture: bacterascites", append(cult, best.rows...)...), nil
	}
	return outcome(No, "no_sbp", why, records0(win)...), nil
}

func records0(ss []ascitic) []Record {
	var out []Record
	for _, s := range ss {
		out = append(out, s.rows...)
	}
	return out
}

// ascitesSamples groups the admission's ascitic WBC, % polys and RBC by specimen, oldest first.
func ascitesSamples(src Source, hadm string) []ascitic {
	ofAdm := func(l lab) bool { return l.Get("hadm_id") == hadm }
	polys, rbcs := map[string]lab{}, map[string]lab{}
	for _, l := range labsIn(labs(src, itemAscitesPolys), ofAdm) {
		polys[l.Get("specimen_id")] = l
	}
	for _, l := range labsIn(labs(src, itemAscitesRBC), ofAdm) {
		rbcs[l.Get("specimen_id")] = l
	}
	var out []ascitic
	for _, w := range labsIn(labs(src, itemAscitesWBC), ofAdm) {
		pl, ok := polys[w.Get("specimen_id")]
		if !ok {
			continue
		}
		s := ascitic{at: w.at, anc: w.value * pl.value / 100, rows: []Record{w.Record, pl.Record}}
		s.corrected = s.anc
		if r, ok := rbcs[w.Get("specimen_id")]; ok {
			s.corrected = s.anc - r.value/250
			s.rows = append(s.rows, r.Record)
		}
		out = append(out, s)
	}
	return out
}

// positiveCultures finds peritoneal-fluid cultures with an organism within 48 h of admission.
func positiveCultures(src Source, hadm string, admit time.Time) []Record {
	return where(src.Rows("microbiologyevents"), func(r Record) bool {
		at, ok := r.Time("charttime")
		return r.Get("hadm_id") == hadm && r.Get("spec_type_desc") == "PERITONEAL FLUID" && r.Get("org_name") != "" &&
			ok && !at.Before(admit) && !at.After(admit.Add(48*time.Hour))
	})
}
