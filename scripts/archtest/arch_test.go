package archtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

// rooms says which rooms each top-level room may import (itself always):
// docs/architecture.md, "Rules".
var rooms = map[string][]string{
	"configs":  nil,
	"gpu":      nil,
	"imaging":  nil,
	"launcher": {"configs", "gpu"},
	"tasks":    {"launcher", "imaging", "gpu", "configs"},
	"cmd":      {"tasks", "launcher", "imaging", "gpu", "configs"},
	"scripts":  {"tasks", "launcher", "imaging", "gpu", "configs"},
}

// pkg is what `go list -json` says of one package that the graph needs.
type pkg struct {
	ImportPath   string
	Module       *struct{ Path string }
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// edge is one import of one of our packages by another.
type edge struct {
	from, to string
	test     bool // only the package's tests import it
}

// goList lists the module's packages with every build tag set the code
// uses, so that no file's imports escape the check.
func goList(t *testing.T) (module string, pkgs map[string]*pkg) {
	t.Helper()
	pkgs = map[string]*pkg{}
	for _, tags := range []string{"", "openslide"} {
		cmd := exec.Command("go", "list", "-e", "-json", "-tags="+tags, "./...")
		cmd.Dir = "../.."
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, stderr.String())
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		for {
			var p pkg
			if err := dec.Decode(&p); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("go list output: %v", err)
			}
			if p.Module != nil {
				module = p.Module.Path
			}
			if old := pkgs[p.ImportPath]; old != nil {
				old.Imports = append(old.Imports, p.Imports...)
				old.TestImports = append(old.TestImports, p.TestImports...)
				old.XTestImports = append(old.XTestImports, p.XTestImports...)
				continue
			}
			pkgs[p.ImportPath] = &p
		}
	}
	if module == "" || len(pkgs) < 20 {
		t.Fatalf("go list found %d packages of module %q; run the test inside the module", len(pkgs), module)
	}
	return module, pkgs
}

// edges returns every import among the module's packages, with the
// module prefix cut, production imports first, each once.
func edges(module string, pkgs map[string]*pkg) []edge {
	prefix := module + "/"
	var out []edge
	for _, p := range pkgs {
		from, ok := strings.CutPrefix(p.ImportPath, prefix)
		if !ok {
			continue
		}
		seen := map[string]bool{}
		add := func(imps []string, test bool) {
			for _, imp := range imps {
				to, ok := strings.CutPrefix(imp, prefix)
				if !ok || to == from || seen[to] {
					continue
				}
				seen[to] = true
				out = append(out, edge{from, to, test})
			}
		}
		add(p.Imports, false)
		add(slices.Concat(p.TestImports, p.XTestImports), true)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].from != out[j].from {
			return out[i].from < out[j].from
		}
		return out[i].to < out[j].to
	})
	return out
}

// room is the top-level folder of a package path.
func room(path string) string {
	r, _, _ := strings.Cut(path, "/")
	return r
}

// violations says, for each edge that breaks the rules, which and why.
func violations(es []edge) []string {
	var out []string
	for _, e := range es {
		from, to := room(e.from), room(e.to)
		allowed, known := rooms[from]
		kind := "imports"
		if e.test {
			kind = "imports in its tests"
		}
		switch {
		case !known:
			out = append(out, fmt.Sprintf("%s is in no room of the house (%s); the top level is fixed", e.from, roomNames()))
		case from == to:
		case to == "cmd":
			out = append(out, fmt.Sprintf("%s %s %s: nothing imports cmd", e.from, kind, e.to))
		case !slices.Contains(allowed, to):
			may := "nothing of ours outside itself"
			if len(allowed) > 0 {
				may = strings.Join(allowed, ", ")
			}
			out = append(out, fmt.Sprintf("%s %s %s: %s may import %s", e.from, kind, e.to, from, may))
		}
	}
	return out
}

func roomNames() string {
	var names []string
	for r := range rooms {
		names = append(names, r)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// TestImportGraph fails naming every import, in production or test code,
// that breaks the house's rules (docs/architecture.md). With -v it prints
// the graph: one line per package, its imports of ours, then those only
// its tests add.
func TestImportGraph(t *testing.T) {
	module, pkgs := goList(t)
	es := edges(module, pkgs)
	for _, v := range violations(es) {
		t.Error(v)
	}
	if testing.Verbose() {
		t.Log("\n" + graph(module, pkgs, es))
	}
}

// graph writes one line per package: "pkg → imports | tests: imports".
func graph(module string, pkgs map[string]*pkg, es []edge) string {
	prod, test := map[string][]string{}, map[string][]string{}
	for _, e := range es {
		if e.test {
			test[e.from] = append(test[e.from], e.to)
		} else {
			prod[e.from] = append(prod[e.from], e.to)
		}
	}
	var names []string
	for p := range pkgs {
		if n, ok := strings.CutPrefix(p, module+"/"); ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s → %s", n, orNothing(prod[n]))
		if len(test[n]) > 0 {
			fmt.Fprintf(&b, " | tests: %s", strings.Join(test[n], ", "))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func orNothing(list []string) string {
	if len(list) == 0 {
		return "(nothing of ours)"
	}
	return strings.Join(list, ", ")
}

// TestViolationsNameTheEdge: the checker itself catches each kind of
// broken rule, in production and in test code, and lets the allowed
// arrows pass.
func TestViolationsNameTheEdge(t *testing.T) {
	got := violations([]edge{
		{"cmd/npcorch", "tasks/campaign", false},
		{"tasks/campaign", "launcher/slurm", false},
		{"tasks/synth", "imaging", false},
		{"scripts/chaos", "tasks/campaign", true},
		{"gpu", "gpu/nvml", true},
		{"imaging/prep", "tasks/dataset", false},
		{"launcher/slurm", "tasks/campaign", true},
		{"tasks/campaign", "scripts/chaos/trial", true},
		{"configs", "gpu", false},
		{"gpu/nvml", "launcher", false},
		{"scripts/bench", "cmd/npcorch", false},
		{"cmd/npcorch", "scripts/chaos", false},
		{"attic/old", "tasks", false},
	})
	want := []string{
		"imaging/prep imports tasks/dataset: imaging may import nothing of ours outside itself",
		"launcher/slurm imports in its tests tasks/campaign: launcher may import configs, gpu",
		"tasks/campaign imports in its tests scripts/chaos/trial: tasks may import launcher, imaging, gpu, configs",
		"configs imports gpu: configs may import nothing of ours outside itself",
		"gpu/nvml imports launcher: gpu may import nothing of ours outside itself",
		"scripts/bench imports cmd/npcorch: nothing imports cmd",
		"cmd/npcorch imports scripts/chaos: cmd may import tasks, launcher, imaging, gpu, configs",
		"attic/old is in no room of the house (cmd, configs, gpu, imaging, launcher, scripts, tasks); the top level is fixed",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
