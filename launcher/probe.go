package launcher

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// stage is how far a starting engine has come; each new stage is progress
// that pushes the no-progress deadline.
type stage int

const (
	stageDown      stage = iota // nothing answers
	stageListening              // something answers HTTP
	stageHealthy                // /health 200
	stageListed                 // /v1/models lists our name with our key; warm-up chat under way
	stageReady                  // warm-up chat answered
)

func (s stage) String() string {
	return [...]string{"down", "listening", "healthy", "listed", "ready"}[s]
}

// Describe says what reaching the stage means, for start-up progress on
// the console.
func (s stage) Describe() string {
	return [...]string{"not answering", "port open", "/health answers 200", "model listed in /v1/models; warm-up chat sent", "warm-up chat answered"}[s]
}

// wrongKey is sent to prove that the server checks our API key.
const wrongKey = "npcorch-probe-wrong-key"

// prober proves readiness of one launched (or external) engine.
type prober struct {
	client   *http.Client
	inv      Invocation
	port     int
	pgid     int           // 0 when nothing was launched
	owners   ListenerCheck // nil skips the socket-owner check
	timeout  time.Duration // one probe request
	warmUp   time.Duration // the warm-up chat
	interval time.Duration
	// warmRetry spaces warm-up chats after a 5xx answer; warmFailures
	// such answers in a row fail the start (0: never).
	warmRetry    time.Duration
	warmFailures int
	owned        bool // the socket-owner check passed once
	warm5xx      int  // 5xx warm-up answers in a row
}

// fatalProbe marks a probe failure that retrying cannot fix.
type fatalProbe struct {
	kind FailureKind
	msg  string
}

func (f *fatalProbe) Error() string { return f.msg }

// probeReport is what one readiness check found: the stage reached, what
// the check saw ("GET /health: connection refused", a warm-up's 503 and
// its body), and a fatal error, if any.
type probeReport struct {
	stage stage
	note  string
	err   error
}

// run probes until ready, a fatal answer, or ctx ends. It reports every new
// stage, every change of what the checks see, and the final result; kick
// asks for an immediate probe (a new log line may mean the server just
// came up).
func (p *prober) run(ctx context.Context, kick <-chan struct{}, report func(probeReport)) {
	last := probeReport{stage: stageDown}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-kick:
		case <-t.C:
		}
		rep := p.once(ctx)
		if ctx.Err() != nil {
			return
		}
		if rep.err != nil || rep.stage == stageReady {
			report(rep)
			return
		}
		if rep.stage > last.stage || rep.note != last.note {
			rep.stage = max(rep.stage, last.stage)
			last = rep
			report(rep)
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		next := p.interval
		if p.warm5xx > 0 {
			next = max(next, p.warmRetry)
		}
		t.Reset(next)
	}
}

