package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/tasks/campaign"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/inference"
)

// badRoot holds the bad-input corpus: one folder per kind of input (see
// feed for what reads each kind), each
// input a file or folder NAME beside NAME.want, which lists what feeding
// it must produce. Every non-comment line of a .want file is a substring
// the error must contain; a first line "ok" means the input must be
// accepted, and the lines after it are substrings of the outcome.
const badRoot = "../../testdata/bad"

// maxSlidePixels is the pixel limit the PNG cases are checked against
// (prep's default for slides).
const maxSlidePixels = 64 << 20

// TestBadInputsGiveTheirExactErrors feeds every input of the corpus to the
// code that reads it in npcorch (the CLI commands where one reads it) and
// checks the error or outcome its .want file names. A panic fails the
// case; so does an input accepted silently.
func TestBadInputsGiveTheirExactErrors(t *testing.T) {
	wants, err := filepath.Glob(filepath.Join(badRoot, "*", "*.want"))
	if err != nil {
		t.Fatal(err)
	}
	if len(wants) < 40 {
		t.Fatalf("the corpus holds %d inputs, want at least 40", len(wants))
	}
	kinds := map[string]int{}
	for _, wantFile := range wants {
		input := strings.TrimSuffix(wantFile, ".want")
		kind := filepath.Base(filepath.Dir(input))
		kinds[kind]++
		t.Run(kind+"/"+filepath.Base(input), func(t *testing.T) {
			if _, err := os.Stat(input); err != nil {
				t.Fatalf("%s has no input beside it: %v", wantFile, err)
			}
			want := readWant(t, wantFile)
			outcome, err := feedSafely(t, kind, input)
			if want.ok {
				if err != nil {
					t.Fatalf("want it accepted, got error: %v", err)
				}
			} else if err == nil {
				t.Fatalf("accepted silently (%s); want an error containing %q", outcome, want.lines)
			} else {
				outcome = err.Error()
			}
			for _, w := range want.lines {
				if !strings.Contains(outcome, w) {
					t.Errorf("outcome lacks %q:\n%s", w, outcome)
				}
			}
		})
	}
	for _, k := range []string{"campaign", "registry", "dataset", "prep", "manifest", "png", "dicom", "series", "engine", "labels"} {
		if kinds[k] == 0 {
			t.Errorf("the corpus has no %s input", k)
		}
	}
}

type want struct {
	ok    bool
	lines []string
}

func readWant(t *testing.T, path string) want {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var w want
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, " \r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i == 0 && line == "ok" {
			w.ok = true
			continue
		}
		w.lines = append(w.lines, line)
	}
	if !w.ok && len(w.lines) == 0 {
		t.Fatalf("%s names no expected error", path)
	}
	return w
}

// feedSafely turns a panic into a test failure with its stack.
func feedSafely(t *testing.T, kind, input string) (outcome string, err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("panic on %s: %v\n%s", input, r, debug.Stack())
		}
	}()
	return feed(t, kind, input)
}

// feed gives one input to what reads it.
func feed(t *testing.T, kind, input string) (string, error) {
	switch kind {
	case "campaign":
		return runCLI(t, "plan", "-c", input)
	case "registry":
		data, err := os.ReadFile(input)
		if err != nil {
			return "", err
		}
		reg, err := configs.ParseRegistry(filepath.Base(input), data)
		if err != nil {
			return "", err
		}
		// The tasks' registry checks the task keys, as a campaign naming
		// this registry has them checked.
		if err := campaign.Benchmark().CheckTaskRefs(reg.TaskRefs); err != nil {
			return "", err
		}
		return fmt.Sprintf("%d models", len(reg.Names())), nil
	case "dataset":
		raw, err := dataset.LoadRaw(input, configs.DefaultStructures().IDs())
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%d patients", len(raw.Patients)), nil
	case "prep":
		return runCLI(t, "prep", "--data", input, "--out", t.TempDir())
	case "manifest":
		return scorePrepared(t, input)
	case "png":
		data, err := os.ReadFile(input)
		if err != nil {
			return "", err
		}
		m, err := imaging.DecodeImage(data, maxSlidePixels)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("decoded %v", m.Bounds()), nil
	case "dicom":
		data, err := os.ReadFile(input)
		if err != nil {
			return "", err
		}
		g, err := imaging.DecodeDICOMSlice(context.Background(), data, nil)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("decoded %v", g.Rect), nil
	case "series":
		data, err := os.ReadFile(input)
		if err != nil {
			return "", err
		}
		m, err := imaging.ParseSidecar(data)
		if err != nil {
			return "", err
		}
		if err := imaging.ValidateMeta(m); err != nil {
			return "", err
		}
		return fmt.Sprintf("%d slices", len(m.Slices)), nil
	case "engine":
		return streamFrom(t, input)
	case "labels":
		return runCLI(t, "import", "--dicom", t.TempDir(), "--labels", input, "--out", t.TempDir())
	}
	t.Fatalf("unknown corpus kind %q", kind)
	return "", nil
}

