package archtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// fileCyclesAllowed are the circles of files, inside one package of
// tasks/, that are known and kept (each with why); the test fails on any
// other and on one listed here that is gone. None is kept today: a new
// circle is cut, or listed here with the reason it must stay.
var fileCyclesAllowed = map[string]string{}

// listed is what `go list -export -deps -json` says of one package that
// the file graph needs.
type listed struct {
	ImportPath string
	Dir        string
	Export     string
	GoFiles    []string
	CgoFiles   []string
	Module     *struct{ Path string }
	ImportMap  map[string]string
}

// fileArrows returns, for each production package of ours under tasks/,
// which of its files use a name (a package-level name, a method or a
// field) declared in which other of its files.
func fileArrows(t *testing.T) map[string]map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-export", "-deps", "-json", "./tasks/...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v\n%s", err, stderr.String())
	}
	exports := map[string]string{}
	var ours []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		exports[p.ImportPath] = p.Export
		if p.Module != nil && p.Module.Path == "github.com/npcorch/npcorch" && strings.Contains(p.ImportPath, "/tasks") && len(p.CgoFiles) == 0 {
			ours = append(ours, p)
		}
	}
	graphs := map[string]map[string][]string{}
	for _, p := range ours {
		g, err := filesOf(p, exports)
		if err != nil {
			t.Fatalf("%s: %v", p.ImportPath, err)
		}
		graphs[strings.TrimPrefix(p.ImportPath, "github.com/npcorch/npcorch/")] = g
	}
	return graphs
}

// filesOf type-checks one package from its sources, its imports from
// their export data, and returns its file → files arrows.
func filesOf(p listed, exports map[string]string) (map[string][]string, error) {
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	lookup := func(path string) (io.ReadCloser, error) {
		if real, ok := p.ImportMap[path]; ok {
			path = real
		}
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", lookup)}
	pkg, err := conf.Check(p.ImportPath, fset, files, info)
	if err != nil {
		return nil, err
	}
	fileOf := func(pos token.Pos) string { return filepath.Base(fset.Position(pos).Filename) }
	arrows := map[string]map[string]bool{}
	for id, obj := range info.Uses {
		if obj.Pkg() != pkg || !obj.Pos().IsValid() {
			continue
		}
		if obj.Parent() != pkg.Scope() {
			// only methods and fields beside package-level names
			if fn, ok := obj.(*types.Func); !ok || fn.Type().(*types.Signature).Recv() == nil {
				if v, ok := obj.(*types.Var); !ok || !v.IsField() {
					continue
				}
			}
		}
		from, to := fileOf(id.Pos()), fileOf(obj.Pos())
		if from == to {
			continue
		}
		if arrows[from] == nil {
			arrows[from] = map[string]bool{}
		}
		arrows[from][to] = true
	}
	out := map[string][]string{}
	for from, tos := range arrows {
		for to := range tos {
			out[from] = append(out[from], to)
		}
		sort.Strings(out[from])
	}
	return out, nil
}

// cycles returns the circles of a file graph: each strongly connected set
// of more than one file, sorted, joined by " ↔ ".
func cycles(g map[string][]string) []string {
	var nodes []string
	seen := map[string]bool{}
	for from, tos := range g {
		for _, n := range append([]string{from}, tos...) {
			if !seen[n] {
				seen[n] = true
				nodes = append(nodes, n)
			}
		}
	}
	sort.Strings(nodes)
	// Tarjan's strongly connected components.
	index, low, onStack := map[string]int{}, map[string]int{}, map[string]bool{}
	var stack, out []string
	next := 0
	var visit func(n string)
	visit = func(n string) {
		index[n], low[n] = next, next
		next++
		stack = append(stack, n)
		onStack[n] = true
		for _, m := range g[n] {
			if _, done := index[m]; !done {
				visit(m)
				low[n] = min(low[n], low[m])
			} else if onStack[m] {
				low[n] = min(low[n], index[m])
			}
		}
		if low[n] != index[n] {
			return
		}
		var comp []string
		for {
			m := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[m] = false
			comp = append(comp, m)
			if m == n {
				break
			}
		}
		if len(comp) > 1 {
			sort.Strings(comp)
			out = append(out, strings.Join(comp, " ↔ "))
		}
	}
	for _, n := range nodes {
		if _, done := index[n]; !done {
			visit(n)
		}
	}
	sort.Strings(out)
	return out
}

// TestNoFileLeansBack fails naming every circle of files inside a package
// of tasks/: a file that uses names of a file that uses names of it,
// directly or through others. With -v it prints each package's arrows.
func TestNoFileLeansBack(t *testing.T) {
	graphs := fileArrows(t)
	var pkgs []string
	for p := range graphs {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	found := map[string]bool{}
	for _, p := range pkgs {
		n := 0
		for _, tos := range graphs[p] {
			n += len(tos)
		}
		t.Logf("%s: %d files lean on others, %d arrows", p, len(graphs[p]), n)
		for _, c := range cycles(graphs[p]) {
			key := p + ": " + c
			found[key] = true
			if why, ok := fileCyclesAllowed[key]; ok {
				t.Logf("kept circle %s (%s)", key, why)
				continue
			}
			t.Errorf("circle of files in %s: %s", p, c)
		}
	}
	for key := range fileCyclesAllowed {
		if !found[key] {
			t.Errorf("the kept circle %s is gone: take it off fileCyclesAllowed", key)
		}
	}
	if len(graphs) < 10 {
		t.Errorf("read %d packages under tasks/; want them all", len(graphs))
	}
}

// TestCyclesOnASyntheticGraph: the circle finder catches a direct
// lean-back, a longer circle and two at once, and passes a one-way graph.
func TestCyclesOnASyntheticGraph(t *testing.T) {
	for _, c := range []struct {
		g    map[string][]string
		want []string
	}{
		{map[string][]string{"a.go": {"b.go"}, "b.go": {"c.go"}}, nil},
		{map[string][]string{"a.go": {"b.go"}, "b.go": {"a.go"}}, []string{"a.go ↔ b.go"}},
		{map[string][]string{"a.go": {"b.go"}, "b.go": {"c.go"}, "c.go": {"a.go"}, "d.go": {"a.go"}}, []string{"a.go ↔ b.go ↔ c.go"}},
		{map[string][]string{"a.go": {"b.go"}, "b.go": {"a.go"}, "x.go": {"y.go"}, "y.go": {"x.go", "a.go"}}, []string{"a.go ↔ b.go", "x.go ↔ y.go"}},
	} {
		if got := cycles(c.g); !slices.Equal(got, c.want) {
			t.Errorf("cycles(%v) = %q, want %q", c.g, got, c.want)
		}
	}
}
