package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// RawName is the raw dataset's file name inside its folder.
const RawName = "dataset.json"

// LoadRaw reads DIR/dataset.json and validates it (ParseRaw).
func LoadRaw(dir string, structures []string) (*Raw, error) {
	file := filepath.Join(dir, RawName)
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read dataset: %w (the dataset folder must hold %s; make one with `npcorch synth`)", err, RawName)
	}
	return ParseRaw(dir, data, structures)
}

// ParseRaw parses data, the content of DIR/dataset.json, and validates it.
// structures lists the base-structure ids findings may name (nil skips
// that check). It is the one parser of the raw format.
//
// A file that is not JSON of this format (a syntax error, an unknown
// field, another format tag) is an error and no dataset. What is wrong
// inside a well-formed file comes back as Problems, each naming the file,
// the patient and what to do, together with the dataset: the caller
// reports them and goes on with the patients they do not concern.
func ParseRaw(dir string, data []byte, structures []string) (*Raw, error) {
	file := filepath.Join(dir, RawName)
	var raw Raw
	if err := decodeJSON(file, data, &raw); err != nil {
		return nil, err
	}
	if raw.Format != RawFormat {
		return nil, fmt.Errorf("%s: format is %q, want %q; this is not an npcorch raw dataset (docs/dataset.md)", file, raw.Format, RawFormat)
	}
	if ps := raw.Validate(dir, structures); len(ps) > 0 {
		for i := range ps {
			ps[i].File = file
		}
		return &raw, ps
	}
	return &raw, nil
}

// PreparedName is the prepared manifest's file name inside its folder.
const PreparedName = "manifest.json"

// LoadPrepared reads DIR/manifest.json and checks that every image it names
// stays inside DIR and exists.
func LoadPrepared(dir string) (*Prepared, error) {
	file := filepath.Join(dir, PreparedName)
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read dataset: %w", err)
	}
	var p Prepared
	if err := decodeJSON(file, data, &p); err != nil {
		return nil, err
	}
	var ps Problems
	if p.Format != PreparedFormat {
		ps = append(ps, Problem{File: file, Reason: fmt.Sprintf("format is %q, want %q; run `npcorch prep` again", p.Format, PreparedFormat)})
	}
	for _, pt := range p.Patients {
		for _, img := range pt.images() {
			if err := checkInside(dir, img.Path, true); err != nil {
				ps = append(ps, Problem{File: file, Where: "patient " + pt.ID, Reason: err.Error()})
			}
		}
	}
	if len(ps) > 0 {
		return &p, ps
	}
	return &p, nil
}

func (pp PreparedPatient) images() []Image {
	var out []Image
	if pp.Overview != nil {
		out = append(out, *pp.Overview)
	}
	for _, x := range pp.Panels {
		out = append(out, x.Image)
	}
	for _, x := range pp.Cards {
		out = append(out, x.Image)
	}
	for _, x := range pp.TGroups {
		out = append(out, x.Image)
	}
	for _, x := range pp.NGroups {
		out = append(out, x.Image)
	}
	return append(out, pp.Pages...)
}

// decodeJSON decodes data, the content of file, refusing unknown fields:
// a misspelt key must not leave a field empty in silence.
func decodeJSON(file string, data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(file, data, err)
	}
	return nil
}

var knownCohorts = map[string]bool{CohortPathology: true, CohortSequence: true, CohortCards: true,
	CohortTGroups: true, CohortNGroups: true, CohortCarePath: true, CohortCareControl: true}

// Validate checks the dataset's ids, labels, cohorts and paths; root is the
// dataset folder. Every problem is returned, not just the first.
func (r *Raw) Validate(root string, structures []string) Problems {
	var ps Problems
	add := func(where, format string, args ...any) {
		ps = append(ps, Problem{Where: where, Reason: fmt.Sprintf(format, args...)})
	}
	if r.Format != RawFormat {
		add("", "format is %q, want %q", r.Format, RawFormat)
	}
	known := map[string]bool{}
	for _, s := range structures {
		known[s] = true
	}
	seen := map[string]bool{}
	for i, p := range r.Patients {
		where := fmt.Sprintf("patients[%d] (%s)", i, p.ID)
		if p.ID == "" {
			add(where, "the patient has no id")
		} else if seen[p.ID] {
			add(where, "duplicate patient id %q; ids must be unique", p.ID)
		}
		seen[p.ID] = true
		for _, c := range p.Cohorts {
			if !knownCohorts[c] {
				add(where, "unknown cohort %q; use pathology, sequence, cards, t_groups, n_groups, carepath or carepath_control", c)
			}
		}
		if p.TStage != "" && !oneOf(p.TStage, "T1", "T2", "T3", "T4") {
			add(where, "t_stage %q is not T1..T4", p.TStage)
		}
		if p.NStage != "" && !oneOf(p.NStage, "N0", "N1", "N2", "N3") {
			add(where, "n_stage %q is not N0..N3", p.NStage)
		}
		if p.Pathology != nil {
			if p.Pathology.Label != 0 && p.Pathology.Label != 1 {
				add(where, "pathology label %d is not 0 or 1", p.Pathology.Label)
			}
			if err := checkInside(root, p.Pathology.File, true); err != nil {
				add(where, "pathology: %v", err)
			}
		}
		for _, s := range p.Series {
			for _, problem := range s.check(root) {
				add(where, "series %s: %s", s.Sequence, problem)
			}
		}
		for _, f := range p.Structures {
			if known != nil && len(known) > 0 && !known[f.Structure] {
				add(where, "unknown structure %q; add it to structures.yaml or fix the dataset", f.Structure)
			}
			if f.Invasion != 0 && f.Invasion != 1 {
				add(where, "structure %s: invasion %d is not 0 or 1", f.Structure, f.Invasion)
			}
			if !oneOf(f.Side, "", "left", "right") {
				add(where, "structure %s: side %q is not left, right or empty", f.Structure, f.Side)
			}
		}
		if p.Episode != nil {
			checkCareQuestions(add, where, "care question", p.Episode.Questions)
			checkCareQuestions(add, where, "control question", p.Episode.ControlQuestions)
		}
		checkControlCohort(add, where, &p)
	}
	r.validateText(add)
	return append(ps, r.validateConsultations()...)
}

