package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/tasks/score"
)

// scoredRun writes a fixture run under a fresh directory named name and
// returns its path.
func scoredRun(t *testing.T, name string, o runOptions) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeRun(t, dir, o)
	return dir
}

func readCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []map[string]string
	for _, r := range rows[1:] {
		m := map[string]string{}
		for i, h := range rows[0] {
			m[h] = r[i]
		}
		out = append(out, m)
	}
	return out
}

func find(rows []map[string]string, kv ...string) map[string]string {
	for _, r := range rows {
		ok := true
		for i := 0; i < len(kv); i += 2 {
			ok = ok && r[kv[i]] == kv[i+1]
		}
		if ok {
			return r
		}
	}
	return nil
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTable1HandWorked checks the cross-model table against the scores
// worked out by hand in fixture_test.go.
func TestTable1HandWorked(t *testing.T) {
	run := scoredRun(t, "run1", runOptions{gpu: true})
	out := filepath.Join(t.TempDir(), "out")
	if err := Write(testRegistry(), run, nil, out); err != nil {
		t.Fatal(err)
	}
	rows := readCSV(t, filepath.Join(out, Table1CSV))
	cp34, _ := score.ClopperPearson(3, 4, 0.95)
	cp13, _ := score.ClopperPearson(1, 3, 0.95)
	cases := []struct {
		model, column, percent, num, den, method, provisional string
	}{
		{"alpha", "Path.", "75.0000", "3.0000", "4", score.MethodClopperPearson, "false"},
		{"alpha", "T-Stg.", "66.6667", "4.0000", "6", score.MethodClopperPearson, "false"},
		{"alpha", "N-Stg.", "75.0000", "3.0000", "4", score.MethodClopperPearson, "false"},
		{"alpha", "Seq.", "100.0000", "3.0000", "3", score.MethodBootstrap, "false"},
		{"alpha", "Struct.", "94.4444", "34.0000", "36", score.MethodBootstrap, "false"},
		{"alpha", "Care", "75.0000", "3.0000", "4", score.MethodBootstrap, "false"},
		{"alpha", "Strict", "33.3333", "1.0000", "3", score.MethodClopperPearson, "false"},
		{"beta", "Path.", "75.0000", "3.0000", "4", score.MethodClopperPearson, "false"},
		{"beta", "T-Stg.", "50.0000", "3.0000", "6", score.MethodClopperPearson, "false"},
		{"beta", "N-Stg.", "50.0000", "2.0000", "4", score.MethodClopperPearson, "false"},
		{"beta", "Seq.", "50.0000", "1.0000", "2", score.MethodBootstrap, "true"},
		{"beta", "Struct.", "100.0000", "36.0000", "36", score.MethodBootstrap, "false"},
		{"beta", "Care", "75.0000", "3.0000", "4", score.MethodBootstrap, "false"},
		{"beta", "Strict", "0.0000", "0.0000", "3", score.MethodClopperPearson, "false"},
	}
	for _, c := range cases {
		r := find(rows, "model", c.model, "column", c.column)
		if r == nil {
			t.Errorf("%s %s: no row in table1.csv", c.model, c.column)
			continue
		}
		if r["percent"] != c.percent || r["numerator"] != c.num || r["denominator"] != c.den || r["interval"] != c.method || r["provisional"] != c.provisional {
			t.Errorf("%s %s = %v, want percent %s (%s/%s) %s provisional %s", c.model, c.column, r, c.percent, c.num, c.den, c.method, c.provisional)
		}
	}
	if r := find(rows, "model", "alpha", "column", "Path."); r["lower"] != f4(cp34.Lower) || r["upper"] != f4(cp34.Upper) {
		t.Errorf("alpha Path. interval %s–%s, want Clopper–Pearson 3/4 %s–%s", r["lower"], r["upper"], f4(cp34.Lower), f4(cp34.Upper))
	}
	if r := find(rows, "model", "alpha", "column", "Strict"); r["lower"] != f4(cp13.Lower) || r["upper"] != f4(cp13.Upper) {
		t.Errorf("alpha Strict interval %s–%s, want Clopper–Pearson 1/3 %s–%s", r["lower"], r["upper"], f4(cp13.Lower), f4(cp13.Upper))
	}
	// Majority baselines of the cohort: pathology 1 in 3 of 4, T3 in 3 of 6, N1 in 2 of 4.
	for col, want := range map[string]string{"Path.": "75.0000", "T-Stg.": "50.0000", "N-Stg.": "50.0000", "Care": ""} {
		if r := find(rows, "model", "alpha", "column", col); r["majority_baseline"] != want {
			t.Errorf("%s majority baseline = %q, want %q", col, r["majority_baseline"], want)
		}
	}

	md := readFile(t, filepath.Join(out, Table1Markdown))
	for _, want := range []string{
		"| alpha | 75.0 [" + pct(cp34.Lower) + "–" + pct(cp34.Upper) + "] |",
		"| 33.3 [" + pct(cp13.Lower) + "–" + pct(cp13.Upper) + "] |",
		"| majority baseline (this cohort) | 75.0 (1, 3/4) | 50.0 (T3, 3/6) | 50.0 (N1, 2/4) |",
		"L3 Path. | L3 T-Stg. | L3 N-Stg. | L3 Seq. | L3 Struct. | L6 Care | L6 Strict |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("table1.md lacks %q:\n%s", want, md)
		}
	}
	// beta's sequence score is provisional: one request was never answered.
	if !strings.Contains(md, "| beta |") || !regexpContains(md, `\| 50\.0 \[[0-9.]+–[0-9.]+\]\\\* \|`) {
		t.Errorf("table1.md does not mark beta's Seq. provisional:\n%s", md)
	}

	var tj struct {
		Format string     `json:"format"`
		Rows   []TableRow `json:"rows"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(out, Table1JSON))), &tj); err != nil {
		t.Fatal(err)
	}
	if tj.Format != Table1Format || len(tj.Rows) != 2 || tj.Rows[1].Model != "beta" || tj.Rows[1].NotRun != 1 || !tj.Rows[1].Cells[3].Provisional {
		t.Errorf("table1.json = %+v", tj)
	}
}

// TestDetailHandWorked checks confusion matrices, intersections, failed
// extractions, slowest and not-run items.
func TestDetailHandWorked(t *testing.T) {
	run := scoredRun(t, "run1", runOptions{gpu: true})
	out := filepath.Join(t.TempDir(), "out")
	if err := Write(testRegistry(), run, nil, out); err != nil {
		t.Fatal(err)
	}
	var dj struct {
		Models []ModelDetail `json:"models"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(out, DetailJSON))), &dj); err != nil {
		t.Fatal(err)
	}
	if len(dj.Models) != 2 {
		t.Fatalf("detail.json has %d models, want 2", len(dj.Models))
	}
	alpha, beta := dj.Models[0], dj.Models[1]
	if in := alpha.Scores.CarePath.Intersections; in.N11 != 1 || in.N10 != 1 || in.N01 != 1 || in.N00 != 0 {
		t.Errorf("alpha intersections = %+v, want n11=1 n10=1 n01=1 n00=0", in)
	}
	if in := beta.Scores.CarePath.Intersections; in.N11 != 0 || in.N10 != 2 || in.N01 != 1 || in.N00 != 0 {
		t.Errorf("beta intersections = %+v, want n11=0 n10=2 n01=1 n00=0", in)
	}
	// The 10 slowest of alpha: card items are the most numerous task, so
	// the slowest are its last cards (E2E grows with the index in a task).
	if len(alpha.Slowest) != SlowestItems || alpha.Slowest[0].Task != "card" || alpha.Slowest[0].E2Ems < alpha.Slowest[SlowestItems-1].E2Ems {
		t.Errorf("alpha slowest = %+v", alpha.Slowest)
	}
	if len(alpha.NotRun) != 0 || len(beta.NotRun) != 1 {
		t.Fatalf("not-run items: alpha %d, beta %d; want 0 and 1", len(alpha.NotRun), len(beta.NotRun))
	}
	nr := beta.NotRun[0]
	if nr.Item != "sequence/P1/T1_Ax" || nr.Attempts != 2 || len(nr.Failures) != 2 || !strings.HasPrefix(nr.Failures[0], "connect:") {
		t.Errorf("beta not-run = %+v", nr)
	}
	kinds := map[string]int{}
	for _, e := range alpha.Extraction {
		for _, f := range e.Failures {
			kinds[e.Task+"/"+string(f.Kind)] += f.Count
		}
	}
	if kinds["card structure/unparseable"] != 1 || kinds["card invasion/unparseable"] != 1 || len(kinds) != 2 {
		t.Errorf("alpha failed extractions = %v, want one unparseable card (structure and invasion)", kinds)
	}

	md := readFile(t, filepath.Join(out, DetailMarkdown))
	for _, want := range []string{
		"## alpha", "## beta",
		// alpha pathology: gold 0 answered 0 once; gold 1 answered 0 once and 1 twice.
		"| gold \\ answer | 0 | 1 | invalid |\n|---|---:|---:|---:|\n| 0 | 1 | 0 | 0 |\n| 1 | 1 | 2 | 0 |",
		"| all care right | n11 = 1 | n10 = 1 |", "| some care wrong | n01 = 1 | n00 = 0 |",
		"| Structure | 94.4 [", "| 34 / 36 |",
		"| sequence/P1/T1_Ax | sequence | P1 | 0 | 2 | connect: dial tcp 127.0.0.1:8001: connection refused; first_token_timeout: no chunk in 300s |",
		"| card structure | unparseable | 1 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("detail.md lacks %q", want)
		}
	}
	// Per-class recall of alpha's N stage: N0 1/1, N1 1/2, N2 1/1, N3 no support.
	if !strings.Contains(md, "| N1 | 2 | 1 | 1 | 0 | 1 | 50.0 | 100.0 | 66.7 |") || !strings.Contains(md, "| N3 | 0 | 0 | 0 | 0 | 0 | – | – | – |") {
		t.Errorf("detail.md lacks alpha's N-stage class rows")
	}
}

