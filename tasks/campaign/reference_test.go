package campaign

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
)

// referenceDoc is the campaign file reference this test keeps honest.
const referenceDoc = "../../docs/campaign.md"

// docRow is one field of the reference: `path` | type | default | meaning.
type docRow struct {
	typ, def, meaning string
	line              int
}

// literal is the row's default when it is one value in backticks ("`10s`"),
// and "" when the default is words ("the planner's choice").
func (r docRow) literal() (string, bool) {
	d := strings.TrimSpace(r.def)
	if len(d) > 2 && strings.HasPrefix(d, "`") && strings.HasSuffix(d, "`") && strings.Count(d, "`") == 2 {
		return d[1 : len(d)-1], true
	}
	return "", false
}

var docRowPattern = regexp.MustCompile("^\\| `([a-z_\\[\\]A-Z.]+)` \\| ([^|]+) \\| ([^|]+) \\| (.+) \\|$")

// readReference returns the field rows of docs/campaign.md by path.
func readReference(t *testing.T) map[string]docRow {
	t.Helper()
	b, err := os.ReadFile(referenceDoc)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]docRow{}
	for i, line := range strings.Split(string(b), "\n") {
		m := docRowPattern.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if _, dup := rows[m[1]]; dup {
			t.Errorf("%s:%d: %s is documented twice", referenceDoc, i+1, m[1])
		}
		rows[m[1]] = docRow{typ: strings.TrimSpace(m[2]), def: m[3], meaning: m[4], line: i + 1}
	}
	return rows
}

// loaderField is a field the campaign loader accepts: its Go type, and
// whether it is a block of other fields.
type loaderField struct {
	typ   reflect.Type
	block bool
}

var durationType = reflect.TypeFor[time.Duration]()

// loaderFields walks t's yaml tags as the loader decodes them: a model
// entry of `models` is a configs.Model (a registry name or a mapping of
// its fields), and a model's per-task settings are keyed by TASK.
func loaderFields(t reflect.Type, prefix string, out map[string]loaderField) {
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		path, ft := prefix+name, f.Type
		switch {
		case path == "models":
			out[path] = loaderField{typ: ft, block: true}
			loaderFields(reflect.TypeFor[configs.Model](), "models[].", out)
		case ft.Kind() == reflect.Struct && ft != durationType:
			out[path] = loaderField{typ: ft, block: true}
			loaderFields(ft, path+".", out)
		case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
			out[path] = loaderField{typ: ft, block: true}
			loaderFields(ft.Elem(), path+".TASK.", out)
		default:
			out[path] = loaderField{typ: ft}
		}
	}
}

// typeWords are how the reference may name a Go type: the type column
// starts with one of them (units and choices follow in words).
func typeWords(t reflect.Type) []string {
	switch {
	case t == durationType:
		return []string{"duration"}
	case t.Kind() == reflect.Pointer:
		return typeWords(t.Elem())
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return []string{"integer"}
	case reflect.Float64:
		return []string{"number"}
	case reflect.Bool:
		return []string{"boolean"}
	case reflect.Slice:
		return []string{"list"}
	case reflect.Map, reflect.Struct:
		return []string{"mapping"}
	case reflect.String:
		return []string{"string", "path", "one of"}
	}
	return nil
}

