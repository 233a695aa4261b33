package toolenv

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/npcorch/npcorch/tasks/clinicare/policy"
	"github.com/npcorch/npcorch/tasks/ehr"
)

// Scope binds a case to its patient: the only subject_id a session for that case may read.
type Scope struct {
	Case    string
	Subject string
}

// New builds the environment over a record store, a policy corpus and the cases' scopes.
func New(db *ehr.DB, policies *policy.Corpus, scopes []Scope) (*Env, error) {
	e := &Env{db: db, policies: policies, scopes: map[string]string{}, labels: newLabels(db), byName: map[string]int{}}
	for _, s := range scopes {
		if prev, dup := e.scopes[s.Case]; dup && prev != s.Subject {
			return nil, fmt.Errorf("case %s is scoped to two patients (%s, %s)", s.Case, prev, s.Subject)
		}
		e.scopes[s.Case] = s.Subject
	}
	e.tools = allTools()
	for i, t := range e.tools {
		e.byName[t.name] = i
	}
	return e, nil
}

// RecordsDigest is the digest of the records the tools read.
func (e *Env) RecordsDigest() string { return e.db.Digest() }

// Cases lists the case ids the environment can open sessions for, sorted.
func (e *Env) Cases() []string { return ehr.SortedKeys(e.scopes) }

// Session is one agent run's connection to the environment: a case, an attempt, its own call sequence.
type Session struct {
	env     *Env
	id      string
	caseID  string
	attempt int
	subject string
	sink    Sink
	mu      sync.Mutex
	seq     int
}

// Open starts a session for a case. The session id names the run in the log (it is the caller's, so a replay
// logs the same id).
func (e *Env) Open(sessionID, caseID string, attempt int, sink Sink) (*Session, error) {
	subject, ok := e.scopes[caseID]
	if !ok {
		return nil, fmt.Errorf("no case %q in this corpus (%d cases; see clinicare/cases.jsonl)", caseID, len(e.scopes))
	}
	if sink == nil {
		sink = &MemorySink{}
	}
	return &Session{env: e, id: sessionID, caseID: caseID, attempt: attempt, subject: subject, sink: sink}, nil
}

// Result is what a tool call returns: JSON bytes, and whether they describe an error.
type Result struct {
	JSON    []byte
	IsError bool
}

// Call runs one tool call from its raw argument string, logs it, and returns its result. It never panics on
// agent input: malformed arguments, an unknown tool or a refused scope come back as an error result.
func (s *Session) Call(name string, raw []byte) Result {
	start := time.Now()
	s.mu.Lock()
	s.seq++
	seq := s.seq
	s.mu.Unlock()
	rec := CallRecord{Session: s.id, Case: s.caseID, Attempt: s.attempt, Seq: seq, Tool: name,
		RecordsDigest: s.env.db.Digest(), RawArguments: string(raw), Scope: ScopeNone}
	res := s.env.invoke(s.subject, name, raw, &rec)
	sum := sha256.Sum256(res.JSON)
	rec.ResultSHA256, rec.ResultBytes, rec.IsError = hex.EncodeToString(sum[:]), len(res.JSON), res.IsError
	rec.LatencyMicros = time.Since(start).Microseconds()
	if err := s.sink.Record(rec); err != nil {
		return errorResult(fmt.Errorf("the call log could not be written (%v); the call's result is withheld", err))
	}
	return res
}

// invoke resolves, parses, scope-checks and runs a tool, filling the record's fields.
func (e *Env) invoke(subject, name string, raw []byte, rec *CallRecord) Result {
	i, ok := e.byName[name]
	if !ok {
		rec.Validation = fmt.Sprintf("unknown tool %q", name)
		return errorResult(errors.New(rec.Validation))
	}
	t := e.tools[i]
	rec.Channel = t.channel
	out, err := t.run(e, subject, raw, rec)
	var se scopeError
	switch {
	case errors.As(err, &se):
		rec.Scope = ScopeViolation
		return errorResult(err)
	case err != nil:
		return errorResult(err)
	}
	rec.Tables, rec.Rows, rec.Empty, rec.Truncated = sortedSet(out.tables), out.rows, out.empty, out.truncated
	rec.Identifiers = e.identifiers(out.rows)
	data, err := json.Marshal(out.value)
	if err != nil {
		return errorResult(fmt.Errorf("encode the result: %w", err))
	}
	return Result{JSON: data}
}

// identifierColumns are the record-level identifiers §5.3 names (patient, admission, stay, note) and the other ids
// a report may cite.
var identifierColumns = []string{"subject_id", "hadm_id", "stay_id", "note_id", "labevent_id", "poe_id", "emar_id", "microevent_id", "pharmacy_id", "transfer_id"}

// identifiers lists the distinct identifiers of the rows a call returned, sorted.
func (e *Env) identifiers(refs []string) []string {
	var ids []string
	for _, s := range refs {
		ref, err := ehr.ParseRef(s)
		if err != nil {
			continue
		}
		row, ok := e.db.Lookup(ref)
		if !ok {
			continue
		}
		for _, c := range identifierColumns {
			if v := row.Get(c); v != "" {
				ids = append(ids, c+":"+v)
			}
		}
	}
	return sortedSet(ids)
}

func errorResult(err error) Result {
	data, _ := json.Marshal(map[string]string{"error": err.Error()})
	return Result{JSON: data, IsError: true}
}

func sortedSet(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}
