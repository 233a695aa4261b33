package simengine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/npcorch/npcorch/launcher/simkey"
	"github.com/npcorch/npcorch/launcher/simscript"
)

// simVersion is the vLLM version the simulated server reports.
const simVersion = "0.11.0"

// kvBytesPerToken converts KV tokens to the GiB figures in the start-up log.
const kvBytesPerToken = 128 << 10

// clock is the engine's source of time.
type clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// engine is one simulated vLLM server: its options, its answers, its state
// and the hooks (time, self-kill, worker start) that tests can pin.
type engine struct {
	o      *options
	key    *simkey.Key
	script *simscript.File // tool-calling agents' turns (nil: none)
	clock  clock
	log    *logger
	m      *metrics
	sched  *scheduler
	faults *faultState
	prefix *prefixCache
	// digests remembers the local image files already hashed.
	digests *digests
	// allowedRoot is --allowed-local-media-path resolved at start ("":
	// resolved on each request).
	allowedRoot string
	pid         int
	// die ends the process abruptly (crash faults): SIGKILL to itself.
	die func()
	// self is the argv prefix that re-executes Main (for workers).
	self []string

	started    time.Time
	ready      atomic.Bool // startup complete (never, with never-ready)
	workerDead atomic.Bool // a worker died: the engine is dead
	requests   atomic.Uint64
	crashWhy   atomic.Pointer[string] // an armed crash (see crashAfterResponse)
	stopping   chan struct{}          // closed at shutdown: in-flight requests end
}

// run loads, serves until ctx ends, and shuts down, the way vLLM does.
func (e *engine) run(ctx context.Context) error {
	e.started = e.clock.Now()
	e.stopping = make(chan struct{})
	e.log.vllm("INFO", "api_server.py:1839", "vLLM API server version %s (npcorch sim-engine)", simVersion)
	e.log.vllm("INFO", "utils.py:233", "non-default args: {'model_tag': '%s', 'host': '%s', 'port': %d, 'served_model_name': ['%s'], 'tensor_parallel_size': %d, 'max_model_len': %d, 'max_num_seqs': %d}",
		e.o.Model, e.o.Host, e.o.Port, e.o.ServedName, e.o.TensorParallel, e.o.MaxModelLen, e.o.MaxNumSeqs)

	sock, err := bindTCP(e.o.Host, e.o.Port)
	if err != nil {
		e.log.block("ERROR:    " + err.Error() + "\nOSError: " + err.Error())
		return &ExitError{Code: 1, Err: fmt.Errorf("sim-engine %s: bind %s:%d: %w (choose a free port)", e.o.ServedName, e.o.Host, e.o.Port, err)}
	}
	listening := false
	defer func() {
		if !listening {
			sock.close()
		}
	}()

	var pool *workerPool
	if e.o.Workers > 0 {
		pool, err = startWorkers(e.self, e.o.Workers, e.o.WorkerNoSIGTERM, e.o.OrphanWorkers, e.workerDied)
		if err != nil {
			e.log.block("ERROR:    " + err.Error())
			return &ExitError{Code: 1, Err: fmt.Errorf("sim-engine %s: %w", e.o.ServedName, err)}
		}
		e.log.vllm("INFO", "multiproc_executor.py:720", "started %d worker process(es): pids %v", e.o.Workers, pool.pids())
	}

	if err := e.load(ctx); err != nil {
		pool.kill()
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}

	// Logged before listen, as vLLM does: until this line is out, the port
	// refuses connections.
	e.log.vllm("INFO", "api_server.py:1878", "Starting vLLM API server 0 on http://%s", sock.addr)
	ln, err := sock.listen()
	if err != nil {
		pool.kill()
		e.log.block("ERROR:    " + err.Error())
		return &ExitError{Code: 1, Err: fmt.Errorf("sim-engine %s: %w", e.o.ServedName, err)}
	}
	listening = true
	e.log.uvicorn("Started server process [%d]", e.pid)
	e.log.uvicorn("Waiting for application startup.")
	srv := &http.Server{Handler: e.routes(), ReadHeaderTimeout: time.Minute, ConnState: e.connState}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	if !e.o.Faults.neverReady {
		// Said before /health answers 200, as uvicorn finishes the
		// application's startup before it serves.
		e.log.uvicorn("Application startup complete.")
		e.ready.Store(true)
	}
	if e.faults.crashNow() {
		e.crash("crash-after=0")
	}

	select {
	case <-ctx.Done():
	case err := <-serveErr:
		pool.kill()
		return &ExitError{Code: 1, Err: fmt.Errorf("sim-engine %s: serve: %w", e.o.ServedName, err)}
	}
	e.log.uvicorn("Shutting down")
	close(e.stopping)
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		srv.Close()
	}
	e.log.uvicorn("Waiting for application shutdown.")
	e.log.uvicorn("Application shutdown complete.")
	pool.stop()
	e.log.uvicorn("Finished server process [%d]", e.pid)
	return nil
}

