package launcher

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/simengine"
)

// The test binary doubles as the processes the lifecycle tests need: the
// engine shim, a fake engine with its workers, and a parent npcorch that
// the SIGKILL and SIGINT tests kill.
const childEnv = "LAUNCHER_TEST_CHILD"

func TestMain(m *testing.M) {
	// A fuzzing worker is this binary re-run with -test.* flags and the
	// environment set below: it is no child.
	if os.Getenv(childEnv) == "1" && len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-test.") {
		os.Exit(runChild(os.Args[1], os.Args[2:]))
	}
	// Inherited by every child the tests start: the sim engine's workers
	// re-execute this binary in the sim-engine role.
	os.Setenv(childEnv, "1")
	self, _ := json.Marshal(selfCmd("sim-engine"))
	os.Setenv(simengine.SelfEnv, string(self))
	os.Exit(m.Run())
}

func runChild(role string, args []string) int {
	switch role {
	case "engine-shim":
		return ShimMain(args, os.Stderr)
	case "sim-engine":
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return simengine.ExitCode(simengine.Main(ctx, args, os.Stdout, os.Stderr))
	case "fake-engine":
		return fakeEngine(args)
	case "worker":
		return fakeWorker(args)
	case "parent":
		return fakeParent(args)
	}
	fmt.Fprintln(os.Stderr, "unknown test child role", role)
	return 2
}

// selfCmd returns the test binary invoked in role.
func selfCmd(role string) []string {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return []string{exe, role}
}

// testConfig is a supervisor configuration with shrunk delays, the shim
// and the simulated engine (package simengine).
func testConfig(t testing.TB) Config {
	moves := &moveLog{}
	t.Cleanup(func() {
		for _, m := range moves.taken() {
			if !canMove(m.from, m.to) {
				t.Errorf("a replica moved %s → %s, which the lifecycle table lacks", m.from, m.to)
			}
		}
	})
	return Config{
		Engines: Engines{Sim: selfCmd("sim-engine")},
		Shim:    selfCmd("engine-shim"),
		LogDir:  t.TempDir(),
		// A range of its own: go test ./... runs the campaign and slurm
		// packages' engines at the same time from 20000 and 24000.
		Ports:  &Ports{First: 26000, Last: 27999},
		Timing: fastTiming(),
		onMove: moves.add,
	}
}

// moveLog records the state changes of a test's replicas.
type moveLog struct {
	mu    sync.Mutex
	moves []transition
}

func (l *moveLog) add(from, to State) {
	l.mu.Lock()
	l.moves = append(l.moves, transition{from: from, to: to})
	l.mu.Unlock()
}

func (l *moveLog) taken() []transition {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.moves)
}

// fakeConfig runs the fake engine of fakeengine_test.go instead, for
// behaviours the simulated engine does not model (an engine that ignores
// SIGTERM, endless loading logs, other failure texts).
func fakeConfig(t testing.TB) Config {
	c := testConfig(t)
	c.Engines.Sim = selfCmd("fake-engine")
	return c
}

func fastTiming() Timing {
	return Timing{
		NoProgress:     3 * time.Second,
		HardCap:        20 * time.Second,
		ProbeInterval:  20 * time.Millisecond,
		ProbeTimeout:   2 * time.Second,
		WarmUpTimeout:  5 * time.Second,
		Grace:          500 * time.Millisecond,
		WaitDelay:      time.Second,
		Verify:         5 * time.Second,
		RestartBackoff: 50 * time.Millisecond,
		MaxBackoff:     200 * time.Millisecond,
		MaxRestarts:    2,
		StableAfter:    time.Hour,
		StallCheck:     50 * time.Millisecond,
		StallWindow:    300 * time.Millisecond,
	}
}

func simModel(name string, sim ...string) configs.Model {
	return configs.Model{Name: name, HFID: "org/" + name, Engine: configs.Engine{Kind: configs.EngineSim, MaxNumSeqs: 8, Sim: sim}}
}

// fakeParent is a minimal npcorch: it starts one sim replica through the
// shim, prints "PGID n", and on SIGINT/SIGTERM stops everything and exits.
func fakeParent(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := Config{
		Engines: Engines{Sim: selfCmd("sim-engine")},
		Shim:    selfCmd("engine-shim"),
		LogDir:  args[0],
		Timing:  fastTiming(),
	}
	cfg.Timing.Grace = 2 * time.Second
	sup := NewSupervisor(cfg)
	model := simModel("parent-model", strings.Fields(args[1])...)
	eps, err := sup.Start(ctx, ReplicaSpec{Model: model})
	if err != nil {
		fmt.Println("ERROR", err)
		return 1
	}
	fmt.Printf("PGID %d\n", eps[0].PGID)
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := sup.StopAll(stopCtx); err != nil {
		fmt.Println("STOPERROR", err)
		return 1
	}
	fmt.Println("STOPPED")
	return 0
}
