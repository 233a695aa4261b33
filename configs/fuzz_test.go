package configs

import (
	"strings"
	"testing"
)

// FuzzParseCampaign: any bytes give a campaign or an error that names the
// file; an accepted campaign has its defaults and at least one resolved
// model, never a path-special name.
func FuzzParseCampaign(f *testing.F) {
	for _, seed := range []string{
		"name: x\noutput: run\ndataset: {raw: d, prepared: p}\nmodels: [Lingshu-7B]\n",
		"name: x\noutput: run\ndataset: {raw: d, prepared: p}\nmodels:\n  - name: Lingshu-7B\n    engine: {kind: sim, replicas: 2}\n",
		"output: run\ndataset: {raw: d, prepared: p}\nclient: {connect_timeout: 1s}\ntasks: [carepath]\nmodels: [Qwen3-VL-8B-Instruct]\n",
		"models:\n  - [x]\n",
		"registry: ../x.yaml\n",
		"\t- bad",
		"output: o\ndataset: ../data\nseed: abc\ntasks: g_mem\nclient: {total_timeout: 30}\nmodels:\n  - {name: A, engine: {replicas: x, base_url: 1}}\n",
	} {
		f.Add([]byte(seed))
	}
	reg, err := DefaultRegistry()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCampaign("fuzz.yaml", t.TempDir(), data, reg)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if len(c.Resolved) == 0 || c.Repeat < 1 || c.Host == "" || c.Output == "" {
			t.Fatalf("accepted an incomplete campaign: %+v", c)
		}
		for _, m := range c.Resolved {
			if m.Name == "" || m.Name == "." || m.Name == ".." {
				t.Fatalf("accepted model name %q", m.Name)
			}
		}
	})
}

// FuzzParseRegistry: any bytes give a registry or an error naming the file.
func FuzzParseRegistry(f *testing.F) {
	data, err := Defaults.ReadFile("models.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte("models:\n  - name: X\n    engine: {kind: sim}\n"))
	f.Add([]byte("defaults: {tasks: {pathology: {max_tokens: -1}}}\nmodels: []\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseRegistry("fuzz.yaml", data)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, name := range r.Names() {
			if _, ok := r.Get(name); !ok {
				t.Fatalf("listed model %q cannot be got", name)
			}
		}
	})
}

// FuzzParseRelease: any engine.version gives a release or an error, never
// a panic, and an accepted one prints back as a release that parses to
// itself.
func FuzzParseRelease(f *testing.F) {
	for _, seed := range []string{"0.19.1", "v0.9", "0.8.5.post1", "0.10.1rc2", "", "1", "0..1", "99999999999999999999.1"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRelease(s)
		if err != nil {
			return
		}
		again, err := ParseRelease(r.String())
		if err != nil || again != r {
			t.Errorf("%q parsed to %v, which reads back as %v (%v)", s, r, again, err)
		}
	})
}