// TestCostHandWorked checks tokens, latency percentiles and GPU cost.
func TestCostHandWorked(t *testing.T) {
	run := scoredRun(t, "run1", runOptions{gpu: true})
	out := filepath.Join(t.TempDir(), "out")
	if err := Write(testRegistry(), run, nil, out); err != nil {
		t.Fatal(err)
	}
	rows := readCSV(t, filepath.Join(out, CostCSV))
	// alpha's four pathology requests: TTFT 100, 200, 300, 400 ms.
	// p50 = 250, p90 = 300 + 0.7·100 = 370, p99 = 300 + 0.97·100 = 397.
	r := find(rows, "model", "alpha", "task", "pathology")
	want := map[string]string{"requests": "4", "answered": "4", "not_run": "0", "prompt_tokens": "4000", "completion_tokens": "200",
		"cached_tokens": "800", "work_tokens": "3400", "ttft_p50_ms": "250.0000", "ttft_p90_ms": "370.0000", "ttft_p99_ms": "397.0000",
		"tpot_p50_ms": "20.0000", "gpu_seconds": ""}
	for k, v := range want {
		if r[k] != v {
			t.Errorf("alpha pathology %s = %q, want %q", k, r[k], v)
		}
	}
	// alpha holds GPUs 0 and 1 for 10 s; 10 ticks × 2 GPUs × 100 J = 2000 J.
	if r := find(rows, "model", "alpha", "task", AllTasks); r["gpu_seconds"] != "20.0000" || r["energy_wh"] != f4(2000.0/3600) {
		t.Errorf("alpha total GPU cost = %s s, %s Wh; want 20 s, %s Wh", r["gpu_seconds"], r["energy_wh"], f4(2000.0/3600))
	}
	if r := find(rows, "model", "beta", "task", AllTasks); r["gpu_seconds"] != notMeasured || r["energy_wh"] != notMeasured {
		t.Errorf("beta has no span: GPU cost = %q, %q; want %q", r["gpu_seconds"], r["energy_wh"], notMeasured)
	}
	// beta's sequence: one not-run request with two attempts, two answered.
	if r := find(rows, "model", "beta", "task", "sequence"); r["requests"] != "3" || r["not_run"] != "1" || r["attempts"] != "4" || r["prompt_tokens"] != "2000" {
		t.Errorf("beta sequence cost = %v", r)
	}
	md := readFile(t, filepath.Join(out, CostMarkdown))
	if !strings.Contains(md, "| alpha | 1 | 20 | 0.01 | 0.56 | 50.0 | 40.0 |") {
		t.Errorf("cost.md lacks alpha's GPU row:\n%s", md)
	}
	if !strings.Contains(md, "| beta | 0 | not measured | not measured | not measured | not measured | not measured |") {
		t.Errorf("cost.md lacks beta's unmeasured GPU row:\n%s", md)
	}
	for _, f := range []string{"gpu_utilization.json", "gpu_timeline.png"} {
		if _, err := os.Stat(filepath.Join(out, GPUDir, f)); err != nil {
			t.Errorf("GPU report: %v", err)
		}
	}
}

