package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/tasks/clinicare"
	"github.com/npcorch/npcorch/tasks/clinicare/policy"
	"github.com/npcorch/npcorch/tasks/ehr"
	"github.com/npcorch/npcorch/tasks/toolenv"
)

// serverGCPercent is the tool server's GC target (see serveToolsHTTP).
const serverGCPercent = 400

// toolsTokenEnv holds the tool server's token when --token-file is not given.
const toolsTokenEnv = "NPCORCH_TOOLS_TOKEN"

// synthClinicare writes the CliniCARE corpus (records, cases, truth) to out, byte-identical per seed.
func synthClinicare(out string, seed int64, force bool, w io.Writer) error {
	if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
		if !force {
			return fmt.Errorf("--out %s is not empty: choose a new folder or give --force to replace it", out)
		}
		if err := os.RemoveAll(out); err != nil {
			return err
		}
	}
	start := time.Now()
	specs, err := clinicare.LoadSpecs()
	if err != nil {
		return err
	}
	c, err := clinicare.Generate(uint64(seed), specs)
	if err != nil {
		return err
	}
	if err := c.Write(out, uint64(seed)); err != nil {
		return err
	}
	fmt.Fprintf(w, "synth --clinicare: %d scenarios, %d cases, records digest %.12s in %s (seed %d, %s)\n",
		len(specs), len(c.Cases), c.DB.Digest(), out, seed, time.Since(start).Round(10*time.Millisecond))
	return nil
}

type toolsFlags struct {
	records, caseID, session, logFile, listen, tokenFile, sandboxDir string
	attempt                                                          int
}

