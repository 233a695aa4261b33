package gpu

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/shirou/gopsutil/v4/process"
)

// maxAncestors bounds the walk up the process tree.
const maxAncestors = 32

// HostProcesses is the [ProcessInspector] for processes of this host. It
// reads the command line with gopsutil and finds the model and replica by
// looking for NPCORCH_MODEL and NPCORCH_REPLICA in the environment of the
// process and then of its ancestors (an engine's workers inherit them, but a
// wrapper may have scrubbed its children's environment). Results are cached
// per process (pid and start time), so a 1 Hz sampler reads /proc once per
// process, not once per tick. The zero value is ready to use.
type HostProcesses struct {
	mu    sync.Mutex
	cache map[int32]cachedProcess
}

type cachedProcess struct {
	created int64
	info    ProcessInfo
}

// Describe returns what the host says about pid; a process that is gone or
// hidden from us yields an empty ProcessInfo.
func (h *HostProcesses) Describe(ctx context.Context, pid int) ProcessInfo {
	created, ok := procStamp(pid)
	if ok {
		h.mu.Lock()
		c, hit := h.cache[int32(pid)]
		h.mu.Unlock()
		if hit && c.created == created {
			return c.info
		}
	}
	p, err := process.NewProcessWithContext(ctx, int32(pid))
	if err != nil {
		return ProcessInfo{}
	}
	if !ok {
		created, _ = p.CreateTimeWithContext(ctx)
	}
	var info ProcessInfo
	if cmd, err := p.CmdlineWithContext(ctx); err == nil && cmd != "" {
		info.Command = &cmd
	}
	info.Model, info.Replica = launchedBy(ctx, p)
	if info.Command == nil {
		// Caught inside execve (its arguments not yet set up) or ending:
		// ask again next time rather than remember an empty answer.
		return info
	}
	h.mu.Lock()
	if h.cache == nil {
		h.cache = map[int32]cachedProcess{}
	}
	h.cache[p.Pid] = cachedProcess{created: created, info: info}
	h.mu.Unlock()
	return info
}

// procStamp identifies a process instance cheaply on Linux: the time its
// /proc entry was made, which changes when the pid is reused. Elsewhere it
// reports false and Describe asks gopsutil for the start time.
func procStamp(pid int) (int64, bool) {
	fi, err := os.Stat("/proc/" + strconv.Itoa(pid))
	if err != nil {
		return 0, false
	}
	return fi.ModTime().UnixNano(), true
}

// launchedBy walks from p up its ancestors and returns the model and replica
// of the first process whose environment names a model.
func launchedBy(ctx context.Context, p *process.Process) (model, replica *string) {
	for range maxAncestors {
		if env, err := p.EnvironWithContext(ctx); err == nil {
			if m, r, ok := modelFromEnv(env); ok {
				return m, r
			}
		}
		ppid, err := p.PpidWithContext(ctx)
		if err != nil || ppid <= 1 || ppid == p.Pid {
			return nil, nil
		}
		if p, err = process.NewProcessWithContext(ctx, ppid); err != nil {
			return nil, nil
		}
	}
	return nil, nil
}

// modelFromEnv finds the launcher's variables in an environment list.
func modelFromEnv(env []string) (model, replica *string, ok bool) {
	for _, kv := range env {
		k, v, found := strings.Cut(kv, "=")
		if !found || v == "" {
			continue
		}
		switch k {
		case EnvModel:
			model = &v
		case EnvReplica:
			replica = &v
		}
	}
	if model == nil {
		return nil, nil, false
	}
	return model, replica, true
}

// FormatCPUList writes CPU numbers as a Linux CPU list ("0-31,64-95").
// The input must be ascending.
func FormatCPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j == i {
			fmt.Fprintf(&b, "%d", cpus[i])
		} else {
			fmt.Fprintf(&b, "%d-%d", cpus[i], cpus[j])
		}
		i = j + 1
	}
	return b.String()
}

// CPUsFromMask lists the CPUs set in an affinity bit mask of 64-bit words,
// word 0 holding CPUs 0..63 (NVML's layout).
func CPUsFromMask(words []uint64) []int {
	var cpus []int
	for w, word := range words {
		for bit := range 64 {
			if word&(1<<bit) != 0 {
				cpus = append(cpus, w*64+bit)
			}
		}
	}
	return cpus
}
