package archtest

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// tasksRooms are the rooms inside tasks/ that are not benchmark families
// (docs/architecture.md, "Inside tasks"). Every other package directly
// under tasks/ is a family, with its sub-packages: adding a family adds no
// line here.
var tasksRooms = map[string]string{
	"tasks":           "the contract of a benchmark",
	"tasks/inference": "the seam to engines",
	"tasks/journal":   "the journal",
	"tasks/send":      "sending one model's items",
	"tasks/judge":     "judging as a phase",
	"tasks/score":     "scores",
	"tasks/extract":   "answer extraction",
	"tasks/dataset":   "the dataset formats",
	"tasks/prepare":   "which images the tasks need",
	"tasks/importer":  "importing a DICOM export",
	"tasks/synth":     "synthetic datasets",
	"tasks/report":    "reports",
	"tasks/live":      "the live view",
	"tasks/campaign":  "the application",
	"tasks/tasktest":  "the tests of adding a task and a family",
	"tasks/ehr":       "the records of the governed tool environment",
	"tasks/toolenv":   "the governed tool environment",
}

// knowsNoTask are the rooms of tasks/ that know no task, with the only
// rooms of tasks/ each may import.
var knowsNoTask = map[string][]string{
	"tasks/inference": nil,
	"tasks/journal":   {"tasks/inference"},
}

// rootMayImport are the only rooms of tasks/ the root package imports:
// those below the contract.
var rootMayImport = []string{"tasks/dataset", "tasks/extract", "tasks/inference", "tasks/journal"}

// innerRoom is the room of tasks/ a package is in ("" outside tasks/):
// the known room that holds it, or the family (tasks/NAME) it belongs to.
func innerRoom(path string) string {
	if path != "tasks" && !strings.HasPrefix(path, "tasks/") {
		return ""
	}
	if path == "tasks" {
		return path
	}
	parts := strings.SplitN(path, "/", 3)
	return parts[0] + "/" + parts[1]
}

// family reports whether a room of tasks/ is a benchmark family.
func family(room string) bool {
	_, known := tasksRooms[room]
	return room != "" && !known
}

// innerViolations says, for each edge that breaks a rule inside tasks/
// (docs/architecture.md, "Inside tasks"), which and why:
//   - inference and journal know no task (in their tests too);
//   - no family imports another (in its tests too);
//   - the root imports no family, nor any room above it (its production
//     code: Go keeps a family out of the root package's own tests, since
//     every family imports the root; the external tests, package
//     tasks_test, read NPCBench as their fixture);
//   - the campaign is imported by cmd and the drivers in scripts alone.
func innerViolations(es []edge) []string {
	var out []string
	for _, e := range es {
		from, to := innerRoom(e.from), innerRoom(e.to)
		kind := "imports"
		if e.test {
			kind = "imports in its tests"
		}
		if to == "" || from == to && from != "" {
			continue
		}
		switch may, ok := knowsNoTask[from]; {
		case ok && !slices.Contains(may, to):
			out = append(out, fmt.Sprintf("%s %s %s: inference and journal know no task (%s may import, inside tasks, %s)", e.from, kind, e.to, from, orNothingOfTasks(may)))
		case family(from) && family(to):
			out = append(out, fmt.Sprintf("%s %s %s: no family imports another", e.from, kind, e.to))
		case from == "tasks" && !e.test && family(to):
			out = append(out, fmt.Sprintf("%s %s %s: the root imports no family", e.from, kind, e.to))
		case from == "tasks" && !e.test && !slices.Contains(rootMayImport, to):
			out = append(out, fmt.Sprintf("%s %s %s: the root imports, inside tasks, only %s", e.from, kind, e.to, strings.Join(rootMayImport, ", ")))
		case to == "tasks/campaign" && room(e.from) != "cmd" && room(e.from) != "scripts":
			out = append(out, fmt.Sprintf("%s %s %s: the campaign is imported by cmd (and the drivers in scripts) alone", e.from, kind, e.to))
		}
	}
	return out
}

func orNothingOfTasks(list []string) string {
	if len(list) == 0 {
		return "nothing"
	}
	return strings.Join(list, ", ")
}

// TestInnerRules fails naming every import that breaks a rule inside
// tasks/, and lists the families it found.
func TestInnerRules(t *testing.T) {
	module, pkgs := goList(t)
	es := edges(module, pkgs)
	for _, v := range innerViolations(es) {
		t.Error(v)
	}
	fams := map[string]bool{}
	for p := range pkgs {
		if r := innerRoom(strings.TrimPrefix(p, module+"/")); family(r) {
			fams[r] = true
		}
	}
	var names []string
	for f := range fams {
		names = append(names, f)
	}
	sort.Strings(names)
	if len(names) == 0 {
		t.Error("no benchmark family under tasks/: is the list of rooms out of date?")
	}
	t.Logf("families: %s", strings.Join(names, ", "))
}

// TestInnerViolationsNameTheEdge: on a synthetic graph, each inner rule
// catches its break, in production and test code as the rule says, and
// the allowed arrows pass.
func TestInnerViolationsNameTheEdge(t *testing.T) {
	got := innerViolations([]edge{
		// allowed
		{"tasks/journal", "tasks/inference", false},
		{"tasks", "tasks/journal", false},
		{"tasks", "tasks/npcbench", true},
		{"tasks/npcbench", "tasks", false},
		{"tasks/npcbench", "tasks/score", false},
		{"tasks/npcbench/sub", "tasks/npcbench", false},
		{"tasks/campaign", "tasks/npcbench", false},
		{"cmd/npcorch", "tasks/campaign", false},
		{"scripts/chaos/trial", "tasks/campaign", false},
		{"tasks/send", "tasks", false},
		{"tasks/inference", "launcher", false},
		// broken
		{"tasks/inference", "tasks", false},
		{"tasks/journal", "tasks/dataset", true},
		{"tasks/clinicare", "tasks/npcbench", false},
		{"tasks/clinicare/rules", "tasks/npcbench", true},
		{"tasks", "tasks/clinicare", false},
		{"tasks", "tasks/send", false},
		{"tasks/report", "tasks/campaign", false},
		{"tasks/npcbench", "tasks/campaign", true},
	})
	want := []string{
		"tasks/inference imports tasks: inference and journal know no task (tasks/inference may import, inside tasks, nothing)",
		"tasks/journal imports in its tests tasks/dataset: inference and journal know no task (tasks/journal may import, inside tasks, tasks/inference)",
		"tasks/clinicare imports tasks/npcbench: no family imports another",
		"tasks/clinicare/rules imports in its tests tasks/npcbench: no family imports another",
		"tasks imports tasks/clinicare: the root imports no family",
		"tasks imports tasks/send: the root imports, inside tasks, only tasks/dataset, tasks/extract, tasks/inference, tasks/journal",
		"tasks/report imports tasks/campaign: the campaign is imported by cmd (and the drivers in scripts) alone",
		"tasks/npcbench imports in its tests tasks/campaign: the campaign is imported by cmd (and the drivers in scripts) alone",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