// TestCostWithoutCachedTokens: an engine that reported no cached tokens
// (vLLM without --enable-prompt-tokens-details) leaves cached and work
// tokens "not reported" in every cost table, never 0 cached and work
// tokens equal to prompt plus completion.
func TestCostWithoutCachedTokens(t *testing.T) {
	run := scoredRun(t, "run1", runOptions{noCachedTokens: true})
	out := filepath.Join(t.TempDir(), "out")
	if err := Write(testRegistry(), run, nil, out); err != nil {
		t.Fatal(err)
	}
	r := find(readCSV(t, filepath.Join(out, CostCSV)), "model", "alpha", "task", "pathology")
	if r["cached_tokens"] != notReported || r["work_tokens"] != notReported || r["prompt_tokens"] != "4000" {
		t.Errorf("alpha pathology: cached %q, work %q, prompt %q; want %q, %q, 4000", r["cached_tokens"], r["work_tokens"], r["prompt_tokens"], notReported, notReported)
	}
	var cj struct {
		Tasks []TaskCost `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(out, CostJSON))), &cj); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cj.Tasks {
		if tc.CachedTokens != nil || tc.WorkTokens != nil {
			t.Errorf("%s/%s: cached %v, work %v in cost.json; want null", tc.Model, tc.Task, tc.CachedTokens, tc.WorkTokens)
		}
	}
	if md := readFile(t, filepath.Join(out, CostMarkdown)); !strings.Contains(md, "| not reported | not reported |") {
		t.Errorf("cost.md does not say the cached tokens were not reported:\n%s", md)
	}
}

// TestMissingGPU: a run without the sampler reports "not measured", never 0.
func TestMissingGPU(t *testing.T) {
	run := scoredRun(t, "run1", runOptions{})
	out := filepath.Join(t.TempDir(), "out")
	if err := Write(testRegistry(), run, nil, out); err != nil {
		t.Fatal(err)
	}
	var cj struct {
		GPU []GPUCost `json:"gpu"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(out, CostJSON))), &cj); err != nil {
		t.Fatal(err)
	}
	if len(cj.GPU) != 2 {
		t.Fatalf("cost.json gpu rows = %d, want 2", len(cj.GPU))
	}
	for _, g := range cj.GPU {
		if g.GPUSeconds != nil || g.EnergyWh != nil {
			t.Errorf("%s: GPU cost %v s %v Wh without a sampler; want null", g.Model, g.GPUSeconds, g.EnergyWh)
		}
	}
	for _, r := range readCSV(t, filepath.Join(out, CostCSV)) {
		if r["task"] == AllTasks && (r["gpu_seconds"] != notMeasured || r["energy_wh"] != notMeasured) {
			t.Errorf("%s: cost.csv GPU cells %q %q, want %q", r["model"], r["gpu_seconds"], r["energy_wh"], notMeasured)
		}
	}
	html := readFile(t, filepath.Join(out, HTMLFile))
	if !strings.Contains(html, "GPU utilization timeline: not measured") {
		t.Error("report.html does not say the GPU timeline was not measured")
	}
	if _, err := os.Stat(filepath.Join(out, GPUDir)); err == nil {
		t.Error("a gpu/ report was written without samples")
	}
	// Reporting a run with samples and then one without into the same
	// directory leaves no GPU timeline behind.
	withGPU := scoredRun(t, "run2", runOptions{gpu: true})
	if err := Write(testRegistry(), withGPU, nil, out); err != nil {
		t.Fatal(err)
	}
	if err := Write(testRegistry(), run, nil, out); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(out, PlotsDir, "gpu_timeline.png"), filepath.Join(out, GPUDir, "gpu_utilization.json")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("stale %s left from the earlier report", p)
		}
	}
}

