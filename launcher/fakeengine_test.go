package launcher

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// fakeEngine is a small stand-in for the simulated engine: it takes
// vLLM's flags, refuses connections while "loading", then serves /health,
// /v1/models (with API-key check), a non-streaming chat, /metrics, and
// /sim/crash and /sim/hang to inject faults. Flags:
//
//	--sim-load-time D     time before listening
//	--sim-log-every D     a log line every D while loading
//	--sim-fault F         exit-during-load | tp-heads | port-in-use | never-ready
//	--sim-log-line TEXT   the line --sim-log-every prints (default: a loading line)
//	--sim-chat-status N   answer every chat with HTTP N and a vLLM error body
//	--sim-workers N       child processes in the engine's group
//	--sim-worker-ignore-sigterm, --sim-ignore-sigterm
func fakeEngine(args []string) int {
	opt := map[string]string{}
	bools := map[string]bool{"--trust-remote-code": true, "--sim-worker-ignore-sigterm": true, "--sim-ignore-sigterm": true,
		"--enable-prompt-tokens-details": true}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") {
			continue
		}
		if bools[a] || i+1 >= len(args) {
			opt[a] = "true"
			continue
		}
		opt[a] = args[i+1]
		i++
	}
	dur := func(k string) time.Duration {
		d, _ := time.ParseDuration(opt[k])
		return d
	}
	key, name := opt["--api-key"], opt["--served-model-name"]
	fmt.Printf("INFO non-default args: {'api_key': '%s', 'served_model_name': '%s'}\n", key, name)
	if key == "" {
		key = os.Getenv("VLLM_API_KEY") // as vLLM: the flag wins
	}
	if opt["--sim-ignore-sigterm"] == "true" {
		signal.Ignore(syscall.SIGTERM)
	} else {
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM)
		go func() {
			<-c
			fmt.Println("INFO Shutting down")
			os.Exit(0)
		}()
	}
	n, _ := strconv.Atoi(opt["--sim-workers"])
	for i := range n {
		w := exec.Command(os.Args[0], "worker", opt["--sim-worker-ignore-sigterm"])
		w.Stdout, w.Stderr = os.Stdout, os.Stderr
		if err := w.Start(); err != nil {
			fmt.Println("ERROR start worker", i, err)
			return 1
		}
		fmt.Printf("INFO worker %d pid %d\n", i, w.Process.Pid)
	}

	load, every := dur("--sim-load-time"), dur("--sim-log-every")
	fault := opt["--sim-fault"]
	deadline := time.Now().Add(load)
	for fault == "never-ready" || time.Now().Before(deadline) {
		step := time.Until(deadline)
		if every > 0 {
			step = min(step, every)
		}
		if fault == "never-ready" {
			step = every
			if step <= 0 {
				step = time.Hour
			}
		}
		time.Sleep(max(step, time.Millisecond))
		if every > 0 {
			fmt.Println(cmp.Or(opt["--sim-log-line"], "INFO Loading safetensors checkpoint shards"))
		}
	}
	switch fault {
	case "exit-during-load":
		fmt.Println("Traceback (most recent call last):")
		fmt.Println("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB")
		return 1
	case "tp-heads":
		fmt.Println("ValueError: Total number of attention heads (28) must be divisible by tensor parallel size (3).")
		return 1
	case "port-in-use":
		fmt.Println("OSError: [Errno 98] Address already in use")
		return 1
	}

	ln, err := net.Listen("tcp", net.JoinHostPort(opt["--host"], opt["--port"]))
	if err != nil {
		fmt.Println("ERROR:", err)
		return 1
	}
	fmt.Printf("INFO Application startup complete. listening-at-unix-nano %d\n", time.Now().UnixNano())
	var mu sync.Mutex
	tokens, running := 0, 0
	authed := func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get("Authorization") != "Bearer "+key {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":"Unauthorized"}`)
			return false
		}
		return true
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		if authed(w, r) {
			fmt.Fprintf(w, `{"object":"list","data":[{"id":%q,"object":"model"}]}`, name)
		}
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		if !authed(w, r) {
			return
		}
		if code, _ := strconv.Atoi(opt["--sim-chat-status"]); code != 0 {
			fmt.Printf("INFO:     %s - \"POST /v1/chat/completions HTTP/1.1\" %d Internal Server Error\n", r.RemoteAddr, code)
			w.WriteHeader(code)
			fmt.Fprintf(w, `{"error":{"message":"CUDA error: an illegal memory access was encountered","type":"InternalServerError","param":null,"code":%d}}`, code)
			return
		}
		mu.Lock()
		tokens++
		mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []map[string]any{{"index": 0, "message": map[string]string{"role": "assistant", "content": "A"}, "finish_reason": "length"}}})
	})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=%q} %d\n", name, running)
		fmt.Fprintf(w, "# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{model_name=%q} %d\n", name, tokens)
	})
	mux.HandleFunc("POST /sim/crash", func(w http.ResponseWriter, r *http.Request) {
		fmt.Println("RuntimeError: CUDA error: an illegal memory access was encountered")
		os.Exit(3)
	})
	mux.HandleFunc("POST /sim/hang", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		running = 1
		mu.Unlock()
	})
	_ = http.Serve(ln, mux)
	return 1
}

// fakeWorker sleeps forever, like a vLLM worker; "true" ignores SIGTERM.
func fakeWorker(args []string) int {
	if len(args) > 0 && args[0] == "true" {
		signal.Ignore(syscall.SIGTERM)
	}
	for {
		time.Sleep(time.Hour)
	}
}