func newToolsCmd() *cobra.Command {
	var f toolsFlags
	cmd := &cobra.Command{
		Use:   "tools --records DIR (--case ID | --listen ADDR)",
		Short: "Serve the CliniCARE tool environment over MCP (stdio, or Streamable HTTP with --listen)",
		Long: `tools serves the governed CliniCARE tool environment over the Model Context
Protocol. With --case it speaks MCP on stdin/stdout for that one case (how an
MCP client such as opencode or mcp-inspector starts it). With --listen it
serves Streamable HTTP at /mcp; a client names its run in the URL:
/mcp?case=CASE&attempt=N&session=NAME. GET /healthz answers 200 once the
server listens (the launcher's readiness check). Loopback needs no token; any other
address needs one (--token-file, or ` + toolsTokenEnv + `).
Every call is logged by the server, one JSON line per call, to --log (default
standard error).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runTools(cmd.Context(), f, cmd.ErrOrStderr()) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.records, "records", "", "corpus folder written by `npcorch synth --clinicare`")
	fl.StringVar(&f.caseID, "case", "", "serve this case on stdio")
	fl.IntVar(&f.attempt, "attempt", 1, "attempt number recorded in the log (stdio)")
	fl.StringVar(&f.session, "session", "", "session name recorded in the log (stdio; default CASE#ATTEMPT)")
	fl.StringVar(&f.logFile, "log", "", "append the call log to FILE (default standard error)")
	fl.StringVar(&f.listen, "listen", "", "serve Streamable HTTP at ADDR (HOST:PORT)")
	fl.StringVar(&f.sandboxDir, "sandbox-dir", "", "scratch folders of the compute tool (default: a temporary folder removed at exit)")
	fl.StringVar(&f.tokenFile, "token-file", "", "file holding the HTTP token (or set "+toolsTokenEnv+"); required off loopback")
	_ = cmd.MarkFlagRequired("records")
	return cmd
}

func runTools(ctx context.Context, f toolsFlags, stderr io.Writer) error {
	if (f.caseID == "") == (f.listen == "") {
		return errors.New("give exactly one of --case (stdio) or --listen (HTTP)")
	}
	env, err := loadToolEnv(f.records)
	if err != nil {
		return err
	}
	cleanup, err := enableCompute(env, f.sandboxDir, stderr)
	if err != nil {
		return err
	}
	defer cleanup()
	logW := stderr
	if f.logFile != "" {
		lf, err := os.OpenFile(f.logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("--log: %w", err)
		}
		defer lf.Close()
		logW = lf
	}
	sink := toolenv.NewJSONLSink(logW)
	if f.caseID != "" {
		name := f.session
		if name == "" {
			name = fmt.Sprintf("%s#%d", f.caseID, f.attempt)
		}
		s, err := env.Open(name, f.caseID, f.attempt, sink)
		if err != nil {
			return err
		}
		return s.ServeStdio(ctx)
	}
	return serveToolsHTTP(ctx, env, sink, f, stderr)
}

// enableCompute offers the sandboxed compute tool when bubblewrap can start, and says loudly when it cannot:
// the tool is then absent, never run unsandboxed.
func enableCompute(env *toolenv.Env, dir string, stderr io.Writer) (func(), error) {
	cleanup := func() {}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "npcorch-sandbox-")
		if err != nil {
			return cleanup, err
		}
		dir, cleanup = tmp, func() { os.RemoveAll(tmp) }
	}
	sb, err := toolenv.NewSandbox(dir)
	if err != nil {
		fmt.Fprintf(stderr, "tools: WARNING: the compute tool is ABSENT: %v\n", err)
		return cleanup, nil
	}
	env.EnableSandbox(sb)
	return cleanup, nil
}

func loadToolEnv(dir string) (*toolenv.Env, error) {
	db, err := ehr.Load(dir)
	if err != nil {
		return nil, err
	}
	cases, err := clinicare.LoadCases(dir)
	if err != nil {
		return nil, err
	}
	pol, err := policy.Load()
	if err != nil {
		return nil, err
	}
	scopes := make([]toolenv.Scope, len(cases))
	for i, c := range cases {
		scopes[i] = toolenv.Scope{Case: c.ID, Subject: c.SubjectID}
	}
	return toolenv.New(db, pol, scopes)
}

func serveToolsHTTP(ctx context.Context, env *toolenv.Env, sink toolenv.Sink, f toolsFlags, stderr io.Writer) error {
	token := os.Getenv(toolsTokenEnv)
	if f.tokenFile != "" {
		data, err := os.ReadFile(f.tokenFile)
		if err != nil {
			return fmt.Errorf("--token-file: %w", err)
		}
		if token = strings.TrimSpace(string(data)); token == "" {
			return fmt.Errorf("--token-file %s is empty: write the token in it", f.tokenFile)
		}
	}
	ln, err := toolenv.Listen(f.listen, token)
	if err != nil {
		return err
	}
	if os.Getenv("GOGC") == "" {
		// A fifth of the server's CPU a call was GC over a small, fixed live heap (the records): collect
		// at 4× growth instead of 2×. GOGC in the environment still rules.
		debug.SetGCPercent(serverGCPercent)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", env.HTTPHandler(sink))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	srv := &http.Server{Handler: ln.Guard(mux), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "tools: MCP Streamable HTTP at http://%s/mcp?case=CASE (%d cases, records %.12s)\n", ln.Addr(), len(env.Cases()), env.RecordsDigest())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shut)
	}
}

// toolsAnnounce matches the line in which `npcorch tools --listen` names the address it listens on.
var toolsAnnounce = regexp.MustCompile(`MCP Streamable HTTP at http://(\S+?)/mcp`)

// toolsChild describes `npcorch tools --listen 127.0.0.1:0` as a launcher child: started through the engine shim
// (exe serve engine-shim), ready once it announced its port and GET /healthz answers 200, stopped and verified like
// an engine. env is the child's whole environment.
func toolsChild(exe string, env []string, records, callLog string, log io.Writer) launcher.ChildSpec {
	return launcher.ChildSpec{
		Name:     "tool server",
		Argv:     []string{exe, "tools", "--records", records, "--listen", "127.0.0.1:0", "--log", callLog},
		Env:      env,
		Shim:     []string{exe, "serve", "engine-shim"},
		Log:      log,
		Announce: toolsAnnounce,
		Health:   "/healthz",
	}
}
