package launcher

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/npcorch/npcorch/configs"
)

// TestNoKeyOnAnyCommandLine starts real engine processes, a simulated vLLM
// with two TP workers and a wrapper, through the shim, and checks that
// no process of their groups carries the API key in /proc/PID/cmdline
// (readable by every user, as ps shows it), while the engines still
// demand the key: it reached them through the environment.
func TestNoKeyOnAnyCommandLine(t *testing.T) {
	sup := NewSupervisor(testConfig(t))
	defer stopAll(t, sup)
	sim := simModel("keyed", "--sim-workers", "2")
	// The wrapper hands $NPCORCH_API_KEY to the simulated engine as vLLM's
	// VLLM_API_KEY: sh's own argv holds only the variable's name.
	wrapper := configs.Model{Name: "wrapped", Engine: configs.Engine{Kind: configs.EngineWrapper, MaxNumSeqs: 4,
		Command: append([]string{"sh", "-c", `VLLM_API_KEY="$NPCORCH_API_KEY" exec "$@"`, "wrapper"},
			append(selfCmd("sim-engine"), "serve", "wrapped", "--host", "{host}", "--port", "{port}", "--sim-workers", "1")...)}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, m := range []configs.Model{sim, wrapper} {
		eps, err := sup.Start(ctx, ReplicaSpec{Model: m})
		if err != nil {
			t.Fatal(err)
		}
		ep := eps[0]
		if ep.APIKey == "" {
			t.Fatalf("%s: no API key", m.Name)
		}
		pids, err := ProcScanner{}.Members(ep.PGID)
		if err != nil {
			t.Fatal(err)
		}
		if want := 3; m.Name == "keyed" && len(pids) < want+1 { // shim, engine, two workers
			t.Errorf("%s: group %d has %d processes, want the shim, the engine and its workers", m.Name, ep.PGID, len(pids))
		}
		for _, pid := range pids {
			cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
			if err != nil {
				continue // exited meanwhile
			}
			if strings.Contains(string(cmdline), ep.APIKey) {
				t.Errorf("%s: process %d has the API key on its command line: %q", m.Name, pid, strings.ReplaceAll(string(cmdline), "\x00", " "))
			}
		}
		for key, want := range map[string]int{ep.APIKey: http.StatusOK, "": http.StatusUnauthorized, "npc-wrong": http.StatusUnauthorized} {
			if got := modelsStatus(t, ep.BaseURL, key); got != want {
				t.Errorf("%s: /v1/models with key %q = %d, want %d", m.Name, key, got, want)
			}
		}
	}
}

func modelsStatus(t *testing.T, base, key string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/models", nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestSecretFilesArePrivate: key files are 0600 in a 0700 folder whatever
// the umask, a folder left open by someone else is closed, and a stop
// removes them.
func TestSecretFilesArePrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), SecretDirName)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := []SecretFile{{Path: filepath.Join(dir, "m.r0.yaml"), Content: []byte("api-key: \"k\"\n")}}
	if err := WriteSecretFiles(files); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, files[0].Path: 0o600} {
		st, err := os.Stat(path)
		if err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", path, st.Mode().Perm(), err, want)
		}
	}
	if b, _ := os.ReadFile(files[0].Path); string(b) != "api-key: \"k\"\n" {
		t.Errorf("content %q", b)
	}
	RemoveSecretFiles(files)
	if _, err := os.Stat(files[0].Path); !os.IsNotExist(err) {
		t.Errorf("key file left after removal: %v", err)
	}
}

// TestEnginesDoNotInheritOtherSecrets starts a real simulated vLLM with
// workers, through the shim, with provider and endpoint keys in npcorch's
// environment, and reads every process of its group's /proc/PID/environ:
// the keys of other endpoints (a campaign's api_key_env, a provider's
// well-known variable) are gone, while what engines need (HF_TOKEN for
// gated weights, CUDA_*, VLLM_*, PATH) and the engine's own key are there.
func TestEnginesDoNotInheritOtherSecrets(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-leak-openai")
	t.Setenv("ANTHROPIC_API_KEY", "sk-leak-anthropic")
	t.Setenv("NPCORCH_TEST_ENDPOINT_KEY", "leak-endpoint")
	t.Setenv("HF_TOKEN", "hf_kept")
	t.Setenv("CUDA_CACHE_PATH", "/tmp/kept-cuda")
	t.Setenv("VLLM_LOGGING_LEVEL", "DEBUG")
	cfg := testConfig(t)
	cfg.SecretEnv = []string{"NPCORCH_TEST_ENDPOINT_KEY"}
	sup := NewSupervisor(cfg)
	defer stopAll(t, sup)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	eps, err := sup.Start(ctx, ReplicaSpec{Model: simModel("envd", "--sim-workers", "1")})
	if err != nil {
		t.Fatal(err)
	}
	pids, err := ProcScanner{}.Members(eps[0].PGID)
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	for _, pid := range pids {
		raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
		if err != nil {
			continue // exited meanwhile
		}
		read++
		env := strings.Split(string(raw), "\x00")
		for _, gone := range []string{"OPENAI_API_KEY=", "ANTHROPIC_API_KEY=", "NPCORCH_TEST_ENDPOINT_KEY="} {
			if i := slices.IndexFunc(env, func(kv string) bool { return strings.HasPrefix(kv, gone) }); i >= 0 {
				t.Errorf("process %d inherited %s", pid, strings.TrimSuffix(gone, "="))
			}
		}
		for _, kept := range []string{"HF_TOKEN=hf_kept", "CUDA_CACHE_PATH=/tmp/kept-cuda", "VLLM_LOGGING_LEVEL=DEBUG", "PATH=" + os.Getenv("PATH"), VLLMKeyEnv + "=" + eps[0].APIKey} {
			if !slices.Contains(env, kept) {
				t.Errorf("process %d lacks %s", pid, kept[:strings.IndexByte(kept, '=')])
			}
		}
	}
	if read < 2 {
		t.Errorf("read the environment of %d processes of group %d, want the shim, the engine and its worker", read, eps[0].PGID)
	}
}
