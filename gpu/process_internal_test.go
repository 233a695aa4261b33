package gpu

import (
	"context"
	"os"
	"testing"
)

// An empty answer (a process inside execve, ending, or a kernel thread) is
// not remembered: the same pid is read again on the next tick. A full
// answer is.
func TestHostProcessesRemembersOnlyFullAnswers(t *testing.T) {
	kthreadd, err := os.ReadFile("/proc/2/comm")
	if err != nil || string(kthreadd) != "kthreadd\n" {
		t.Skip("pid 2 is not kthreadd here")
	}
	var h HostProcesses
	ctx := context.Background()
	if info := h.Describe(ctx, 2); info.Command != nil {
		t.Fatalf("kthreadd has a command line? %q", *info.Command)
	}
	self := h.Describe(ctx, os.Getpid())
	if self.Command == nil {
		t.Fatal("this test process has no command line")
	}
	if _, kept := h.cache[2]; kept {
		t.Error("the empty answer for pid 2 was cached")
	}
	if _, kept := h.cache[int32(os.Getpid())]; !kept {
		t.Error("the answer for this process was not cached")
	}
}