// load spends --sim-load-time with the port refusing connections, logging
// progress as vLLM does, and fails like a CUDA OOM with exit-during-load.
func (e *engine) load(ctx context.Context) error {
	const shards = 4
	step := e.o.LoadTime / (shards + 1)
	e.log.vllm("INFO", "model.py:547", "Resolved architecture: %s", "SimulatedForConditionalGeneration")
	e.log.vllm("INFO", "model.py:1510", "Using max model len %d", e.o.MaxModelLen)
	e.log.core("INFO", "gpu_model_runner.py:2602", "Starting to load model %s...", e.o.Model)
	for i := 1; i <= shards; i++ {
		if err := e.sleep(ctx, step); err != nil {
			return err
		}
		e.log.core("INFO", "default_loader.py:267", "Loading safetensors checkpoint shards: %3d%% Completed | %d/%d", 100*i/shards, i, shards)
		if e.o.Faults.exitDuringLoad && i == shards/2 {
			e.log.block(oomTraceback(e.pid, e.o.ServedName))
			return &ExitError{Code: 1, Err: fmt.Errorf("sim-engine %s: exit-during-load fault: CUDA out of memory while loading", e.o.ServedName)}
		}
	}
	weights := weightGiB(e.o.Model) / float64(e.o.TensorParallel)
	e.log.core("INFO", "gpu_model_runner.py:2653", "Model loading took %.4f GiB and %.6f seconds", weights, e.clock.Now().Sub(e.started).Seconds())
	if err := e.sleep(ctx, step); err != nil {
		return err
	}
	kvGiB := float64(e.o.KVTokens) * kvBytesPerToken / (1 << 30)
	e.log.core("INFO", "gpu_worker.py:298", "Available KV cache memory: %.2f GiB", kvGiB)
	e.log.core("INFO", "kv_cache_utils.py:1087", "GPU KV cache size: %s tokens", thousands(e.o.KVTokens))
	e.log.core("INFO", "kv_cache_utils.py:1091", "Maximum concurrency for %s tokens per request: %.2fx",
		thousands(e.o.MaxModelLen), float64(e.o.KVTokens)/float64(e.o.MaxModelLen))
	e.log.core("INFO", "core.py:210", "init engine (profile, create kv cache, warmup model) took %.2f seconds", e.clock.Now().Sub(e.started).Seconds())
	return nil
}

// sleep waits d, or returns early with an error when ctx ends or the engine
// stops.
func (e *engine) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	select {
	case <-e.clock.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-e.stopping:
		return errStopping
	}
}

// errStopping ends waits when the engine shuts down.
var errStopping = errors.New("engine is shutting down")

// workerDied marks the engine dead when a worker exits on its own, as vLLM
// does when a worker process fails.
func (e *engine) workerDied(role string, err error) {
	e.workerDead.Store(true)
	e.log.core("ERROR", "multiproc_executor.py:154", "Worker proc %s died unexpectedly (%v), shutting down executor.", role, err)
	e.log.core("ERROR", "core.py:710", "EngineCore encountered a fatal error.")
}

// dead reports whether /health must answer 503.
func (e *engine) dead() bool {
	return e.workerDead.Load() || e.faults.mode() == faultUnavailable
}

// crash ends the process at once, as a segfaulting engine would.
func (e *engine) crash(why string) {
	e.log.vllm("ERROR", "sim_engine.py:1", "injected fault %s: killing the engine with SIGKILL", why)
	e.die()
}

// crashAfterResponse arms a crash that happens as soon as the response in
// progress has been handed to the kernel (its connection goes idle or
// closes), so the client receives it whole before the engine dies.
func (e *engine) crashAfterResponse(why string) {
	e.crashWhy.Store(&why)
}

// connState is the HTTP server's connection hook; it carries out an armed
// crash once a response is complete.
func (e *engine) connState(_ net.Conn, s http.ConnState) {
	if s != http.StateIdle && s != http.StateClosed && s != http.StateHijacked {
		return
	}
	if why := e.crashWhy.Load(); why != nil {
		e.crash(*why)
	}
}

var paramsRe = regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)B\b`)

// weightGiB guesses bf16 weight size from a model name ("Qwen3-VL-8B" → 8B
// parameters), for the start-up log only.
func weightGiB(model string) float64 {
	if m := paramsRe.FindStringSubmatch(model); m != nil {
		if b, err := strconv.ParseFloat(m[1], 64); err == nil {
			return b * 2e9 / (1 << 30)
		}
	}
	return 15.5
}

// thousands formats n with comma separators, as vLLM's log does.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// oomTraceback is the log of an engine core that ran out of GPU memory while
// loading.
func oomTraceback(pid int, model string) string {
	return fmt.Sprintf(`(EngineCore_DP0 pid=%[1]d) ERROR [core.py:708] EngineCore failed to start.
(EngineCore_DP0 pid=%[1]d) Traceback (most recent call last):
(EngineCore_DP0 pid=%[1]d)   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 699, in run_engine_core
(EngineCore_DP0 pid=%[1]d)     engine_core = EngineCoreProc(*args, **kwargs)
(EngineCore_DP0 pid=%[1]d)   File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/model_loader/default_loader.py", line 267, in load_weights
(EngineCore_DP0 pid=%[1]d)     param.data.copy_(loaded_weight)
(EngineCore_DP0 pid=%[1]d) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.25 GiB of which 1.06 GiB is free. Including non-PyTorch memory, this process has 78.17 GiB memory in use. Of the allocated memory 76.90 GiB is allocated by PyTorch, and 1.02 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.
Traceback (most recent call last):
  File "/usr/local/bin/vllm", line 10, in <module>
    sys.exit(main())
RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore_DP0': 1} (model %[2]s)`, pid, model)
}
