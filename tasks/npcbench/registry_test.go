package npcbench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/schedule"
)

func TestRegistryOrderFamiliesAndUnknownTasks(t *testing.T) {
	reg := Registry(configs.DefaultStructures())
	// The paper's order (items are built, sent and reported in it).
	want := []string{Pathology, Sequence, Card, TCards, TGroups, NGroups, CPPathology, CPMRI, CPCare}
	if got := slices.DeleteFunc(reg.Keys(), func(k string) bool { return !slices.Contains(want, k) }); !slices.Equal(got, want) {
		t.Errorf("tasks %v, want %v in this order", reg.Keys(), want)
	}
	got, err := reg.Select([]string{CarePath, NGroups, Pathology})
	if err != nil || !slices.Equal(got, []string{Pathology, NGroups, CPPathology, CPMRI, CPCare}) {
		t.Errorf("select: %v, %v; want the tasks in registry order, carepath expanded", got, err)
	}
	for _, bad := range []string{"t_stage", "Pathology", ""} {
		_, err := reg.Select([]string{bad})
		if err == nil || !strings.Contains(err.Error(), "unknown task") || !strings.Contains(err.Error(), strings.Join(reg.Keys(), ", ")) ||
			!strings.Contains(err.Error(), CarePath) {
			t.Errorf("select %q: %v; want an error listing every task and the family", bad, err)
		}
	}
}