// runCLI runs npcorch's own command tree.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := root.ExecuteContext(ctx); err != nil {
		// The command's own report (prep prints each failed image) is part
		// of what the user sees.
		return "", fmt.Errorf("%w\n%s%s", err, out.String(), errOut.String())
	}
	return out.String() + errOut.String(), nil
}

// scorePrepared runs `npcorch score` on a run whose prepared dataset is the
// manifest folder under test (and whose raw dataset is empty and valid).
func scorePrepared(t *testing.T, prepDir string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	raw, run := filepath.Join(dir, "raw"), filepath.Join(dir, "run")
	for _, d := range []string{raw, run} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	abs, _ := filepath.Abs(prepDir)
	files := map[string]string{
		filepath.Join(raw, "dataset.json"): `{"format":"npcorch-dataset/1","name":"empty","patients":[]}`,
		filepath.Join(run, "run.json"): fmt.Sprintf(`{"campaign":"bad","raw":%q,"prepared":%q,"models":["Lingshu-7B"],"tasks":["pathology"],"repeats":1,"seed":1,"node":"fake:h200-1"}`,
			raw, abs),
	}
	for p, s := range files {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return runCLI(t, "score", "--run", run)
}

// streamFrom serves the raw HTTP response in input (status line, headers,
// blank line, body) to npcorch's streaming client and describes what the
// client made of it. Two headers (not sent) make huge bodies without huge
// files: "X-Corpus-Repeat: N" repeats the body's first line N times, and
// "X-Corpus-Pad: N" replaces the word PAD in the body with N letters.
func streamFrom(t *testing.T, input string) (string, error) {
	t.Helper()
	raw, err := os.ReadFile(input)
	if err != nil {
		return "", err
	}
	head, body, ok := bytes.Cut(raw, []byte("\n\n"))
	if !ok {
		t.Fatalf("%s: no blank line between the head and the body", input)
	}
	var out bytes.Buffer
	repeat, pad := 1, 0
	for _, line := range strings.Split(string(head), "\n") {
		if v, ok := strings.CutPrefix(line, "X-Corpus-Repeat: "); ok {
			if repeat, err = strconv.Atoi(v); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if v, ok := strings.CutPrefix(line, "X-Corpus-Pad: "); ok {
			if pad, err = strconv.Atoi(v); err != nil {
				t.Fatal(err)
			}
			body = bytes.Replace(body, []byte("PAD"), bytes.Repeat([]byte("y"), pad), 1)
			continue
		}
		out.WriteString(line + "\r\n")
	}
	out.WriteString("\r\n")
	if repeat > 1 {
		first, rest, _ := bytes.Cut(body, []byte("\n"))
		out.Write(bytes.Repeat(append(first, '\n'), repeat))
		body = rest
	}
	out.Write(body)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				// Read the request before answering, as a server would.
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err == nil {
					req.Body.Close()
				}
				conn.Write(out.Bytes())
			}()
		}
	}()
	c := inference.NewClient(configs.ClientSettings{ConnectTimeout: 2 * time.Second, FirstTokenTimeout: 5 * time.Second,
		ChunkTimeout: 5 * time.Second, TotalTimeout: 20 * time.Second})
	defer c.Close()
	ep := launcher.Endpoint{Model: "bad", BaseURL: "http://" + ln.Addr().String() + "/v1", APIKey: "k"}
	ans, err := c.Stream(context.Background(), ep, openai.ChatCompletionRequest{Model: "m",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "?"}}})
	if err != nil {
		f, ok := err.(*inference.AttemptFailure)
		if !ok {
			return "", fmt.Errorf("not a *inference.AttemptFailure (%T): %w", err, err)
		}
		return "", fmt.Errorf("%w [retryable=%v]", f, f.Retryable())
	}
	return fmt.Sprintf("answered %d bytes %.60q finish=%s completion_tokens=%d", len(ans.Content), ans.Content, ans.FinishReason, ans.Usage.CompletionTokens), nil
}
