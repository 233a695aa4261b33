package inference

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Failure kinds. Every Failure is an infrastructure failure: the request
// produced no answer, and it is never stored as a prediction.
const (
	FailConnect    = "connect"             // connection refused or dial timeout
	FailFirstToken = "first_token_timeout" // no chunk in time after sending
	FailChunk      = "chunk_timeout"       // a stream stalled between chunks
	FailTotal      = "total_timeout"       // the request ran past its total budget
	FailServer     = "server_error"        // HTTP 5xx or 429
	FailStream     = "stream_error"        // an error object inside a 200 stream
	FailTruncated  = "truncated"           // the stream ended without a finish reason
	FailTransport  = "transport"           // the request failed in transit before a stream opened (TLS, reset, bad URL)
	FailRejected   = "rejected"            // HTTP 4xx: the request itself is wrong
)

// AttemptFailure is an infrastructure failure of one attempt of a request.
// Status is the HTTP status, or for a stream_error the code the engine put
// in the error it streamed after its 200; Err carries the engine's own
// message.
type AttemptFailure struct {
	Kind   string
	Status int
	Err    error
}

func (f *AttemptFailure) Error() string {
	switch {
	case f.Status != 0 && f.Kind == FailStream:
		return fmt.Sprintf("%s (code %d inside the 200 stream): %v", f.Kind, f.Status, f.Err)
	case f.Status != 0:
		return fmt.Sprintf("%s (HTTP %d): %v", f.Kind, f.Status, f.Err)
	}
	return fmt.Sprintf("%s: %v", f.Kind, f.Err)
}

func (f *AttemptFailure) Unwrap() error { return f.Err }

// Retryable reports whether another attempt may succeed: transport errors,
// 5xx, stream errors and timeouts are; a rejected request is not.
func (f *AttemptFailure) Retryable() bool { return f.Kind != FailRejected }

// engineError is what an engine said went wrong. Engines write it in
// several shapes, all of which the client reads:
//
//   - vLLM since PR #22099: {"error": {"message", "type", "param", "code"}},
//     as the HTTP body and, after a 200, as a stream line;
//   - vLLM before it: {"object": "error", "message", "type", "param", "code"};
//   - vLLM's auth middleware: {"error": "Unauthorized"};
//   - FastAPI's own: {"detail": "Not Found"} (detail may be a list);
//   - OpenAI-style providers: string codes ("rate_limit_exceeded").
type engineError struct {
	Message string
	Type    string
	// Code is the numeric code the body carries (vLLM repeats the HTTP
	// status; inside a stream it is the only status there is); 0 if none.
	Code int
}

// parseEngineError reads body in any of the shapes above; ok is false
// when body is none of them.
func parseEngineError(body []byte) (engineError, bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimSpace(body), &top) != nil {
		return engineError{}, false
	}
	if inner, ok := top["error"]; ok {
		var s string
		if json.Unmarshal(inner, &s) == nil {
			return engineError{Message: s}, s != ""
		}
		var fields map[string]json.RawMessage
		if json.Unmarshal(inner, &fields) == nil {
			return errorFields(fields)
		}
		return engineError{}, false
	}
	if _, ok := top["message"]; ok {
		return errorFields(top)
	}
	if d, ok := top["detail"]; ok {
		var s string
		if json.Unmarshal(d, &s) != nil {
			s = string(d) // FastAPI's validation detail is a list
		}
		return engineError{Message: s}, true
	}
	return engineError{}, false
}

func errorFields(f map[string]json.RawMessage) (engineError, bool) {
	var e engineError
	if json.Unmarshal(f["message"], &e.Message) != nil {
		e.Message = strings.TrimSpace(string(f["message"]))
	}
	_ = json.Unmarshal(f["type"], &e.Type)
	e.Code = codeOf(f["code"])
	return e, e.Message != "" || e.Type != "" || e.Code != 0
}

// codeOf reads a code written as a number or as a numeric string.
func codeOf(raw json.RawMessage) int {
	var n int
	if json.Unmarshal(raw, &n) == nil {
		return n
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if n, err := strconv.Atoi(s); err == nil {
			return n
		}
	}
	return 0
}

// text is the message a failure record keeps: the engine's words, with
// its error type when it gave one and the message does not say it.
func (e engineError) text() string {
	msg := e.Message
	if msg == "" {
		msg = "(no message)"
	}
	if e.Type != "" && !strings.Contains(msg, e.Type) {
		msg += " [" + e.Type + "]"
	}
	return msg
}

// bodySnippet is an unreadable error body, cut to a readable size.
func bodySnippet(body []byte) string {
	const max = 300
	b := bytes.TrimSpace(body)
	if len(b) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(b[cut]) {
			cut--
		}
		return strconv.Quote(string(b[:cut])) + "..."
	}
	return strconv.Quote(string(b))
}
