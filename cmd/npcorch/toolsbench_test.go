package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/npcorch/npcorch/tasks/clinicare"
)

// BenchmarkToolServer64Sessions measures the CliniCARE tool server as an agent run sees it: `npcorch tools
// --listen` in its own process on loopback, 64 concurrent MCP sessions (the official client over Streamable HTTP),
// each calling record tools in turn. It reports client-side latency percentiles per call and the server process's
// CPU per call (from /proc/PID/stat, so the clients' own CPU is not counted).
//
//	go test -run '^$' -bench ToolServer64Sessions -benchtime 6400x ./cmd/npcorch/
func BenchmarkToolServer64Sessions(b *testing.B) { benchToolServer(b, 64, nil) }

// BenchmarkToolServer1Session is the same with one session: the service time of a call with no queueing, which is
// what an agent that thinks between calls sees.
func BenchmarkToolServer1Session(b *testing.B) { benchToolServer(b, 1, nil) }

// BenchmarkToolServer64SessionsPaced is 64 sessions paced like agents: each session calls in bursts of 3 (the
// paper's open-weight runs on opencode make 28–55 tool calls in 11–21 turns, Table 3: about 3 calls a turn) and
// then waits a model turn, drawn uniformly from 1–3 s (a short turn: 50–150 output tokens at about 50 tokens/s a
// sequence on a batched engine), the first turn too (an agent reads its task before it calls anything). The draws
// are seeded per session, so runs are comparable.
//
//	go test -run '^$' -bench ToolServer64SessionsPaced -benchtime 1920x ./cmd/npcorch/
func BenchmarkToolServer64SessionsPaced(b *testing.B) {
	benchToolServer(b, 64, func(session, call int) time.Duration {
		if call%3 != 0 {
			return 0
		}
		r := rand.New(rand.NewPCG(uint64(session), uint64(call)))
		return time.Second + time.Duration(r.Int64N(int64(2*time.Second)))
	})
}

// pacer says how long a session waits before its call-th call; nil is a closed loop (no wait).
type pacer func(session, call int) time.Duration

func benchToolServer(b *testing.B, sessions int, pace pacer) {
	dir := filepath.Join(b.TempDir(), "corpus")
	if err := synthClinicare(dir, 1, false, os.Stderr); err != nil {
		b.Fatal(err)
	}
	cases, _ := clinicare.LoadCases(dir)
	addr := freeLoopback(b)
	exe, _ := os.Executable()
	srv := exec.Command(exe, "tools", "--records", dir, "--listen", addr, "--log", filepath.Join(b.TempDir(), "calls.jsonl"))
	srv.Env = append(os.Environ(), asNpcorch+"=1")
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	waitListening(b, addr)
	ctx := context.Background()
	clients := make([]*mcp.ClientSession, sessions)
	for i := range clients {
		c := cases[i%len(cases)]
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: fmt.Sprintf("http://%s/mcp?case=%s&session=bench-%d", addr, c.ID, i)}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		clients[i] = cs
	}
	lat := make([][]time.Duration, sessions)
	cpu0 := procCPU(b, srv.Process.Pid)
	b.ResetTimer()
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			lat[i] = benchCalls(b, clients[i], cases[i%len(cases)], b.N/sessions+1, func(k int) time.Duration {
				if pace == nil {
					return 0
				}
				return pace(i, k)
			})
		}(i)
	}
	wg.Wait()
	b.StopTimer()
	reportLatency(b, lat, procCPU(b, srv.Process.Pid)-cpu0)
	b.ReportMetric(procPeakRSS(b, srv.Process.Pid), "server_peak_rss_MB")
}

func benchCalls(b *testing.B, cs *mcp.ClientSession, c clinicare.Case, n int, wait func(k int) time.Duration) []time.Duration {
	calls := []mcp.CallToolParams{
		{Name: "get_labs", Arguments: map[string]any{"subject_id": c.SubjectID}},
		{Name: "list_encounters", Arguments: map[string]any{"subject_id": c.SubjectID}},
		{Name: "get_orders", Arguments: map[string]any{"subject_id": c.SubjectID}},
		{Name: "read_note", Arguments: map[string]any{"subject_id": c.SubjectID, "note_id": c.SubjectID + "-DS-1"}},
		{Name: "search_notes", Arguments: map[string]any{"subject_id": c.SubjectID, "query": "history"}},
		{Name: "get_diagnoses", Arguments: map[string]any{"subject_id": c.SubjectID}},
	}
	out := make([]time.Duration, 0, n)
	for k := 0; k < n; k++ {
		time.Sleep(wait(k))
		start := time.Now()
		res, err := cs.CallTool(context.Background(), &calls[k%len(calls)])
		if err != nil || res.IsError {
			b.Errorf("%s: %v %v", calls[k%len(calls)].Name, err, res)
			return out
		}
		out = append(out, time.Since(start))
	}
	return out
}

func reportLatency(b *testing.B, lat [][]time.Duration, cpu time.Duration) {
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	if len(all) == 0 {
		return
	}
	q := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))].Microseconds()) }
	b.ReportMetric(q(0.50), "p50_us")
	b.ReportMetric(q(0.99), "p99_us")
	b.ReportMetric(float64(cpu.Microseconds())/float64(len(all)), "server_cpu_us/call")
}

// procCPU reads a process's user + system CPU time from /proc (clock ticks of 10 ms).
func procCPU(b *testing.B, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

func freeLoopback(b testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitListening waits, at most 30 s, for the tool server to answer on addr.
func waitListening(b testing.TB, addr string) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + addr + "/mcp"); err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Fatalf("the tool server did not listen on %s within 30 s", addr)
}

// procPeakRSS reads a process's peak resident set (VmHWM) in MB.
func procPeakRSS(b *testing.B, pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return float64(kb) / 1024
		}
	}
	b.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}