// TestCampaignReferenceMatchesTheLoader is issue 12's reference: every
// field the loader accepts is in docs/campaign.md with a type its Go type
// allows, no field there is unknown to the loader, and every default
// written there is the one the code applies (the loader's, the
// launcher's Timing for launch:, the scheduler's for max_start_failures).
// A field with a default in code must write it; one without must not
// pretend to.
func TestCampaignReferenceMatchesTheLoader(t *testing.T) {
	rows := readReference(t)
	fields := map[string]loaderField{}
	loaderFields(reflect.TypeFor[configs.Campaign](), "", fields)
	for path, f := range fields {
		r, ok := rows[path]
		if !ok {
			if !f.block {
				t.Errorf("%s: field %s (%v) is not documented; add a row for it", referenceDoc, path, f.typ)
			}
			continue
		}
		if words := typeWords(f.typ); !slices.ContainsFunc(words, func(w string) bool { return strings.HasPrefix(r.typ, w) }) {
			t.Errorf("%s:%d: %s is a %v; its type column %q should start with one of %q", referenceDoc, r.line, path, f.typ, r.typ, words)
		}
	}
	for path, r := range rows {
		if _, ok := fields[path]; !ok {
			t.Errorf("%s:%d: %s is documented, but the loader has no such field", referenceDoc, r.line, path)
		}
	}
	checkLoaderDefaults(t, rows, fields)
	checkLaunchDefaults(t, rows)
	// Lists of values the code owns, which the reference spells out.
	for path, want := range map[string][]string{
		"tasks":                   taskNames(Benchmark()),
		"node":                    gpu.FakeNodeNames(),
		"media":                   words(configs.MediaModes()...),
		"backend":                 words(configs.BackendLocal, configs.BackendSlurm),
		"models[].engine.kind":    words(configs.EngineVLLM, configs.EngineSGLang, configs.EngineExternal, configs.EngineSim, configs.EngineWrapper),
		"models[].engine.version": {configs.ReferenceVLLM, configs.VLLMAPIServerCount.String(), configs.VLLMPromptTokensDetails.String()},
		"models[].engine.command": {configs.WrapperKeyEnv, configs.WrapperKeyFileEnv},
	} {
		r := rows[path]
		for _, w := range want {
			if !strings.Contains(r.typ+r.def+r.meaning, "`"+w+"`") && !strings.Contains(r.typ+r.def+r.meaning, w) {
				t.Errorf("%s:%d: the row of %s does not name %q", referenceDoc, r.line, path, w)
			}
		}
	}
}

// The campaigns whose loaded values are the defaults: the smallest file
// the loader takes, and the same with the Slurm backend.
const (
	minimalCampaign = "output: o\ndataset: {raw: r, prepared: p}\nmodels:\n  - name: reference-model\n    params_b: 7\n    engine: {kind: sim}\n"
	minimalSlurm    = minimalCampaign + "backend: slurm\n"
)

// setByMinimal are the fields the minimal campaigns give, and derived the
// one whose default is computed (the file's name).
var (
	setByMinimal = []string{"output", "dataset.raw", "dataset.prepared", "models", "models[].name", "models[].params_b", "models[].engine.kind", "backend"}
	derived      = []string{"name"}
)

// checkLoaderDefaults compares each documented default with what the
// loader gives a campaign that leaves the field out.
func checkLoaderDefaults(t *testing.T, rows map[string]docRow, fields map[string]loaderField) {
	t.Helper()
	local, err := configs.ParseCampaign("reference.yaml", t.TempDir(), []byte(minimalCampaign), nil)
	if err != nil {
		t.Fatal(err)
	}
	slurm, err := configs.ParseCampaign("reference.yaml", t.TempDir(), []byte(minimalSlurm), nil)
	if err != nil {
		t.Fatal(err)
	}
	for path, f := range fields {
		r, documented := rows[path]
		if !documented || f.block || strings.HasPrefix(path, "launch.") || strings.Contains(path, ".TASK.") {
			continue
		}
		c := local
		if strings.HasPrefix(path, "slurm.") {
			c = slurm
		}
		got := loadedValue(c, path)
		lit, isLiteral := r.literal()
		switch {
		case isLiteral:
			want := reflect.New(f.typ)
			if err := yaml.Unmarshal([]byte(lit), want.Interface()); err != nil {
				t.Errorf("%s:%d: the default of %s, `%s`, is not a %v: %v", referenceDoc, r.line, path, lit, f.typ, err)
				continue
			}
			if !reflect.DeepEqual(want.Elem().Interface(), got.Interface()) {
				t.Errorf("%s:%d: %s defaults to `%s` there, but the loader gives %v", referenceDoc, r.line, path, lit, got.Interface())
			}
		case !got.IsZero() && !slices.Contains(setByMinimal, path) && !slices.Contains(derived, path):
			t.Errorf("%s:%d: the loader gives %s the default %v, which the reference does not write (%q)", referenceDoc, r.line, path, got.Interface(), r.def)
		}
	}
}

// loadedValue finds a dotted yaml path in a loaded campaign; models[]
// paths read its first resolved model.
func loadedValue(c *configs.Campaign, path string) reflect.Value {
	v := reflect.ValueOf(*c)
	if rest, ok := strings.CutPrefix(path, "models[]."); ok {
		v, path = reflect.ValueOf(c.Resolved[0]), rest
	}
	for name := range strings.SplitSeq(path, ".") {
		v = fieldByTag(v, name)
	}
	return v
}

