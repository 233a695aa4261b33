package clinicare

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"sort"

	"go.yaml.in/yaml/v3"

	cfg "github.com/npcorch/npcorch/configs/clinicare"
	"github.com/npcorch/npcorch/tasks/ehr"
)

// Provenance tags where a decision rule comes from, as the paper's §4.5 tags them.
type Provenance string

// The three provenance tags.
const (
	Guideline         Provenance = "guideline"
	ClinicalKnowledge Provenance = "clinical knowledge"
	BenchmarkChoice   Provenance = "benchmark choice"
)

// Criterion is one decision rule of a verdict with its provenance.
type Criterion struct {
	Text       string     `yaml:"text" json:"text"`
	Provenance Provenance `yaml:"provenance" json:"provenance"`
}

// Criteria are the four verdicts' rules (§4.2 "Operational Evaluation Criteria").
type Criteria struct {
	Yes       []Criterion `yaml:"yes" json:"yes"`
	No        []Criterion `yaml:"no" json:"no"`
	Lack      []Criterion `yaml:"lack_of_data" json:"lack_of_data"`
	Ambiguous []Criterion `yaml:"medically_ambiguous" json:"medically_ambiguous"`
}

// RubricItem is one must-do or must-not criterion of the process rubric (§5.5), weighted ±1 or ±2.
type RubricItem struct {
	ID     string `yaml:"id" json:"id"`
	Text   string `yaml:"text" json:"text"`
	Weight int    `yaml:"weight" json:"weight"`
}

// Rubric is a scenario's process rubric.
type Rubric struct {
	MustDo  []RubricItem `yaml:"must_do" json:"must_do"`
	MustNot []RubricItem `yaml:"must_not" json:"must_not"`
}

// ReasonCode names one way a verdict arises; every Indeterminate verdict carries one.
type ReasonCode struct {
	Code    string  `yaml:"code" json:"code"`
	Verdict Verdict `yaml:"verdict" json:"verdict"`
	Text    string  `yaml:"text" json:"text"`
}

// Control is an adversarial control (a trap) the scenario's cases carry.
type Control struct {
	ID   string `yaml:"id" json:"id"`
	Text string `yaml:"text" json:"text"`
}

// Spec is one scenario's specification, the paper's §4.2 anatomy.
type Spec struct {
	ID                 string       `yaml:"id" json:"id"`
	Title              string       `yaml:"title" json:"title"`
	Specialty          string       `yaml:"specialty" json:"specialty"`
	Query              string       `yaml:"query" json:"query"`
	Criteria           Criteria     `yaml:"criteria" json:"criteria"`
	Reasons            []ReasonCode `yaml:"reason_codes" json:"reason_codes"`
	RequiredSources    []string     `yaml:"required_sources" json:"required_sources"`
	RequiredFindings   []string     `yaml:"required_findings" json:"required_findings"`
	GoverningDocuments []string     `yaml:"governing_documents" json:"governing_documents"`
	Rubric             Rubric       `yaml:"rubric" json:"rubric"`
	Controls           []Control    `yaml:"adversarial_controls" json:"adversarial_controls"`
}

// LoadSpecs reads and checks every embedded scenario specification, sorted by id.
func LoadSpecs() ([]Spec, error) { return loadSpecs(cfg.Files) }

func loadSpecs(fsys fs.FS) ([]Spec, error) {
	names, err := fs.Glob(fsys, "scenarios/*.yaml")
	if err != nil {
		return nil, err
	}
	var specs []Spec
	for _, name := range names {
		s, err := readSpec(fsys, name)
		if err != nil {
			return nil, err
		}
		specs = append(specs, s)
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].ID < specs[j].ID })
	return specs, nil
}

func readSpec(fsys fs.FS, name string) (Spec, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return Spec{}, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Spec
	if err := dec.Decode(&s); err != nil {
		return Spec{}, fmt.Errorf("configs/clinicare/%s: %w", name, err)
	}
	if want := path.Base(name); want != s.ID+".yaml" {
		return Spec{}, fmt.Errorf("configs/clinicare/%s: id %q must match the file name", name, s.ID)
	}
	if err := s.validate(); err != nil {
		return Spec{}, fmt.Errorf("configs/clinicare/%s: %w", name, err)
	}
	return s, nil
}

// validate checks the counts and values the paper fixes (§4.2, §5.5).
func (s Spec) validate() error {
	if s.Query == "" || s.Title == "" {
		return fmt.Errorf("scenario %s: title and query are required", s.ID)
	}
	for v, cs := range map[Verdict][]Criterion{Yes: s.Criteria.Yes, No: s.Criteria.No, Lack: s.Criteria.Lack, Ambiguous: s.Criteria.Ambiguous} {
		if len(cs) == 0 {
			return fmt.Errorf("scenario %s: no criteria for %q", s.ID, v)
		}
		for _, c := range cs {
			if c.Provenance != Guideline && c.Provenance != ClinicalKnowledge && c.Provenance != BenchmarkChoice {
				return fmt.Errorf("scenario %s: criterion %q has provenance %q; use guideline, clinical knowledge or benchmark choice", s.ID, c.Text, c.Provenance)
			}
		}
	}
	if n := len(s.RequiredSources); n < 3 || n > 9 {
		return fmt.Errorf("scenario %s: %d required sources; the paper's scenarios name 3 to 9", s.ID, n)
	}
	for _, t := range s.RequiredSources {
		if _, ok := ehr.SchemaOf(t); !ok {
			return fmt.Errorf("scenario %s: required source %q is not a table of the EHR", s.ID, t)
		}
	}
	if n := len(s.RequiredFindings); n < 4 || n > 11 {
		return fmt.Errorf("scenario %s: %d required findings; the paper's scenarios name 4 to 11", s.ID, n)
	}
	if n := len(s.GoverningDocuments); n < 1 || n > 4 {
		return fmt.Errorf("scenario %s: %d governing documents; want 1 to 4", s.ID, n)
	}
	return s.Rubric.validate(s.ID)
}

func (r Rubric) validate(id string) error {
	if len(r.MustDo) < 4 || len(r.MustDo) > 9 || len(r.MustNot) < 3 || len(r.MustNot) > 8 {
		return fmt.Errorf("scenario %s: rubric has %d must-do and %d must-not; the paper's carry 4–9 and 3–8", id, len(r.MustDo), len(r.MustNot))
	}
	for _, it := range r.MustDo {
		if it.Weight != 1 && it.Weight != 2 {
			return fmt.Errorf("scenario %s: must-do %s weighs %d; want +1 or +2", id, it.ID, it.Weight)
		}
	}
	for _, it := range r.MustNot {
		if it.Weight != -1 && it.Weight != -2 {
			return fmt.Errorf("scenario %s: must-not %s weighs %d; want -1 or -2", id, it.ID, it.Weight)
		}
	}
	return nil
}

func specByID(specs []Spec, id string) (Spec, bool) {
	for _, s := range specs {
		if s.ID == id {
			return s, true
		}
	}
	return Spec{}, false
}

func specFS() fs.ReadFileFS { return cfg.Files }
