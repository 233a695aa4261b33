package rules

import (
	"strconv"
	"time"
)

// MIMIC-IV lab itemids the rules read.
const (
	itemCreatinine  = "50912" // Creatinine, Blood (Chemistry)
	itemBUN         = "51006"
	itemGlucose     = "50931"
	itemBicarbonate = "50882"
	itemAnionGap    = "50868"
	itemPH          = "50820"
)

// lab is one numeric lab value in canonical units.
type lab struct {
	Record
	at    time.Time
	value float64
}

// labs returns a lab item's values, in canonical units, sorted by chart time. Creatinine written in µmol/L is
// converted to mg/dL (÷ 88.4); rows without a number are skipped.
func labs(src Source, itemid string) []lab {
	var out []lab
	for _, r := range byTime(src.Rows("labevents"), "charttime") {
		if r.Get("itemid") != itemid {
			continue
		}
		v, err := strconv.ParseFloat(r.Get("valuenum"), 64)
		at, ok := r.Time("charttime")
		if err != nil || !ok {
			continue
		}
		if itemid == itemCreatinine && (r.Get("valueuom") == "umol/L" || r.Get("valueuom") == "µmol/L") {
			v /= 88.4
		}
		out = append(out, lab{Record: r, at: at, value: v})
	}
	return out
}

func labsIn(ls []lab, keep func(lab) bool) []lab {
	var out []lab
	for _, l := range ls {
		if keep(l) {
			out = append(out, l)
		}
	}
	return out
}

func records(ls []lab) []Record {
	out := make([]Record, len(ls))
	for i, l := range ls {
		out[i] = l.Record
	}
	return out
}
