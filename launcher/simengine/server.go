package simengine

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// routes is the engine's HTTP surface: vLLM's endpoints plus POST
// /sim/fault. --api-key guards /v1/* only, as in vLLM.
func (e *engine) routes() http.Handler {
	metricsHandler := promhttp.HandlerFor(e.m.registry, promhttp.HandlerOpts{})
	type route struct {
		method string
		h      http.HandlerFunc
	}
	table := map[string]route{
		"/health":              {http.MethodGet, e.handleHealth},
		"/version":             {http.MethodGet, e.handleVersion},
		"/metrics":             {http.MethodGet, metricsHandler.ServeHTTP},
		"/v1/models":           {http.MethodGet, e.handleModels},
		"/v1/chat/completions": {http.MethodPost, e.handleChat},
		"/sim/fault":           {http.MethodPost, e.handleFault},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if e.o.AccessLog && sw.status != 0 {
				e.log.access(r.RemoteAddr, r.Method, r.URL.RequestURI(), r.Proto, sw.status)
			}
		}()
		rt, ok := table[r.URL.Path]
		switch {
		case !ok:
			writeJSON(sw, http.StatusNotFound, map[string]string{"detail": "Not Found"})
		case r.Method != rt.method:
			writeJSON(sw, http.StatusMethodNotAllowed, map[string]string{"detail": "Method Not Allowed"})
		case strings.HasPrefix(r.URL.Path, "/v1") && !e.authorized(r):
			writeJSON(sw, http.StatusUnauthorized, map[string]string{"error": "Unauthorized"})
		default:
			rt.h(sw, r)
		}
	})
}

// authorized checks the bearer token against the key (--api-key or
// VLLM_API_KEY).
func (e *engine) authorized(r *http.Request) bool {
	if e.o.APIKey == "" {
		return true
	}
	want := []byte("Bearer " + e.o.APIKey)
	return subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) == 1
}

// handleHealth answers 200 once started and 503 while not ready or dead.
func (e *engine) handleHealth(w http.ResponseWriter, r *http.Request) {
	if !e.ready.Load() || e.dead() {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (e *engine) handleVersion(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"version": simVersion})
}

// modelList and modelCard are vLLM's /v1/models body, fields in its order.
type (
	modelList struct {
		Object string      `json:"object"`
		Data   []modelCard `json:"data"`
	}
	modelCard struct {
		ID          string            `json:"id"`
		Object      string            `json:"object"`
		Created     int64             `json:"created"`
		OwnedBy     string            `json:"owned_by"`
		Root        string            `json:"root"`
		Parent      *string           `json:"parent"`
		MaxModelLen int               `json:"max_model_len"`
		Permission  []modelPermission `json:"permission"`
	}
	modelPermission struct {
		ID                 string  `json:"id"`
		Object             string  `json:"object"`
		Created            int64   `json:"created"`
		AllowCreateEngine  bool    `json:"allow_create_engine"`
		AllowSampling      bool    `json:"allow_sampling"`
		AllowLogprobs      bool    `json:"allow_logprobs"`
		AllowSearchIndices bool    `json:"allow_search_indices"`
		AllowView          bool    `json:"allow_view"`
		AllowFineTuning    bool    `json:"allow_fine_tuning"`
		Organization       string  `json:"organization"`
		Group              *string `json:"group"`
		IsBlocking         bool    `json:"is_blocking"`
	}
)

// handleModels lists the served model the way vLLM's /v1/models does.
func (e *engine) handleModels(w http.ResponseWriter, r *http.Request) {
	created := e.started.Unix()
	writeJSON(w, http.StatusOK, modelList{Object: "list", Data: []modelCard{{
		ID: e.o.ServedName, Object: "model", Created: created, OwnedBy: "vllm", Root: e.o.Model,
		MaxModelLen: e.o.MaxModelLen,
		Permission: []modelPermission{{
			ID: "modelperm-" + e.requestID(0)[len("chatcmpl-"):], Object: "model_permission", Created: created,
			AllowSampling: true, AllowLogprobs: true, AllowView: true, Organization: "*",
		}},
	}}})
}

// handleFault switches the runtime fault: {"fault":"hang"|"503"|"stream-error"|"crash"|"none"}.
func (e *engine) handleFault(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Fault string `json:"fault"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req); err != nil {
		e.fail(w, http.StatusBadRequest, `body must be {"fault": "hang"|"503"|"stream-error"|"crash"|"none"}: `+err.Error())
		return
	}
	if req.Fault == "crash" {
		e.crashAfterResponse("POST /sim/fault crash")
		writeJSON(w, http.StatusOK, map[string]any{"fault": "crash", "completed": e.faults.completedCount()})
		return
	}
	m, ok := runtimeFaults[req.Fault]
	if !ok {
		e.fail(w, http.StatusBadRequest, `unknown fault "`+req.Fault+`" (choose from hang, 503, stream-error, crash, none)`)
		return
	}
	e.faults.set(m)
	e.log.vllm("WARNING", "sim_engine.py:1", "fault switched to %q by POST /sim/fault", req.Fault)
	writeJSON(w, http.StatusOK, map[string]any{"fault": req.Fault, "completed": e.faults.completedCount()})
}

// errorResponse is vLLM's error body, {"error": {"message", "type",
// "param", "code"}} (ErrorResponse and ErrorInfo in
// vllm/entrypoints/openai/engine/protocol.py), fields in its order. The
// flat {"object": "error", ...} of vLLM before PR #22099 is gone.
type (
	errorResponse struct {
		Error errorInfo `json:"error"`
	}
	errorInfo struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    int     `json:"code"`
	}
)

// newErrorResponse builds vLLM's error body for an HTTP status; param
// names the request field at fault ("" for none).
func newErrorResponse(status int, msg, param string) errorResponse {
	typ := "BadRequestError"
	switch status {
	case http.StatusNotFound:
		typ = "NotFoundError"
	case http.StatusRequestEntityTooLarge:
		typ = "RequestEntityTooLarge"
	case http.StatusInternalServerError:
		typ = "InternalServerError"
	case http.StatusServiceUnavailable:
		typ = "ServiceUnavailableError"
	}
	info := errorInfo{Message: msg, Type: typ, Code: status}
	if param != "" {
		info.Param = &param
	}
	return errorResponse{Error: info}
}

// fail writes vLLM's error body with the given status.
func (e *engine) fail(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, newErrorResponse(status, msg, ""))
}

// failRequest answers a bad request with 400, naming the field at fault
// when the error knows it (a *requestError).
func (e *engine) failRequest(w http.ResponseWriter, err error) {
	param := ""
	var re *requestError
	if errors.As(err, &re) {
		param = re.param
	}
	writeJSON(w, http.StatusBadRequest, newErrorResponse(http.StatusBadRequest, err.Error(), param))
}

// writeJSON writes v as the whole response.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body := marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// marshal encodes v as compact JSON without HTML escaping, as Python's
// pydantic does.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // only the engine's own types are encoded
		return []byte(`{"error":{"message":"sim-engine could not encode its response","type":"InternalServerError","param":null,"code":500}}`)
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// statusWriter remembers the status for the access log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the Flusher underneath.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
