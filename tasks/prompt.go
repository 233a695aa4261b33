package tasks

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"text/template"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks/dataset"
)

// CardRowSequences are the four sequences of a structure card, top to bottom.
var CardRowSequences = []string{"T1_Ax", "T2_Ax", "T1+C_Ax", "T1+C_COR_FS"}

// Prompts renders the prompt templates (configs/prompts/TASK.tmpl).
type Prompts struct {
	tmpl       map[string]*template.Template
	structures []string
}

// PromptData is what a template sees; configs/prompts/README.md documents it.
type PromptData struct {
	Structures   []string
	Edition      string
	RowSequences []string
	Options      []dataset.Option
	Letters      []string
	Prior        []string
	Context      []dataset.ContextEntry
	Checkpoint   string
	Question     string
}

// LoadPrompts parses TASK.tmpl for every task from the folder dir of fsys
// (configs.Defaults holds them under "prompts"; a campaign's own folder is
// os.DirFS(folder) with dir ".").
func LoadPrompts(fsys fs.FS, dir string, st *configs.Structures) (*Prompts, error) {
	p := &Prompts{tmpl: map[string]*template.Template{}, structures: st.IDs()}
	funcs := template.FuncMap{"join": strings.Join}
	for _, task := range configs.TaskKeys {
		name := path.Join(dir, task+".tmpl")
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("prompt for task %s: %w", task, err)
		}
		t, err := template.New(name).Funcs(funcs).Option("missingkey=error").Parse(string(src))
		if err != nil {
			return nil, fmt.Errorf("prompt template %s: %w", name, err)
		}
		p.tmpl[task] = t
	}
	return p, nil
}

// Render returns the prompt text of an item; prior holds the "Prior
// diagnostic findings" lines of a care question (nil otherwise).
func (p *Prompts) Render(it Item, prior []string) (string, error) {
	t, ok := p.tmpl[it.Task]
	if !ok {
		return "", fmt.Errorf("item %s: no prompt template for task %q", it.ID, it.Task)
	}
	d := PromptData{Structures: p.structures, Edition: "eighth", RowSequences: CardRowSequences}
	if it.Task == configs.TaskCPMRI {
		d.Edition = "ninth"
	}
	if it.Care != nil {
		d.Options = it.Care.Options
		for _, o := range it.Care.Options {
			d.Letters = append(d.Letters, o.Letter)
		}
		d.Prior = prior
		d.Context = it.Context
		d.Checkpoint = it.Care.Checkpoint
		d.Question = it.Care.Question
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return "", fmt.Errorf("item %s: render prompt: %w", it.ID, err)
	}
	return strings.TrimSpace(b.String()), nil
}

// PriorFindings writes a care question's "Prior diagnostic findings": the
// model's own predictions for what the question injects (nil findings are
// reported as unavailable, never guessed) and the supplied reference fields.
func PriorFindings(q *dataset.CareQuestion, f Findings) []string {
	var out []string
	for _, inj := range q.Inject {
		switch inj {
		case InjectPathology:
			switch f.Pathology {
			case "1":
				out = append(out, "Pathology (model prediction): 1, supports nasopharyngeal carcinoma")
			case "0":
				out = append(out, "Pathology (model prediction): 0, does not support nasopharyngeal carcinoma")
			default:
				out = append(out, "Pathology (model prediction): no valid answer")
			}
		case InjectTStage:
			if f.TStage != "" {
				out = append(out, "MRI T stage (model prediction): "+f.TStage)
			} else {
				out = append(out, "MRI T stage (model prediction): no valid answer")
			}
		case InjectStructures:
			switch {
			case f.Invaded == nil:
				out = append(out, "Invaded structures (model prediction): no valid answer")
			case len(f.Invaded) == 0:
				out = append(out, "Invaded structures (model prediction): none")
			default:
				out = append(out, "Invaded structures (model prediction): "+strings.Join(f.Invaded, ", "))
			}
		}
	}
	for _, s := range q.Supplied {
		out = append(out, s.Field+": "+s.Value)
	}
	return out
}

// Findings are a model's own predictions for one CarePath patient, as
// extracted from its cp_pathology and cp_mri answers. Empty fields mean the
// model gave no valid answer; Invaded is nil then, empty for "none invaded".
type Findings struct {
	Pathology string
	TStage    string
	Invaded   []string
}
