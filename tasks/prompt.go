package tasks

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"text/template"

	"github.com/npcorch/npcorch/tasks/dataset"
)

// CardRowSequences are the four sequences of a structure card, top to bottom.
var CardRowSequences = []string{"T1_Ax", "T2_Ax", "T1+C_Ax", "T1+C_COR_FS"}

// Prompts renders the prompt templates of a registry's tasks
// (configs/prompts/TASK.tmpl).
type Prompts struct {
	tasks      map[string]*Task
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
	// Case, and for a judge's request Response and Rubric (the signed
	// criterion), are an O1 item's (Item.Consult).
	Case     string
	Response string
	Rubric   string
}

// LoadPrompts parses the template of every task of reg (Task.Prompt
// followed by ".tmpl") from the folder dir of fsys (configs.Defaults holds
// NPCBench's under "prompts"; a campaign's own folder is os.DirFS(folder)
// with dir ".").
func LoadPrompts(fsys fs.FS, dir string, reg *Registry) (*Prompts, error) {
	p := &Prompts{tasks: map[string]*Task{}, tmpl: map[string]*template.Template{}, structures: reg.Structures().IDs()}
	funcs := template.FuncMap{"join": strings.Join}
	for _, task := range reg.Tasks() {
		name := path.Join(dir, task.promptName()+".tmpl")
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("prompt for task %s: %w", task.Key, err)
		}
		t, err := template.New(name).Funcs(funcs).Option("missingkey=error").Parse(string(src))
		if err != nil {
			return nil, fmt.Errorf("prompt template %s: %w", name, err)
		}
		p.tasks[task.Key], p.tmpl[task.Key] = task, t
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
	d := PromptData{Structures: p.structures, Edition: p.tasks[it.Task].edition(), RowSequences: CardRowSequences}
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
	if c := it.Consult; c != nil {
		d.Case, d.Question = c.Case, c.Question
		if c.Judged != nil {
			d.Response, d.Rubric = c.Judged.Response, SignedCriterion(c.Judged.Criterion)
		}
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return "", fmt.Errorf("item %s: render prompt: %w", it.ID, err)
	}
	return strings.TrimSpace(b.String()), nil
}