// TestPaperScaleCountsThePapersRequests: the descriptors' paper-scale
// counts are the paper's L3 and L6 request mix (69 + 200 + 2,700 + 100 +
// 300 + 400 L3 requests, 100 + 100 + 217 L6), and the scheduler's test
// fixture is a copy of them.
func TestPaperScaleCountsThePapersRequests(t *testing.T) {
	reg := Registry(configs.DefaultStructures())
	paper := []string{Pathology, Sequence, Card, TCards, TGroups, NGroups, CPPathology, CPMRI, CPCare}
	all, err := reg.PaperScale([]configs.Model{{Name: "M"}}, paper)
	if err != nil {
		t.Fatal(err)
	}
	var sum schedule.Workload
	for _, w := range all {
		sum = sum.Add(w)
	}
	if sum.Requests != 69+200+2700+100+300+400+100+100+217 {
		t.Errorf("%d requests, want 4186", sum.Requests)
	}
	cp, err := reg.PaperScale([]configs.Model{{Name: "M"}}, []string{CarePath})
	if err != nil || len(cp) != 3 || cp[0].Task != CPPathology || cp[2].Task != CPCare || cp[2].Images != 0 ||
		cp[0].Images+cp[1].Images != 100+100*10 {
		t.Errorf("carepath: %+v, %v; want 3 workloads, 1,100 images, care text-only", cp, err)
	}
	two, _ := reg.PaperScale([]configs.Model{{Name: "A"}, {Name: "B"}}, paper)
	if len(two) != 2*len(all) || two[0].Model != "A" || two[len(two)-1].Model != "B" {
		t.Errorf("two models: %d workloads", len(two))
	}
	if _, err := reg.PaperScale([]configs.Model{{Name: "M"}}, []string{"t_stage"}); err == nil || !strings.Contains(err.Error(), "unknown task") {
		t.Errorf("unknown task accepted: %v", err)
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "launcher", "schedule", "testdata", "paper_mixes.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fixture []schedule.RequestMix
	if err := json.Unmarshal(data, &fixture); err != nil {
		t.Fatal(err)
	}
	if len(fixture) != len(paper) {
		t.Errorf("launcher/schedule/testdata/paper_mixes.json has %d tasks, want the paper's %d", len(fixture), len(paper))
	}
	for _, mix := range fixture {
		if want := reg.PaperMix(mix.Task); !reflect.DeepEqual(mix, want) {
			t.Errorf("launcher/schedule/testdata/paper_mixes.json: %+v is not the descriptor's %+v", mix, want)
		}
	}
}

// TestConfigTaskKeysAreCheckedAgainstTheRegistry: configs owns no task
// list; every task key a campaign or a model registry writes is checked
// against this registry, and an unknown one names its file, line and field
// and lists the known tasks (a family only where a task list may use one).
func TestConfigTaskKeysAreCheckedAgainstTheRegistry(t *testing.T) {
	reg := Registry(configs.DefaultStructures())
	known := strings.Join(reg.Keys(), ", ")
	var families []string
	for _, f := range reg.Families() {
		families = append(families, f.Name)
	}
	base := "output: o\ndataset: {raw: r, prepared: p}\n"
	for in, want := range map[string]string{
		base + "tasks: [pathology, staging]\nmodels: [Lingshu-7B]\n":                     `c.yaml: line 3: field tasks[1]: unknown task "staging"; known tasks: ` + known + "; or a family of them: " + strings.Join(families, ", "),
		base + "models:\n  - name: Lingshu-7B\n    tasks: {stageing: {max_tokens: 9}}\n": `c.yaml: line 5: field models[0].tasks.stageing: unknown task "stageing"; known tasks: ` + known,
		base + "models:\n  - name: Lingshu-7B\n    tasks: {carepath: {max_tokens: 9}}\n": `c.yaml: line 5: field models[0].tasks.carepath: unknown task "carepath"; known tasks: ` + known,
	} {
		c, err := configs.ParseCampaign("c.yaml", ".", []byte(in), nil)
		if err != nil {
			t.Fatal(err)
		}
		err = reg.CheckTaskRefs(c.TaskRefs)
		if err == nil || err.Error() != want {
			t.Errorf("%q:\n got %v\nwant %s", in, err, want)
		}
	}
	r, err := configs.ParseRegistry("reg.yaml", []byte("models:\n  - name: A\n    engine: {kind: sim}\n    tasks: {stageing: {}, t_groups: {}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.CheckTaskRefs(r.TaskRefs); err == nil || err.Error() != `reg.yaml: line 4: field models[0].tasks.stageing: unknown task "stageing"; known tasks: `+known {
		t.Errorf("registry: %v", err)
	}
	c, err := configs.ParseCampaign("c.yaml", ".", []byte(base+"tasks: [carepath, n_groups]\nmodels: [Lingshu-7B]\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.CheckTaskRefs(c.TaskRefs); err != nil {
		t.Errorf("a valid campaign and the embedded models.yaml: %v", err)
	}
}

// TestEmbeddedModelsHaveEveryTasksBudget: after the registry's defaults,
// every model of models.yaml has an output budget for every task.
func TestEmbeddedModelsHaveEveryTasksBudget(t *testing.T) {
	reg := Registry(configs.DefaultStructures())
	models, err := configs.DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.CheckTaskRefs(models.TaskRefs); err != nil {
		t.Error(err)
	}
	for _, name := range models.Names() {
		m, _ := models.Get(name)
		for _, task := range reg.Keys() {
			if m.Tasks[task].MaxTokens <= 0 {
				t.Errorf("%s: task %s has no output budget after defaults", name, task)
			}
		}
	}
}

// "Text models cover L1/L2/L4/L5/O1; image-capable models additionally
// cover L3 and L6" (the paper, Table A7): a text-only model answers every
// L1, L2, L4 and L5 task, the L5 controls included, and no L3 or L6 task,
// not even the L6 controls whose prompts carry reference or no findings.
func TestTextOnlyModelsAnswerTheTextLevelsOnly(t *testing.T) {
	reg := Registry(configs.DefaultStructures())
	tm := configs.Model{Name: "T", TextOnly: true}
	for _, key := range reg.Keys() {
		task, _ := reg.Task(key)
		want := task.Level != "L3" && task.Level != "L6"
		if got := reg.Answerable(tm, key); got != want {
			t.Errorf("%s (%s): a text-only model answers it: %v, want %v", key, task.Level, got, want)
		}
	}
}

// A task list that names a task without the tasks whose answers its
// prompts include is refused, naming both and the family that holds them:
// those items could never be asked.
func TestTaskListNeedsTheTasksItBuildsOn(t *testing.T) {
	reg := Registry(configs.DefaultStructures())
	for list, want := range map[string]string{
		"cp_care":              "task cp_care writes the model's answers to cp_pathology and cp_mri into its prompts; add cp_pathology, cp_mri to the task list, or name the family carepath",
		"cp_care_own_findings": "task cp_care_own_findings writes the model's answers to cp_pathology and cp_mri into its prompts; add cp_pathology, cp_mri to the task list, or name the family carepath_controls",
	} {
		if _, err := reg.Select([]string{list}); err == nil || err.Error() != want {
			t.Errorf("Select([%s]): %v\nwant %s", list, err, want)
		}
	}
	for _, ok := range [][]string{{"cp_pathology", "cp_mri", "cp_care"}, {CarePath}, {CarePathControls}, {LRevControls},
		{"cp_care_ref_findings"}, {"l_rev_serial"}, nil} {
		if _, err := reg.Select(ok); err != nil {
			t.Errorf("Select(%v): %v", ok, err)
		}
	}
}
