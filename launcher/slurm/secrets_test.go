package slurm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
)

// sbatchRecorder answers sbatch with job 7 and remembers its arguments.
type sbatchRecorder struct {
	mu   sync.Mutex
	args [][]string
}

func (s *sbatchRecorder) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if name != "sbatch" {
		return nil, nil // squeue: no job is active; scancel: done
	}
	s.args = append(s.args, append([]string{name}, args...))
	return []byte("7\n"), nil
}

// TestJobKeepsTheKeyOffArgvAndFromOtherUsers: the engine a job starts
// gets its API key from the environment (vLLM) or a 0600 file (SGLang),
// never on its command line nor on sbatch's; the script that exports it
// is readable by its owner only, also when an older run left one that
// was not.
func TestJobKeepsTheKeyOffArgvAndFromOtherUsers(t *testing.T) {
	rec := &sbatchRecorder{}
	dir := t.TempDir()
	b, err := New(Config{Settings: configs.SlurmSettings{GRES: "gpu", PortBase: 20000, PortSpan: 100},
		Run: "t", Dir: dir, Cmd: rec})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		b.Close(ctx)
	}()
	node := Node{Name: "n1", Addr: "10.0.0.7", State: "IDLE", GPUs: 8}
	for _, m := range []configs.Model{
		{Name: "Lingshu-7B", HFID: "lingshu-medical-mllm/Lingshu-7B", Engine: configs.Engine{Kind: configs.EngineVLLM}},
		{Name: "Lingshu-7B-sgl", HFID: "lingshu-medical-mllm/Lingshu-7B", Engine: configs.Engine{Kind: configs.EngineSGLang}},
	} {
		const key = "npc-0123456789abcdef"
		r := newReplica(b, launcher.ReplicaSpec{Model: m, GPUs: []string{"0"}}, node, key)
		stale := filepath.Join(dir, jobWord(m.Name)+"-r0", "1", "job.sh")
		if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(stale, []byte("old"), 0o755); err != nil {
			t.Fatal(err)
		}
		_, js, err := r.submit(1)
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if strings.Contains(strings.Join(js.Argv, " "), key) {
			t.Errorf("%s: the engine's argv has the key: %q", m.Name, js.Argv)
		}
		if sb := rec.args[len(rec.args)-1]; strings.Contains(strings.Join(sb, " "), key) {
			t.Errorf("%s: sbatch's argv has the key: %q", m.Name, sb)
		}
		st, err := os.Stat(js.ScriptPath())
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: %s has mode %v: other users can read the key it exports", m.Name, js.ScriptPath(), st.Mode().Perm())
		}
		script, _ := os.ReadFile(js.ScriptPath())
		switch m.Engine.Kind {
		case configs.EngineVLLM:
			if !strings.Contains(string(script), "export VLLM_API_KEY="+key+"\n") {
				t.Errorf("%s: the script does not give vLLM the key in VLLM_API_KEY:\n%s", m.Name, script)
			}
		case configs.EngineSGLang:
			keyFile := filepath.Join(dir, launcher.SecretDirName, "Lingshu-7B-sgl.r0.yaml")
			if i := indexOf(js.Argv, "--config"); i < 0 || js.Argv[i+1] != keyFile {
				t.Errorf("%s: argv %q does not name the key file %s", m.Name, js.Argv, keyFile)
			}
			st, err := os.Stat(keyFile)
			if err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("%s: key file %s: %v (mode %v), want 0600", m.Name, keyFile, err, st.Mode().Perm())
			}
			if strings.Contains(string(script), key) {
				t.Errorf("%s: the script has the key although SGLang reads it from its file", m.Name)
			}
		}
	}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// Slurm's commands, sbatch above all, run without the campaign's key
// variables and the providers' keys: sbatch hands its own environment to
// every job (--export=ALL, Slurm's default), and the engines started there
// inherited OPENAI_API_KEY and the other endpoints' keys.
func TestSlurmCommandsRunWithoutOtherSecrets(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-not-for-engines")
	t.Setenv("NPCORCH_TEST_REMOTE_KEY", "not-for-engines-either")
	t.Setenv("HF_TOKEN", "hf-engines-need-this")
	cfg := Config{SecretEnv: []string{"NPCORCH_TEST_REMOTE_KEY"}}.withDefaults()
	out, err := cfg.Cmd.Run(context.Background(), "env")
	if err != nil {
		t.Fatal(err)
	}
	env := string(out)
	for _, gone := range []string{"OPENAI_API_KEY=", "NPCORCH_TEST_REMOTE_KEY="} {
		if strings.Contains(env, gone) {
			t.Errorf("Slurm's commands run with %s…", gone)
		}
	}
	for _, kept := range []string{"HF_TOKEN=hf-engines-need-this", "PATH="} {
		if !strings.Contains(env, kept) {
			t.Errorf("Slurm's commands run without %s", kept)
		}
	}
}
