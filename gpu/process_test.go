package gpu_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/npcorch/npcorch/gpu"
)

// startEngineLike starts sh with the launcher's variables; sh starts a
// sleep whose own environment has them removed and prints its pid. The
// model can then only be found on the sleep's parent.
func startEngineLike(t *testing.T) (shellPID, childPID int) {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh on this machine")
	}
	cmd := exec.Command("sh", "-c", `env -u NPCORCH_MODEL -u NPCORCH_REPLICA sleep 300 & echo $!; wait`)
	cmd.Env = append(os.Environ(), gpu.EnvModel+"=qwen2.5-vl-72b", gpu.EnvReplica+"=3")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p, err := os.FindProcess(child); err == nil {
			p.Kill()
		}
		cmd.Process.Kill()
		cmd.Wait()
	})
	// The pid is printed as soon as sh forks; until the child has become
	// sleep it is a copy of sh, with the variables and another command. Its
	// name changes early in execve, its command line only later, so wait
	// for the command line.
	deadline := time.Now().Add(10 * time.Second)
	for {
		argv, _ := os.ReadFile("/proc/" + strconv.Itoa(child) + "/cmdline")
		if string(argv) == "sleep\x00300\x00" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d did not become sleep 300 within 10 s (command line %q)", child, argv)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cmd.Process.Pid, child
}

func TestHostProcessesFindsModelOnAncestor(t *testing.T) {
	shell, child := startEngineLike(t)
	var h gpu.HostProcesses
	ctx := context.Background()
	for _, pid := range []int{child, shell} {
		info := h.Describe(ctx, pid)
		if info.Model == nil || *info.Model != "qwen2.5-vl-72b" || info.Replica == nil || *info.Replica != "3" {
			t.Errorf("pid %d: model %v replica %v", pid, info.Model, info.Replica)
		}
	}
	info := h.Describe(ctx, child)
	if info.Command == nil || !strings.Contains(*info.Command, "sleep 300") {
		t.Errorf("child command %v", info.Command)
	}
	// This test process was not launched by npcorch.
	if self := h.Describe(ctx, os.Getpid()); os.Getenv(gpu.EnvModel) == "" && self.Model != nil {
		t.Errorf("test process attributed to model %q", *self.Model)
	}
	if gone := h.Describe(ctx, 1<<22+17); gone.Command != nil || gone.Model != nil {
		t.Errorf("a pid that does not exist: %+v", gone)
	}
}

func TestCPUListFormatting(t *testing.T) {
	cases := []struct {
		words []uint64
		want  string
	}{
		{[]uint64{0xffffffff, 0xffffffff}, "0-31,64-95"},
		{[]uint64{0b1011}, "0-1,3"},
		{[]uint64{0, 1 << 63}, "127"},
		{[]uint64{0}, ""},
	}
	for _, c := range cases {
		if got := gpu.FormatCPUList(gpu.CPUsFromMask(c.words)); got != c.want {
			t.Errorf("%x: %q, want %q", c.words, got, c.want)
		}
	}
}
