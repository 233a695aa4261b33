package rules

import (
	"strings"
)

// trivialClasses are therapeutic classes whose omission is not clinically significant (benchmark choice).
var trivialClasses = map[string]bool{
	"Vitamins - Multiple": true, "Laxatives - Stool Softeners": true, "Analgesic or Antipyretic Non-Opioid": true,
}

// medEntry is one line of a note's medication list: the drug (first word, lower case) and its dose.
type medEntry struct{ drug, dose string }

// change is one line of the note's "Medication Changes" section.
type change struct {
	verb, drug string
	reasoned   bool
}

// judgeMedrec reconciles home (ED medrecon), inpatient and discharge medications (Appendix B).
func judgeMedrec(src Source, c Case) (Outcome, error) {
	adm, _, _, err := admission(src, c.HadmID)
	if err != nil {
		return Outcome{}, err
	}
	stays := map[string]bool{}
	for _, e := range src.Rows("edstays") {
		if e.Get("hadm_id") == c.HadmID {
			stays[e.Get("stay_id")] = true
		}
	}
	home := where(src.Rows("medrecon"), func(r Record) bool { return stays[r.Get("stay_id")] })
	if len(home) == 0 {
		return outcome(Lack, "no_home_list", "no ED encounter with a medication reconciliation for this admission", adm), nil
	}
	note, ok := lastDischargeNote(src, c.HadmID)
	disch, hasList := section(note.Get("text"), "Discharge Medications:")
	if !ok || !hasList {
		return outcome(Lack, "no_discharge_list", "no discharge medication list", append(home, adm)...), nil
	}
	admitList, _ := section(note.Get("text"), "Medications on Admission:")
	changes := parseChanges(note.Get("text"))
	var unclear []Record
	for _, h := range home {
		switch reconcileOne(h, parseList(admitList), parseList(disch), changes) {
		case "unintended":
			return outcome(Yes, "unintended_discrepancy", "home "+h.Get("name")+" differs at discharge with no documented reason", h, note), nil
		case "unclear":
			unclear = append(unclear, h)
		}
	}
	if len(unclear) > 0 {
		return outcome(Ambiguous, "intent_unclear", "a home medication is held with no stated intent", append(unclear, note)...), nil
	}
	return outcome(No, "reconciled", "every home medication continues or changes with a documented reason", append(home, note)...), nil
}

// reconcileOne classifies one home medication: "ok", "unintended" or "unclear".
func reconcileOne(h Record, admitList, dischList []medEntry, changes []change) string {
	drug := firstWord(h.Get("name"))
	doc, documented := findChange(changes, drug)
	d, onList := findEntry(dischList, drug)
	switch {
	case documented && doc.reasoned:
		return "ok"
	case documented && doc.verb == "HELD":
		return "unclear"
	case !onList && trivialClasses[h.Get("etcdescription")]:
		return "ok"
	case !onList:
		return "unintended"
	}
	if a, ok := findEntry(admitList, drug); ok && a.dose != d.dose && !trivialClasses[h.Get("etcdescription")] {
		return "unintended"
	}
	return "ok"
}

func lastDischargeNote(src Source, hadm string) (Record, bool) {
	notes := byTime(where(src.Rows("discharge"), func(r Record) bool { return r.Get("hadm_id") == hadm }), "charttime")
	if len(notes) == 0 {
		return Record{}, false
	}
	return notes[len(notes)-1], true
}

// section returns the lines under a header up to the next blank line.
func section(text, header string) ([]string, bool) {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != header {
			continue
		}
		var out []string
		for _, x := range lines[i+1:] {
			if strings.TrimSpace(x) == "" {
				break
			}
			out = append(out, strings.TrimSpace(x))
		}
		return out, true
	}
	return nil, false
}

// parseList reads "1. Drug 20 mg PO DAILY" lines.
func parseList(lines []string) []medEntry {
	var out []medEntry
	for _, l := range lines {
		_, rest, ok := strings.Cut(l, ". ")
		f := strings.Fields(rest)
		if !ok || len(f) < 3 {
			continue
		}
		out = append(out, medEntry{drug: strings.ToLower(f[0]), dose: f[1] + " " + f[2]})
	}
	return out
}

// parseChanges reads "- VERB Drug …[: reason]" lines of the Medication Changes section.
func parseChanges(text string) []change {
	lines, _ := section(text, "Medication Changes:")
	var out []change
	for _, l := range lines {
		f := strings.Fields(strings.TrimPrefix(l, "- "))
		if len(f) < 2 {
			continue
		}
		_, reason, has := strings.Cut(l, ":")
		out = append(out, change{verb: f[0], drug: strings.ToLower(strings.TrimRight(f[1], ":")), reasoned: has && strings.TrimSpace(reason) != ""})
	}
	return out
}

func findEntry(list []medEntry, drug string) (medEntry, bool) {
	for _, e := range list {
		if e.drug == drug {
			return e, true
		}
	}
	return medEntry{}, false
}

func findChange(cs []change, drug string) (change, bool) {
	for _, c := range cs {
		if c.drug == drug {
			return c, true
		}
	}
	return change{}, false
}

func firstWord(s string) string {
	f := strings.Fields(strings.ToLower(s))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}