// TestCompare puts two runs side by side: alpha answers P3's pathology
// right in the second run (Path. 75 → 100), beta is unchanged.
func TestCompare(t *testing.T) {
	base := scoredRun(t, "base", runOptions{gpu: true})
	other := scoredRun(t, "fixed", runOptions{alpha: map[string]string{"pathology/P3": "1"}})
	out := filepath.Join(t.TempDir(), "out")
	if err := Write(testRegistry(), base, []string{other}, out); err != nil {
		t.Fatal(err)
	}
	rows := readCSV(t, filepath.Join(out, Table1CSV))
	r := find(rows, "model", "alpha", "run", "fixed", "column", "Path.")
	if r == nil || r["percent"] != "100.0000" || r["delta_pp"] != "25.0000" || r["differs"] != "true" {
		t.Errorf("alpha Path. in the compared run = %v; want 100 %%, +25 pp, differs", r)
	}
	if r := find(rows, "model", "alpha", "run", "base", "column", "Path."); r["delta_pp"] != "" || r["differs"] != "false" {
		t.Errorf("base row carries a difference: %v", r)
	}
	for _, col := range []string{"Path.", "T-Stg.", "Seq.", "Care", "Strict"} {
		if r := find(rows, "model", "beta", "run", "fixed", "column", col); r == nil || r["differs"] != "false" || r["delta_pp"] != "0.0000" {
			t.Errorf("beta %s unchanged but marked %v", col, r)
		}
	}
	md := readFile(t, filepath.Join(out, Table1Markdown))
	if !strings.Contains(md, "| Model | Run | L3 Path.") || !strings.Contains(md, "| alpha | fixed | **100.0 [") || !strings.Contains(md, "(+25.0)**") {
		t.Errorf("table1.md does not show the runs side by side with the difference marked:\n%s", md)
	}
	var tj Table
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(out, Table1JSON))), &tj); err != nil {
		t.Fatal(err)
	}
	if len(tj.Rows) != 4 || tj.Rows[0].Run != "base" || tj.Rows[1].Run != "fixed" || tj.Rows[1].Model != "alpha" || !tj.Rows[0].Base || tj.Rows[1].Base {
		t.Errorf("compared rows are not model × run: %+v", tj.Rows)
	}
	html := readFile(t, filepath.Join(out, HTMLFile))
	if !strings.Contains(html, `class="num up"`) {
		t.Error("report.html does not shade the improved cell")
	}
}

