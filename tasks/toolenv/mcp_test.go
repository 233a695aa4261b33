package toolenv_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/npcorch/npcorch/tasks/toolenv"
)

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func serveHTTP(t *testing.T, env *toolenv.Env, sink toolenv.Sink, addr, token string) string {
	t.Helper()
	ln, err := toolenv.Listen(addr, token)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: ln.Guard(env.HTTPHandler(sink))}
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return "http://" + ln.Addr().String()
}

// TestStreamableHTTPRoundTrip: the tools over MCP Streamable HTTP on loopback, a session per (case, attempt) with
// its calls in one logged sequence, and a token demanded when one is set.
func TestStreamableHTTPRoundTrip(t *testing.T) {
	e, c := env(t)
	sink := &toolenv.MemorySink{}
	cs := c.Cases[5]
	base := serveHTTP(t, e, sink, "127.0.0.1:0", "s3cret")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	endpoint := base + "/mcp?case=" + cs.ID + "&attempt=2&session=http-test"
	if resp, err := http.Post(endpoint, "application/json", strings.NewReader("{}")); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a request without the token: %v %v; want 401", resp.StatusCode, err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	sess, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint,
		HTTPClient: &http.Client{Transport: bearer{"s3cret", http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	tools, err := sess.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != len(e.Tools()) {
		t.Fatalf("tools/list: %d tools, %v; want %d", len(tools.Tools), err, len(e.Tools()))
	}
	for _, args := range []map[string]any{{"subject_id": cs.SubjectID}, {"subject_id": "10000001"}} {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "get_diagnoses", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		if own := args["subject_id"] == cs.SubjectID; res.IsError == own {
			t.Errorf("get_diagnoses %v: isError=%v", args, res.IsError)
		}
	}
	recs := sink.Records()
	if len(recs) != 2 || recs[0].Session != "http-test" || recs[0].Attempt != 2 || recs[1].Seq != 2 || recs[1].Scope != toolenv.ScopeViolation {
		t.Fatalf("log: %+v", recs)
	}
}

// TestHTTPNamesAnUnknownCase: a URL without a known case is refused with a message saying what to send.
func TestHTTPNamesAnUnknownCase(t *testing.T) {
	e, _ := env(t)
	base := serveHTTP(t, e, &toolenv.MemorySink{}, "127.0.0.1:0", "")
	resp, err := http.Post(base+"/mcp?case=no-such-case", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `unknown case "no-such-case"`) {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

// TestListenRefusesOpenAddressWithoutToken mirrors `run --listen`: off loopback a token is required.
func TestListenRefusesOpenAddressWithoutToken(t *testing.T) {
	_, err := toolenv.Listen("0.0.0.0:0", "")
	if err == nil || !strings.Contains(err.Error(), "reachable from other machines") {
		t.Fatalf("want a refusal, got %v", err)
	}
}

// TestLoopbackWithoutTokenRefusesForeignHost guards against DNS rebinding.
func TestLoopbackWithoutTokenRefusesForeignHost(t *testing.T) {
	e, c := env(t)
	base := serveHTTP(t, e, &toolenv.MemorySink{}, "127.0.0.1:0", "")
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp?case="+c.Cases[0].ID, strings.NewReader("{}"))
	req.Host = "evil.example:80"
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign Host: %v %v; want 403", resp.StatusCode, err)
	}
}

// TestToolSchemasAreObjects: every tool's input schema is a JSON object schema with its properties, as MCP
// clients (and models) read it from tools/list.
func TestToolSchemasAreObjects(t *testing.T) {
	e, _ := env(t)
	for _, ti := range e.Tools() {
		if ti.Schema.Type != "object" {
			t.Errorf("%s: schema type %q", ti.Name, ti.Schema.Type)
		}
		if ti.Channel == toolenv.ChannelClinical {
			if _, ok := ti.Schema.Properties["subject_id"]; !ok {
				t.Errorf("%s: no subject_id property: %v", ti.Name, keys(ti.Schema.Properties))
			}
		}
	}
	labs := findTool(e, "get_labs")
	for _, p := range []string{"hadm_id", "since", "itemid", "limit"} {
		if _, ok := labs.Schema.Properties[p]; !ok {
			t.Errorf("get_labs lacks %s (embedded arguments must flatten): %v", p, keys(labs.Schema.Properties))
		}
	}
}

func findTool(e *toolenv.Env, name string) toolenv.ToolInfo {
	for _, ti := range e.Tools() {
		if ti.Name == name {
			return ti
		}
	}
	panic(errors.New("no tool " + name))
}

func keys[V any](m map[string]V) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return fmt.Sprint(ks)
}
