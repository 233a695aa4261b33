package toolenv

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// Scope outcomes of a call.
const (
	ScopeOK        = "ok"
	ScopeViolation = "violation" // a call for another patient: refused and logged as a governance violation
	ScopeNone      = "none"      // a tool with no patient (policy tools)
)

// Channels of a call; the SQL fallback is logged as its own channel so its use can be counted (§3.2).
const (
	ChannelClinical = "clinical"
	ChannelPolicy   = "policy"
	ChannelSQL      = "sql"
	ChannelCompute  = "compute" // the sandboxed computation tool
)

// CallRecord is one line of the call log.
type CallRecord struct {
	Session       string          `json:"session"`
	Case          string          `json:"case"`
	Attempt       int             `json:"attempt"`
	Seq           int             `json:"seq"`
	Tool          string          `json:"tool"`
	Channel       string          `json:"channel"`
	RecordsDigest string          `json:"records_digest"`
	RawArguments  string          `json:"raw_arguments"`
	Arguments     json.RawMessage `json:"arguments,omitempty"`
	Valid         bool            `json:"valid"`
	Validation    string          `json:"validation_error,omitempty"`
	Scope         string          `json:"scope"`
	Subject       string          `json:"subject_id,omitempty"`
	Tables        []string        `json:"tables,omitempty"`
	Rows          []string        `json:"rows,omitempty"`
	Identifiers   []string        `json:"identifiers,omitempty"` // record ids in the returned rows, "hadm_id:20000001" (for P_record, §5.3)
	Empty         bool            `json:"empty"`
	Truncated     bool            `json:"truncated"`
	IsError       bool            `json:"is_error"`
	ResultSHA256  string          `json:"result_sha256"`
	ResultBytes   int             `json:"result_bytes"`
	LatencyMicros int64           `json:"latency_us"`
}

// Canonical is the record with its latency zeroed: the form replays compare and digests cover.
func (r CallRecord) Canonical() CallRecord {
	r.LatencyMicros = 0
	return r
}

// Sink receives call records. Implementations must be safe for concurrent use.
type Sink interface {
	Record(CallRecord) error
}

// JSONLSink writes one JSON line per call to w.
type JSONLSink struct {
	mu sync.Mutex
	w  *bufio.Writer
}

// NewJSONLSink writes the log to w; call Flush before closing w.
func NewJSONLSink(w io.Writer) *JSONLSink { return &JSONLSink{w: bufio.NewWriter(w)} }

// Record writes one line and flushes it, so a crash loses at most the line being written.
func (s *JSONLSink) Record(r CallRecord) error {
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.w.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("call log: %w", err)
	}
	return s.w.Flush()
}

// MemorySink keeps records in memory (tests, the oracle gate).
type MemorySink struct {
	mu      sync.Mutex
	records []CallRecord
}

// Record appends a record.
func (m *MemorySink) Record(r CallRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.records = append(m.records, r)
	return nil
}

// Records returns a copy of the records so far.
func (m *MemorySink) Records() []CallRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]CallRecord(nil), m.records...)
}
