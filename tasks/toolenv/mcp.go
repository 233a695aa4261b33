package toolenv

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/npcorch/npcorch/launcher/access"
)

// ServerName is the MCP implementation name the server announces.
const ServerName = "npcorch-clinicare"

// MCPServer returns an MCP server whose tools run in this session. Arguments reach Call raw, so the session
// validates and logs them itself; a malformed call comes back to the model as a tool error (isError), not a
// protocol error.
func (s *Session) MCPServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: ServerName, Version: "1"}, nil)
	for _, t := range s.env.Tools() {
		srv.AddTool(&mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.Schema}, s.handler(t.Name))
	}
	return srv
}

func (s *Session) handler(name string) mcp.ToolHandler {
	return func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res := s.Call(name, req.Params.Arguments)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(res.JSON)}}, IsError: res.IsError}, nil
	}
}

// ServeStdio serves one session over stdin/stdout until the client disconnects or ctx ends.
func (s *Session) ServeStdio(ctx context.Context) error {
	return s.MCPServer().Run(ctx, &mcp.StdioTransport{})
}

// HTTPHandler serves the environment over MCP Streamable HTTP. A client names its run in the URL:
// /mcp?case=CASE&attempt=N&session=NAME; every MCP session of one (case, attempt, session) shares one Session,
// so its calls share one sequence. Unknown cases are refused with 400.
func (e *Env) HTTPHandler(sink Sink) http.Handler {
	var mu sync.Mutex
	servers := map[string]*mcp.Server{}
	get := func(r *http.Request) *mcp.Server {
		q := r.URL.Query()
		attempt, err := strconv.Atoi(q.Get("attempt"))
		if err != nil {
			attempt = 1
		}
		name := q.Get("session")
		if name == "" {
			name = q.Get("case") + "#" + strconv.Itoa(attempt)
		}
		key := q.Get("case") + "\x00" + strconv.Itoa(attempt) + "\x00" + name
		mu.Lock()
		defer mu.Unlock()
		if srv, ok := servers[key]; ok {
			return srv
		}
		s, err := e.Open(name, q.Get("case"), attempt, sink)
		if err != nil {
			return nil
		}
		servers[key] = s.MCPServer()
		return servers[key]
	}
	h := mcp.NewStreamableHTTPHandler(get, nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c := r.URL.Query().Get("case"); e.scopes[c] == "" {
			http.Error(w, fmt.Sprintf("unknown case %q: name one of the corpus's cases in the URL, /mcp?case=CASE&attempt=N&session=NAME (clinicare/cases.jsonl lists them)", c), http.StatusBadRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Listener is a bound address for the HTTP server with its access rule: loopback needs no token (and answers
// only loopback Host names, against DNS rebinding); any other address needs one.
type Listener struct {
	net.Listener
	token string
}

// Listen binds addr. An address reachable from other machines is refused without a token.
func Listen(addr, token string) (*Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("tool server --listen %s: %w (choose another address or port)", addr, err)
	}
	if !access.LoopbackAddr(ln.Addr()) && token == "" {
		ln.Close()
		return nil, fmt.Errorf("tool server --listen %s is reachable from other machines: give a token (--token-file FILE) or listen on loopback (127.0.0.1:PORT)", addr)
	}
	return &Listener{Listener: ln, token: token}, nil
}

// Guard wraps a handler with the listener's access rule.
func (l *Listener) Guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if l.token == "" {
			if !access.LoopbackHost(r.Host) {
				http.Error(w, "the tool server listens on loopback without a token and answers only localhost, 127.0.0.1 or [::1]", http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		got, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !access.TokenMatches(got, l.token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="npcorch-tools"`)
			http.Error(w, "a token is required: send Authorization: Bearer TOKEN", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