// TestSameRunTwiceDistinctNames: comparing a run with a copy of the same
// name tells them apart and marks nothing.
func TestSameRunTwiceDistinctNames(t *testing.T) {
	a := scoredRun(t, "run", runOptions{})
	b := scoredRun(t, "run", runOptions{})
	out := filepath.Join(t.TempDir(), "out")
	if err := Write(testRegistry(), a, []string{b}, out); err != nil {
		t.Fatal(err)
	}
	for _, r := range readCSV(t, filepath.Join(out, Table1CSV)) {
		if r["differs"] == "true" || r["disjoint"] == "true" {
			t.Errorf("identical runs marked different: %v", r)
		}
		if r["run"] != "run" && r["run"] != "run#2" {
			t.Errorf("run name %q, want run or run#2", r["run"])
		}
	}
}

// TestDeterministic: the same inputs give the same bytes in every file.
func TestDeterministic(t *testing.T) {
	base := scoredRun(t, "base", runOptions{gpu: true})
	other := scoredRun(t, "other", runOptions{alpha: map[string]string{"n_groups/P3": `{"n_stage":"N1"}`}})
	outs := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}
	for _, out := range outs {
		if err := Write(testRegistry(), base, []string{other}, out); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string][]byte{}
	err := filepath.WalkDir(outs[0], func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(outs[0], p)
		files[rel], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 15 {
		t.Errorf("only %d files written", len(files))
	}
	for rel, want := range files {
		got, err := os.ReadFile(filepath.Join(outs[1], rel))
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs between two reports of the same runs", rel)
		}
	}
}

