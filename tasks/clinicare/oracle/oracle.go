// Package oracle is the scripted careful-clinician agent of the CliniCARE gate: over an MCP client session it
// retrieves every required record source of a case's scenario through the typed tools (paginating, reading every
// note in full), reads the governing policies, and applies the scenario's criteria (tasks/clinicare/rules) to what
// it retrieved — nothing else. If the generator, the rule engine or a tool regresses, its verdicts stop matching the
// planted truth. It owns no state beyond one run and never reads the records or the truth directly.
package oracle

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/npcorch/npcorch/tasks/clinicare"
	"github.com/npcorch/npcorch/tasks/clinicare/rules"
	"github.com/npcorch/npcorch/tasks/ehr"
)

// Report is the oracle's answer for a case.
type Report struct {
	Verdict  string
	Reason   string
	Decisive []string
	Calls    int
}

// Run investigates one case through the session and returns its report.
func Run(ctx context.Context, cs *mcp.ClientSession, c clinicare.Case, spec clinicare.Spec) (Report, error) {
	a := &agent{ctx: ctx, cs: cs, subject: c.SubjectID, rows: map[string][]rules.Record{}, seen: map[string]bool{}}
	if err := a.fetch("list_encounters", map[string]any{}); err != nil {
		return Report{}, err
	}
	for _, table := range spec.RequiredSources {
		if err := a.source(table); err != nil {
			return Report{}, fmt.Errorf("case %s, source %s: %w", c.ID, table, err)
		}
	}
	for _, doc := range spec.GoverningDocuments {
		if _, err := a.call("policy_read", map[string]any{"doc": doc}); err != nil {
			return Report{}, err
		}
	}
	out, err := rules.Judge(a, rules.Case{Scenario: c.Scenario, SubjectID: c.SubjectID, HadmID: c.HadmID, StayID: c.StayID})
	if err != nil {
		return Report{}, fmt.Errorf("case %s: %w", c.ID, err)
	}
	r := Report{Verdict: out.Verdict, Reason: out.Reason, Calls: a.calls}
	for _, d := range out.Decisive {
		r.Decisive = append(r.Decisive, d.String())
	}
	return r, nil
}

// source retrieves one required table through the tool that serves it.
func (a *agent) source(table string) error {
	switch table {
	case "patients", "admissions", "transfers", "icustays", "edstays":
		return nil // list_encounters
	case "labevents":
		return a.fetch("get_labs", nil)
	case "vitalsign", "chartevents", "omr":
		return a.fetch("get_vitals", map[string]any{"source": map[string]string{"vitalsign": "ed", "chartevents": "icu", "omr": "omr"}[table]})
	case "medrecon", "prescriptions", "pharmacy", "emar":
		return a.fetch("get_medications", map[string]any{"source": sourceName(table)})
	case "microbiologyevents":
		return a.fetch("get_microbiology", nil)
	case "procedures_icd":
		return a.fetch("get_procedures", nil)
	case "diagnoses_icd":
		return a.fetch("get_diagnoses", nil)
	case "poe":
		return a.fetch("get_orders", nil)
	case "inputevents", "outputevents":
		return a.fetch("get_inputs_outputs", nil)
	case "radiology", "radiology_detail":
		return a.notes("get_imaging", "radiology")
	case "discharge":
		return a.notes("list_notes", "discharge")
	}
	return fmt.Errorf("the oracle has no tool for table %s", table)
}

func sourceName(table string) string {
	if table == "medrecon" {
		return "home"
	}
	return table
}

// fetch pages through a row tool and keeps every row it returns.
func (a *agent) fetch(tool string, args map[string]any) error {
	for offset := 0; ; {
		call := map[string]any{"subject_id": a.subject, "limit": 500, "offset": offset}
		if tool == "list_encounters" {
			call = map[string]any{"subject_id": a.subject}
		}
		for k, v := range args {
			call[k] = v
		}
		text, err := a.call(tool, call)
		if err != nil {
			return err
		}
		var page struct {
			Rows []struct {
				Ref    string            `json:"ref"`
				Table  string            `json:"table"`
				Values map[string]string `json:"values"`
			} `json:"rows"`
			Truncated  bool `json:"truncated"`
			NextOffset int  `json:"next_offset"`
		}
		if err := json.Unmarshal([]byte(text), &page); err != nil {
			return fmt.Errorf("%s: %w", tool, err)
		}
		for _, r := range page.Rows {
			a.keep(r.Ref, r.Values)
		}
		if !page.Truncated {
			return nil
		}
		if page.NextOffset <= offset {
			return fmt.Errorf("%s: a truncated page with next_offset %d after offset %d: paging would not progress", tool, page.NextOffset, offset)
		}
		offset = page.NextOffset
	}
}

func (a *agent) keep(ref string, values map[string]string) {
	if a.seen[ref] {
		return
	}
	parsed, err := ehr.ParseRef(ref)
	if err != nil {
		return
	}
	a.seen[ref] = true
	a.rows[parsed.Table] = append(a.rows[parsed.Table], rules.Record{Ref: parsed, Fields: values})
}

// notes lists a kind of note and reads every one in full, so the criteria see the text.
func (a *agent) notes(listTool, table string) error {
	args := map[string]any{}
	if listTool == "list_notes" {
		args["kind"] = table
	}
	if err := a.fetch(listTool, args); err != nil {
		return err
	}
	for i, r := range a.rows[table] {
		if r.Get("text") != "" {
			continue // read already, for another required source
		}
		text, err := a.readNote(r.Get("note_id"))
		if err != nil {
			return err
		}
		a.rows[table][i].Fields["text"] = text
	}
	return nil
}