func fieldByTag(v reflect.Value, name string) reflect.Value {
	for i := range v.NumField() {
		if tag, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ","); tag == name {
			return v.Field(i)
		}
	}
	panic(fmt.Sprintf("%v has no yaml field %s", v.Type(), name))
}

// checkLaunchDefaults proves each launch: default against the code that
// applies it: writing the documented value into a campaign changes
// nothing in the launcher's Timing, and writing another value changes
// something (the field is wired). max_start_failures and
// max_model_restarts are the scheduler's.
func checkLaunchDefaults(t *testing.T, rows map[string]docRow) {
	t.Helper()
	def := launcher.Timing{}.WithDefaults()
	lt := reflect.TypeFor[configs.LaunchSettings]()
	for f := range lt.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		path := "launch." + name
		r, ok := rows[path]
		if !ok {
			continue // reported as undocumented
		}
		lit, isLiteral := r.literal()
		if !isLiteral {
			t.Errorf("%s:%d: %s needs its default written as a value in backticks (the launcher has one)", referenceDoc, r.line, path)
			continue
		}
		var ls configs.LaunchSettings
		if err := yaml.Unmarshal([]byte(name+": "+lit), &ls); err != nil {
			t.Errorf("%s:%d: the default of %s, `%s`: %v", referenceDoc, r.line, path, lit, err)
			continue
		}
		if name == "max_start_failures" {
			if ls.MaxStartFailures != schedule.DefaultMaxStartFailures {
				t.Errorf("%s:%d: %s defaults to `%s` there, but the scheduler gives a model %d failed starts", referenceDoc, r.line, path, lit, schedule.DefaultMaxStartFailures)
			}
			continue
		}
		if name == "max_model_restarts" {
			if ls.MaxModelRestarts != schedule.DefaultMaxModelRestarts {
				t.Errorf("%s:%d: %s defaults to `%s` there, but the scheduler gives a model %d crashes", referenceDoc, r.line, path, lit, schedule.DefaultMaxModelRestarts)
			}
			continue
		}
		if got := (launcher.Timing{}).With(ls).WithDefaults(); got != def {
			t.Errorf("%s:%d: %s defaults to `%s` there, but writing that changes the launcher's timing:\n%+v\nfrom its default\n%+v", referenceDoc, r.line, path, lit, got, def)
		}
		other := reflect.ValueOf(&ls).Elem().FieldByName(f.Name)
		switch v := other.Addr().Interface().(type) {
		case *time.Duration:
			*v = 2**v + time.Second
		case *int:
			*v++
		case **int:
			n := **v + 1
			*v = &n
		default:
			t.Fatalf("launch.%s: a %v; teach this test its other value", name, f.Type)
		}
		if got := (launcher.Timing{}).With(ls).WithDefaults(); got == def {
			t.Errorf("%s: another value than the default changes nothing in the launcher's timing; is it wired (Timing.With)?", path)
		}
	}
}

// TestCampaignReferenceExamplesLoad: the reference's YAML examples are
// campaigns the loader takes (a models: fragment gets the required rest).
func TestCampaignReferenceExamplesLoad(t *testing.T) {
	b, err := os.ReadFile(referenceDoc)
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(b), -1)
	if len(blocks) < 2 {
		t.Fatalf("%s: %d YAML examples, want the minimal file and the models example", referenceDoc, len(blocks))
	}
	for i, m := range blocks {
		src := m[1]
		if !strings.Contains(src, "output:") {
			src = "output: o\ndataset: {raw: r, prepared: p}\n" + src
		}
		if _, err := configs.ParseCampaign(fmt.Sprintf("example %d", i+1), t.TempDir(), []byte(src), nil); err != nil {
			t.Errorf("%s: example %d does not load: %v", referenceDoc, i+1, err)
		}
	}
}

// taskNames are the names a campaign's task list may use: every task key
// and every family.
func taskNames(reg *tasks.Registry) []string {
	names := reg.Keys()
	for _, f := range reg.Families() {
		names = append(names, f.Name)
	}
	return names
}

// words are the values of a string enum of configs, as the reference
// writes them.
func words[T ~string](values ...T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}
