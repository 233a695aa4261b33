package rules

import (
	"fmt"
	"strings"
	"time"
)

// sglt2 names the SGLT2 inhibitors whose use makes DKA euglycemic (the glucose criterion then misleads).
var sglt2 = []string{"empagliflozin", "dapagliflozin", "canagliflozin", "ertugliflozin"}

// panel is one chemistry specimen with glucose, bicarbonate and anion gap, and the nearest pH within an hour.
type panel struct {
	at                   time.Time
	glucose, bicarb, gap lab
	ph                   *lab
}

// resolved applies the ADA resolution criteria: glucose < 200 mg/dL and two of bicarbonate ≥ 15 mEq/L, venous pH
// > 7.30, anion gap ≤ 12 mEq/L.
func (p panel) resolved() bool {
	n := 0
	if p.bicarb.value >= 15 {
		n++
	}
	if p.gap.value <= 12 {
		n++
	}
	if p.ph != nil && p.ph.value > 7.30 {
		n++
	}
	return p.glucose.value < 200 && n >= 2
}

func (p panel) records() []Record {
	rs := []Record{p.glucose.Record, p.bicarb.Record, p.gap.Record}
	if p.ph != nil {
		rs = append(rs, p.ph.Record)
	}
	return rs
}

// judgeDKA decides whether DKA resolved within 24 h of the insulin infusion's start.
func judgeDKA(src Source, c Case) (Outcome, error) {
	adm, _, _, err := admission(src, c.HadmID)
	if err != nil {
		return Outcome{}, err
	}
	if sg := sglt2Use(src); len(sg) > 0 {
		return outcome(Ambiguous, "euglycemic_sglt2", "SGLT2 inhibitor use: the glucose criterion cannot mark resolution", sg...), nil
	}
	drips := byTime(where(src.Rows("inputevents"), func(r Record) bool {
		return r.Get("hadm_id") == c.HadmID && r.Get("itemid") == "223258"
	}), "starttime")
	if len(drips) == 0 {
		return outcome(Lack, "no_insulin_infusion", "no intravenous insulin infusion recorded", adm), nil
	}
	start, _ := drips[0].Time("starttime")
	panels := dkaPanels(src, c.HadmID, start, start.Add(24*time.Hour))
	for _, p := range panels {
		if p.resolved() {
			return outcome(Yes, "resolved_within_24h", fmt.Sprintf("criteria met at %s", p.glucose.Get("charttime")), append(p.records(), drips[0])...), nil
		}
	}
	if len(panels) < 2 {
		return outcome(Lack, "insufficient_labs", "fewer than two panels within 24 h of the infusion", drips[0], adm), nil
	}
	last := panels[len(panels)-1]
	if last.glucose.value < 200 && last.gap.value <= 12 {
		return outcome(Ambiguous, "hyperchloremic_acidosis", "the gap closed but bicarbonate and pH lag: non-gap acidosis", append(last.records(), drips[0])...), nil
	}
	var rows []Record
	for _, p := range panels {
		rows = append(rows, p.records()...)
	}
	return outcome(No, "not_resolved", fmt.Sprintf("%d panels within 24 h, none meeting the criteria", len(panels)), append(rows, drips[0])...), nil
}

// dkaPanels groups the admission's glucose, bicarbonate and anion gap by specimen within [from, to].
func dkaPanels(src Source, hadm string, from, to time.Time) []panel {
	inWin := func(l lab) bool { return l.Get("hadm_id") == hadm && !l.at.Before(from) && !l.at.After(to) }
	bySpec := func(item string) map[string]lab {
		m := map[string]lab{}
		for _, l := range labsIn(labs(src, item), inWin) {
			m[l.Get("specimen_id")] = l
		}
		return m
	}
	bic, gap := bySpec(itemBicarbonate), bySpec(itemAnionGap)
	phs := labsIn(labs(src, itemPH), func(l lab) bool { return l.Get("hadm_id") == hadm })
	var out []panel
	for _, g := range labsIn(labs(src, itemGlucose), inWin) {
		b, ok1 := bic[g.Get("specimen_id")]
		a, ok2 := gap[g.Get("specimen_id")]
		if !ok1 || !ok2 {
			continue
		}
		p := panel{at: g.at, glucose: g, bicarb: b, gap: a}
		for i := range phs {
			if d := phs[i].at.Sub(g.at); d <= time.Hour && d >= -time.Hour {
				p.ph = &phs[i]
				break
			}
		}
		out = append(out, p)
	}
	return out
}

// sglt2Use finds SGLT2 inhibitors on the home list or in inpatient prescriptions.
func sglt2Use(src Source) []Record {
	match := func(s string) bool {
		s = strings.ToLower(s)
		for _, d := range sglt2 {
			if strings.Contains(s, d) {
				return true
			}
		}
		return false
	}
	out := where(src.Rows("medrecon"), func(r Record) bool { return match(r.Get("name")) })
	return append(out, where(src.Rows("prescriptions"), func(r Record) bool { return match(r.Get("drug")) })...)
}