// checkCareQuestions checks an episode's care (or control) questions:
// unique ids, an answer among the options, known injected findings.
func checkCareQuestions(add problemFunc, where, kind string, qs []CareQuestion) {
	qids := map[string]bool{}
	for _, q := range qs {
		if qids[q.ID] {
			add(where, "duplicate %s id %q", kind, q.ID)
		}
		qids[q.ID] = true
		letters := map[string]bool{}
		for _, o := range q.Options {
			letters[o.Letter] = true
		}
		if !letters[q.Answer] {
			add(where, "%s %s: answer %q is not one of its options", kind, q.ID, q.Answer)
		}
		for _, inj := range q.Inject {
			if !oneOf(inj, InjectPathology, InjectTStage, InjectStructures) {
				add(where, "%s %s: inject %q is not %s, %s or %s", kind, q.ID, inj, InjectPathology, InjectTStage, InjectStructures)
			}
		}
	}
}

// checkControlCohort checks that the patients of the L6 controls' cohort
// are CarePath patients with control questions, and that only they have
// control questions.
func checkControlCohort(add problemFunc, where string, p *Patient) {
	in := slices.Contains(p.Cohorts, CohortCareControl)
	has := p.Episode != nil && len(p.Episode.ControlQuestions) > 0
	switch {
	case in && !slices.Contains(p.Cohorts, CohortCarePath):
		add(where+".cohorts", "%s patients must be carepath patients too: the controls reuse their pathology and MRI", CohortCareControl)
	case in && !has:
		add(where+".episode.control_questions", "the %s patient has no control questions", CohortCareControl)
	case !in && has:
		add(where+".cohorts", "the patient has control questions but is not in cohort %s; add it, or remove the questions", CohortCareControl)
	}
}

// check returns what is wrong with a series reference: not exactly one
// of a folder and a file list, or a path that leaves root or is missing.
func (s SeriesRef) check(root string) []string {
	switch {
	case s.Dir == "" && len(s.Files) == 0:
		return []string{"neither a folder (dir) nor a list of files (files)"}
	case s.Dir != "" && len(s.Files) > 0:
		return []string{fmt.Sprintf("both a folder (%q) and a list of %d files: give one", s.Dir, len(s.Files))}
	case s.Dir != "":
		if err := checkInside(root, s.Dir, true); err != nil {
			return []string{err.Error()}
		}
		return nil
	}
	var out []string
	seen := make(map[string]bool, len(s.Files))
	for _, f := range s.Files {
		if seen[f] {
			out = append(out, fmt.Sprintf("file %q listed twice", f))
		}
		seen[f] = true
		if err := checkInside(root, f, true); err != nil {
			out = append(out, err.Error())
		}
	}
	return out
}

// checkInside reports an error when rel is absolute, leaves root (symbolic
// links included), or (mustExist) does not exist.
func checkInside(root, rel string, mustExist bool) error {
	if rel == "" {
		return errors.New("empty path")
	}
	if filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") {
		return fmt.Errorf("path %q must be relative to the dataset folder", rel)
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	p := filepath.Join(absRoot, filepath.FromSlash(rel))
	if !inside(absRoot, p) {
		return fmt.Errorf("path %q leaves the dataset folder", rel)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if mustExist {
			return fmt.Errorf("path %q does not exist", rel)
		}
		return nil
	}
	realRoot, err := filepath.EvalSymlinks(absRoot)
	if err == nil && !inside(realRoot, real) {
		return fmt.Errorf("path %q links outside the dataset folder", rel)
	}
	return nil
}

func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func oneOf(v string, allowed ...string) bool {
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	return false
}