// once runs the readiness checks in order and reports the stage reached.
// A report with an error is fatal.
func (p *prober) once(ctx context.Context) probeReport {
	st := stageDown
	if p.inv.Probe.HealthURL != "" {
		code, _, err := p.get(ctx, p.inv.Probe.HealthURL, "", p.timeout)
		if err != nil {
			return probeReport{stageDown, "GET /health: " + netReason(err), nil}
		}
		if err := p.checkOwner(); err != nil {
			return probeReport{stageListening, "", err}
		}
		if code != http.StatusOK {
			return probeReport{stageListening, fmt.Sprintf("GET /health answered HTTP %d", code), nil}
		}
		st = stageHealthy
	}
	models := p.inv.BaseURL + "/models"
	if p.inv.Probe.RequireAuth {
		code, _, err := p.get(ctx, models, wrongKey, p.timeout)
		if err != nil {
			return probeReport{st, "GET /v1/models: " + netReason(err), nil}
		}
		if err := p.checkOwner(); err != nil {
			return probeReport{stageListening, "", err}
		}
		if code == http.StatusOK {
			return probeReport{st, "", &fatalProbe{FailureForeign, fmt.Sprintf("%s answers without our API key, so it is not the engine npcorch started: another server listens on port %d", models, p.port)}}
		}
	}
	code, body, err := p.get(ctx, models, p.inv.APIKey, p.timeout)
	switch {
	case err != nil:
		return probeReport{st, "GET /v1/models: " + netReason(err), nil}
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return probeReport{st, "", &fatalProbe{FailureForeign, fmt.Sprintf("%s rejects our API key (HTTP %d): another server listens there, or the key is wrong", models, code)}}
	case code != http.StatusOK:
		return probeReport{max(st, stageListening), fmt.Sprintf("GET /v1/models answered HTTP %d: %s", code, snippet(body)), nil}
	}
	names, err := modelIDs(body)
	if err != nil {
		return probeReport{max(st, stageListening), fmt.Sprintf("GET /v1/models answered what is not a model list: %s", snippet(body)), nil}
	}
	if !contains(names, p.inv.ServedName) {
		return probeReport{st, "", &fatalProbe{FailureForeign, fmt.Sprintf("%s does not list model %q (it serves %s): the server there is not ours, or the served name is wrong", models, p.inv.ServedName, strings.Join(names, ", "))}}
	}
	if !p.inv.Probe.WarmUp {
		return probeReport{stage: stageReady}
	}
	return p.warm(ctx)
}

// netReason words a failed probe request without its URL.
func netReason(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		err = oe.Err
	}
	return err.Error()
}

// checkOwner proves, once, that the sockets listening on our port belong
// to our process group.
func (p *prober) checkOwner() error {
	if p.owned || p.owners == nil || p.pgid == 0 {
		return nil
	}
	foreign, total, err := p.owners.Foreign(p.port, p.pgid)
	if err != nil || total == 0 {
		return nil // cannot tell; the API-key check still applies
	}
	if foreign > 0 {
		return &fatalProbe{FailureForeign, fmt.Sprintf("port %d: %d of %d listening sockets belong to processes outside the engine's process group %d (a foreign server shares the port)", p.port, foreign, total, p.pgid)}
	}
	p.owned = true
	return nil
}

// warm sends a one-token chat: the strongest proof that the engine
// serves. A 5xx or 429 answer is retried every warmRetry; warmFailures of
// them in a row fail the start with the engine's answer (issue 12: a
// warm-up answered 500 was retried silently until the no-progress
// deadline, whose message then blamed a silent engine).
func (p *prober) warm(ctx context.Context) probeReport {
	req := map[string]any{
		"model":       p.inv.ServedName,
		"messages":    []map[string]string{{"role": "user", "content": "Hi"}},
		"max_tokens":  1,
		"temperature": 0,
		"stream":      false,
	}
	body, _ := json.Marshal(req)
	target := p.inv.BaseURL + "/chat/completions"
	code, resp, err := p.do(ctx, http.MethodPost, target, p.inv.APIKey, body, p.warmUp)
	switch {
	case err != nil:
		return probeReport{stageListed, "warm-up chat: " + netReason(err), nil}
	case code >= 500 || code == http.StatusTooManyRequests:
		p.warm5xx++
		note := fmt.Sprintf("warm-up chat answered HTTP %d: %s", code, snippet(resp))
		if p.warmFailures > 0 && p.warm5xx >= p.warmFailures {
			return probeReport{stageListed, note, &fatalProbe{FailureWarmUp, fmt.Sprintf("the warm-up chat to %s was answered HTTP %d %d times in a row (every %v); last answer: %s", target, code, p.warm5xx, p.warmRetry, snippet(resp))}}
		}
		return probeReport{stageListed, note, nil}
	case code != http.StatusOK:
		return probeReport{stageListed, "", &fatalProbe{FailureRejected, fmt.Sprintf("warm-up chat to %s rejected with HTTP %d: %s", target, code, snippet(resp))}}
	}
	p.warm5xx = 0
	var out struct {
		Choices []json.RawMessage `json:"choices"`
	}
	if json.Unmarshal(resp, &out) != nil || len(out.Choices) == 0 {
		return probeReport{stageListed, "", &fatalProbe{FailureRejected, fmt.Sprintf("warm-up chat to %s answered without choices: %s", target, snippet(resp))}}
	}
	return probeReport{stage: stageReady}
}

