package toolenv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"time"
)

// Sandbox bounds (benchmark choices).
const (
	SandboxTimeout   = 20 * time.Second
	SandboxMaxOutput = 12000 // characters of stdout and of stderr kept, as the paper's judges truncate tool results
)

// Sandbox runs Python in bubblewrap: no network (every namespace unshared), a read-only /usr, a private /tmp, and
// the run's own scratch folder as /work. Nothing else of the host is mounted, so the records are out of reach.
// There is no fallback: if bwrap cannot start, NewSandbox fails and the compute tool is not offered.
type Sandbox struct {
	bwrap, python, root string
	// Timeout bounds each computation (SandboxTimeout unless changed before use).
	Timeout time.Duration
}

// NewSandbox finds bwrap and python3 and proves the sandbox starts, with scratch folders under root.
func NewSandbox(root string) (*Sandbox, error) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, fmt.Errorf("the compute tool needs bubblewrap (apt-get install bubblewrap): %w", err)
	}
	s := &Sandbox{bwrap: bwrap, python: "/usr/bin/python3", root: root, Timeout: SandboxTimeout}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	probe := filepath.Join(root, ".probe")
	if err := os.MkdirAll(probe, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(probe)
	out, code, err := s.run(context.Background(), probe, "print('ok')")
	if err != nil || code != 0 || string(out.stdout) != "ok\n" {
		return nil, fmt.Errorf("bwrap cannot start a sandbox here (user namespaces off?): exit %d, %v, %s", code, err, out.stderr)
	}
	return s, nil
}

type procOut struct{ stdout, stderr []byte }

func (s *Sandbox) args(scratch, code string) []string {
	return []string{
		"--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
		"--symlink", "usr/lib64", "/lib64",
		// Shared libraries found through alternatives (numpy's libblas) and the loader's cache; nothing else of /etc.
		"--ro-bind-try", "/etc/alternatives", "/etc/alternatives", "--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache",
		"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
		"--bind", scratch, "/work", "--chdir", "/work", "--unshare-all", "--die-with-parent", "--new-session",
		"--clearenv", "--setenv", "PATH", "/usr/bin", "--setenv", "HOME", "/work", "--setenv", "PYTHONHASHSEED", "0",
		"--setenv", "MPLBACKEND", "Agg", s.python, "-I", "-c", code,
	}
}

// run executes code in the sandbox with scratch as /work, bounded by SandboxTimeout.
func (s *Sandbox) run(ctx context.Context, scratch, code string) (procOut, int, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.bwrap, s.args(scratch, code)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return procOut{out.Bytes(), errb.Bytes()}, -1, fmt.Errorf("the computation ran past %s and was stopped", s.Timeout)
	case errors.As(err, &ee):
		return procOut{out.Bytes(), errb.Bytes()}, ee.ExitCode(), nil
	case err != nil:
		return procOut{}, -1, err
	}
	return procOut{out.Bytes(), errb.Bytes()}, 0, nil
}

// ComputeArgs are the arguments of compute.
type ComputeArgs struct {
	Code string `json:"code" jsonschema:"Python 3 source; the working folder /work persists across this run's calls; no network, no records"`
}

// ComputeResult is what compute returns.
type ComputeResult struct {
	ExitCode        int        `json:"exit_code"`
	Stdout          string     `json:"stdout"`
	Stderr          string     `json:"stderr"`
	StdoutTruncated bool       `json:"stdout_truncated"`
	StderrTruncated bool       `json:"stderr_truncated"`
	Files           []FileInfo `json:"files"`
}

// FileInfo is one artifact in the run's scratch folder.
type FileInfo struct {
	Name   string `json:"name"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// EnableSandbox adds the compute tool, running in sb.
func (e *Env) EnableSandbox(sb *Sandbox) {
	t := define("compute", ChannelCompute, "Run Python 3 in a sandbox (no network, no access to the records) for derived quantities: scores, intervals, trends. Commands, outputs and files are kept in the trace.",
		func(e *Env, _ string, a ComputeArgs, rec *CallRecord) (output, error) { return sb.compute(a, rec) })
	e.byName[t.name] = len(e.tools)
	e.tools = append(e.tools, t)
}

func (sb *Sandbox) compute(a ComputeArgs, rec *CallRecord) (output, error) {
	key := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%d", rec.Session, rec.Case, rec.Attempt)))
	scratch := filepath.Join(sb.root, hex.EncodeToString(key[:8]))
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		return output{}, err
	}
	out, code, err := sb.run(context.Background(), scratch, a.Code)
	if err != nil {
		return output{}, err
	}
	res := ComputeResult{ExitCode: code}
	res.Stdout, res.StdoutTruncated = clip(out.stdout)
	res.Stderr, res.StderrTruncated = clip(out.stderr)
	res.Files, err = listScratch(scratch)
	return output{value: res, truncated: res.StdoutTruncated || res.StderrTruncated}, err
}

func clip(b []byte) (string, bool) {
	r := []rune(string(b))
	if len(r) > SandboxMaxOutput {
		return string(r[:SandboxMaxOutput]), true
	}
	return string(r), false
}

func listScratch(dir string) ([]FileInfo, error) {
	var files []FileInfo
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		sum := sha256.Sum256(data)
		files = append(files, FileInfo{Name: filepath.ToSlash(rel), Bytes: int64(len(data)), SHA256: hex.EncodeToString(sum[:])})
		return nil
	})
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	if files == nil {
		files = []FileInfo{}
	}
	return files, err
}