// TestHTMLSelfContained: one page, no network, every plot inlined.
func TestHTMLSelfContained(t *testing.T) {
	run := scoredRun(t, "run1", runOptions{gpu: true})
	out := filepath.Join(t.TempDir(), "out")
	if err := Write(testRegistry(), run, nil, out); err != nil {
		t.Fatal(err)
	}
	html := readFile(t, filepath.Join(out, HTMLFile))
	for _, bad := range []string{"http://", "https://", "<script", "<link", "@import"} {
		if strings.Contains(html, bad) {
			t.Errorf("report.html contains %q: it must need no network", bad)
		}
	}
	pngs, err := filepath.Glob(filepath.Join(out, PlotsDir, "*.png"))
	if err != nil {
		t.Fatal(err)
	}
	// 7 Table 1 columns, CarePath, 3 recall plots, GPU timeline.
	if len(pngs) != 12 {
		t.Errorf("%d plots written, want 12: %v", len(pngs), pngs)
	}
	if n := strings.Count(html, `src="data:image/png;base64,`); n != len(pngs) {
		t.Errorf("report.html inlines %d images, want %d", n, len(pngs))
	}
	for _, want := range []string{"<h2 id=\"table1\">Table 1</h2>", "<h3 id=\"model-alpha\">alpha</h3>", "n11 = 1", "not measured"} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// TestLoadRunErrors: a run without scores.json says what to do; a damaged
// sample log keeps the samples before the damage.
func TestLoadRunErrors(t *testing.T) {
	empty := t.TempDir()
	if err := Write(testRegistry(), empty, nil, ""); err == nil || !strings.Contains(err.Error(), "npcorch score --run") {
		t.Errorf("run without scores.json: err = %v, want a hint to run npcorch score", err)
	}
	run := scoredRun(t, "run1", runOptions{gpu: true})
	f, err := os.OpenFile(filepath.Join(run, SamplesFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"time":"2026-01-01T00:00:21Z","gpus":[{"gpu":0,`)
	f.Close()
	r, err := LoadRun(run)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Samples) != 21 || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "damaged after 21 samples") {
		t.Errorf("damaged sample log: %d samples, notes %q", len(r.Samples), r.Notes)
	}
	if err := os.WriteFile(filepath.Join(run, SpansFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadRun(run); err == nil || !strings.Contains(err.Error(), "spans.json") {
		t.Errorf("broken spans.json: err = %v", err)
	}
	if err := os.WriteFile(filepath.Join(run, ScoresFile), []byte(`{"format":"other/9"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadRun(run); err == nil || !strings.Contains(err.Error(), "other/9") {
		t.Errorf("foreign scores.json: err = %v", err)
	}
	// The default output directory is RUN/report.
	run2 := scoredRun(t, "run2", runOptions{})
	if err := Write(testRegistry(), run2, nil, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(run2, "report", HTMLFile)); err != nil {
		t.Errorf("default output: %v", err)
	}
}

func TestPercentiles(t *testing.T) {
	p := percentiles([]float64{400, 100, 300, 200})
	if *p.P50 != 250 || math.Abs(*p.P90-370) > 1e-9 || math.Abs(*p.P99-397) > 1e-9 || p.N != 4 {
		t.Errorf("percentiles = %v %v %v", *p.P50, *p.P90, *p.P99)
	}
	if one := percentiles([]float64{7}); *one.P50 != 7 || *one.P99 != 7 {
		t.Errorf("one value: %v", one)
	}
	if none := percentiles(nil); none.P50 != nil || none.N != 0 {
		t.Errorf("no values: %+v", none)
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := count(n); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{"T-Stg.": "t_stg", "Path.": "path", "Struct.": "struct", "Care": "care"} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func regexpContains(s, expr string) bool { return regexp.MustCompile(expr).MatchString(s) }

// TestCostShowsMeasuredSpeeds: a run's speeds.json (issue 17.2) appears
// in cost.md, cost.json and the HTML page, per model and replica; a
// damaged one is a note, and a run without one shows no speed table.
func TestCostShowsMeasuredSpeeds(t *testing.T) {
	run := scoredRun(t, "run1", runOptions{})
	speeds := `{"node":{"factor":0.8,"log_sd":0.2},"models":[{"model":"alpha","registry_tokens_per_s":1000,"tokens_per_s":511,
"factor":0.511,"factor_low":0.43,"factor_high":0.61,"log_sd":0.09,"samples":2,"informative":2,"seconds":600,"work":300000,
"images":1200,"ttft_s":0.4,"replicas":[{"replica":1,"tp":2,"gpus":[0,1],"samples":2,"seconds":600,"tokens_per_s":500,"images_per_s":2,"ttft_s":0.4}]}]}`
	if err := os.WriteFile(filepath.Join(run, "speeds.json"), []byte(speeds), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if err := Write(testRegistry(), run, nil, out); err != nil {
		t.Fatal(err)
	}
	md := readFile(t, filepath.Join(out, CostMarkdown))
	for _, want := range []string{"Measured engine speeds", "| alpha | 2 | 600 | 1000 | 511 | 0.51× (0.43–0.61) | 2.0 | 0.40 |",
		"| alpha, replica 1 (TP2) | 2 | 600 |  | 500 |  | 2.0 | 0.40 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("cost.md lacks %q:\n%s", want, md)
		}
	}
	var cj struct {
		Speeds []SpeedCost `json:"speeds"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(out, CostJSON))), &cj); err != nil {
		t.Fatal(err)
	}
	if len(cj.Speeds) != 1 || cj.Speeds[0].Run != "run1" || cj.Speeds[0].TokensPerS != 511 || len(cj.Speeds[0].Replicas) != 1 {
		t.Errorf("cost.json speeds %+v", cj.Speeds)
	}
	if html := readFile(t, filepath.Join(out, HTMLFile)); !strings.Contains(html, "Measured engine speeds") {
		t.Error("report.html lacks the measured speeds")
	}
	if err := os.WriteFile(filepath.Join(run, "speeds.json"), []byte(speeds[:40]), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(testRegistry(), run, nil, out); err != nil {
		t.Fatalf("a damaged speeds.json failed the report: %v", err)
	}
	if md := readFile(t, filepath.Join(out, CostMarkdown)); strings.Contains(md, "Measured engine speeds") {
		t.Error("cost.md shows speeds from a damaged file")
	}
	if html := readFile(t, filepath.Join(out, HTMLFile)); !strings.Contains(html, "speeds.json") {
		t.Error("the report does not say the speeds file is damaged")
	}
}