func (p *prober) get(ctx context.Context, url, key string, timeout time.Duration) (int, []byte, error) {
	return p.do(ctx, http.MethodGet, url, key, nil, timeout)
}

func (p *prober) do(ctx context.Context, method, url, key string, body []byte, timeout time.Duration) (int, []byte, error) {
	return httpDo(ctx, p.client, method, url, key, body, timeout)
}

func httpDo(ctx context.Context, c *http.Client, method, url, key string, body []byte, timeout time.Duration) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, b, err
}

func modelIDs(body []byte) ([]string, error) {
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(list.Data))
	for _, d := range list.Data {
		ids = append(ids, d.ID)
	}
	return ids, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// load is one /metrics reading used by the stall watchdog.
type load struct {
	running float64 // requests being generated
	tokens  float64 // generation tokens so far (a counter)
}

// Metric names of vLLM and SGLang (text exposition; counters may appear
// with or without the _total suffix on the family).
var (
	runningMetrics = []string{"vllm:num_requests_running", "sglang:num_running_reqs"}
	tokenMetrics   = []string{"vllm:generation_tokens_total", "vllm:generation_tokens", "sglang:generation_tokens_total", "sglang:generation_tokens"}
)

// scrapeLoad reads running requests and generated tokens from /metrics.
func scrapeLoad(ctx context.Context, c *http.Client, url string, timeout time.Duration) (load, error) {
	code, body, err := httpDo(ctx, c, http.MethodGet, url, "", nil, timeout)
	if err != nil {
		return load{}, err
	}
	if code != http.StatusOK {
		return load{}, fmt.Errorf("GET %s: HTTP %d", url, code)
	}
	return parseLoad(body)
}

func parseLoad(body []byte) (load, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return load{}, fmt.Errorf("parse metrics: %w", err)
	}
	running, okR := sumFamilies(fams, runningMetrics)
	tokens, okT := sumFamilies(fams, tokenMetrics)
	if !okR || !okT {
		return load{}, errors.New("metrics lack running-request and generation-token counters")
	}
	return load{running: running, tokens: tokens}, nil
}

// stallWatch decides, from successive metric readings, whether an engine
// with requests running has produced no token for window. It is pure:
// readings and their times come in as arguments.
type stallWatch struct {
	window   time.Duration
	seen     bool
	tokens   float64
	progress time.Time // last time tokens moved or nothing ran
}

// observe records a reading taken at now and reports a stall, with how
// long the readings have shown requests running and no new token.
func (w *stallWatch) observe(l load, now time.Time) (time.Duration, bool) {
	if !w.seen || l.tokens != w.tokens || l.running == 0 {
		w.seen, w.tokens, w.progress = true, l.tokens, now
		return 0, false
	}
	quiet := now.Sub(w.progress)
	return quiet, quiet >= w.window
}

// sumFamilies adds the values of every sample of the first family present
// among names.
func sumFamilies(fams map[string]*dto.MetricFamily, names []string) (float64, bool) {
	for _, n := range names {
		f, ok := fams[n]
		if !ok {
			continue
		}
		sum := 0.0
		for _, m := range f.GetMetric() {
			switch {
			case m.Gauge != nil:
				sum += m.GetGauge().GetValue()
			case m.Counter != nil:
				sum += m.GetCounter().GetValue()
			case m.Untyped != nil:
				sum += m.GetUntyped().GetValue()
			}
		}
		return sum, true
	}
	return 0, false
}
