package live_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks/live"
)

// paperScale is a campaign the size of the paper's: 16 models, 8 tasks,
// 8 engines running.
func paperScale() live.Begin {
	b := live.Begin{Started: t0, GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}, Grade: grade}
	taskKeys := []string{"pathology", "sequence", "t_cards", "t_groups", "n_groups", "cp_pathology", "cp_mri", "cp_care"}
	for _, k := range taskKeys {
		b.Tasks = append(b.Tasks, live.TaskInfo{Key: k, Title: k, Level: "L1"})
	}
	for i := range 16 {
		m := live.ModelInfo{Name: fmt.Sprintf("model-%02d", i)}
		for _, k := range taskKeys {
			m.Work = append(m.Work, schedule.Workload{Model: m.Name, Task: k, Requests: 500, PromptTokens: 500 * 4000, OutputTokens: 500 * 300})
		}
		b.Models = append(b.Models, m)
	}
	return b
}

// BenchmarkServeToTenPages is what one published view costs the process
// with ten pages open: the hub builds and encodes the view, and the server
// writes it to ten event streams (the clients' reading, in this process,
// is counted too, so the figure is an upper bound). At most 4 views a
// second are published: 4 × the time per view is the share of a core.
func BenchmarkServeToTenPages(b *testing.B) {
	for _, pages := range []int{0, 1, 10} {
		b.Run(fmt.Sprintf("pages=%d", pages), func(b *testing.B) { benchServe(b, pages) })
	}
}

func benchServe(b *testing.B, pages int) {
	h := live.NewHub(live.HubOptions{Campaign: "bench", PublishEvery: time.Millisecond})
	defer h.Close(live.Ended{State: live.RunFinished})
	ln, err := live.Listen("0", "")
	if err != nil {
		b.Fatal(err)
	}
	srv, err := ln.Serve(h)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	h.Post(paperScale())
	for i := range 8 {
		h.Post(live.Assigned{Model: fmt.Sprintf("model-%02d", i), TP: 1, GPUs: []int{i}, At: t0})
		h.Post(live.EngineEvent{ReplicaEvent: launcher.ReplicaEvent{Time: t0, Kind: launcher.ReplicaReady, Model: fmt.Sprintf("model-%02d", i)}})
	}
	url := "http://" + ln.Addr().String()
	// Each page: an /events stream whose reader only finds the events'
	// ids, as cheap a client as can be, and reports the last it read.
	seen := make([]chan uint64, pages)
	for i := range seen {
		seen[i] = make(chan uint64, 1<<16)
		resp, err := http.Get(url + "/events")
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		go func(ch chan uint64) {
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(nil, 1<<24)
			for sc.Scan() {
				if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
					n, _ := strconv.ParseUint(id, 10, 64)
					ch <- n
				}
			}
			close(ch)
		}(seen[i])
	}
	ctx := context.Background()
	last := h.Latest()
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.Post(live.Journaled{Record: answered(fmt.Sprintf("model-%02d", i%8), "pathology", "right", 4000, 300, 2*time.Second, 200*time.Millisecond)})
		v, err := h.Next(ctx, last.Seq)
		if err != nil {
			b.Fatal(err)
		}
		last = v
		for _, ch := range seen {
			for id := range ch {
				if id >= v.Seq {
					break
				}
			}
		}
	}
	b.StopTimer()
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/view")
	b.ReportMetric(float64(len(last.JSON)), "bytes/view")
}
