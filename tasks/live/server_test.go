package live_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/npcorch/npcorch/tasks/live"
)

// serve serves a fresh hub on loopback; the server and hub close when the
// test ends.
func serve(t *testing.T, addr, token string) (*live.Hub, *clock, string) {
	t.Helper()
	h, c := hub(t, "")
	ln, err := live.Listen(addr, token)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ln.Serve(h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	_, port, _ := strings.Cut(ln.Addr().String(), "]:")
	if port == "" {
		_, port, _ = strings.Cut(ln.Addr().String(), ":")
	}
	return h, c, "http://127.0.0.1:" + port
}

// get fetches url with the header pairs given, at most 5 s.
func get(t *testing.T, c *http.Client, url string, header ...string) (*http.Response, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp, string(body)
}

// stream is an open /events stream: its snapshots arrive on events, which
// closes when the stream ends (its context did, or the server closed it);
// err is why, once events is closed.
type stream struct {
	events chan *live.Snapshot
	err    error
	cancel context.CancelFunc
}

func subscribe(t *testing.T, c *http.Client, url string, header ...string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/events", nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		t.Fatalf("/events: %s, %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	s := &stream{events: make(chan *live.Snapshot, 1000), cancel: cancel}
	go func() {
		defer close(s.events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var snap live.Snapshot
			if err := json.Unmarshal([]byte(data), &snap); err != nil {
				s.err = fmt.Errorf("an event that is not a snapshot: %v", err)
				return
			}
			s.events <- &snap
		}
		s.err = sc.Err()
	}()
	t.Cleanup(cancel)
	return s
}

// next waits at most 5 s for an event satisfying ok.
func (s *stream) next(t *testing.T, what string, ok func(*live.Snapshot) bool) *live.Snapshot {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case snap, open := <-s.events:
			if !open {
				t.Fatalf("the event stream ended (%v) before an event showed %s", s.err, what)
			}
			if ok(snap) {
				return snap
			}
		case <-timeout:
			t.Fatalf("no event in 5 s showed %s", what)
		}
	}
}

// ends reports whether the stream ends within d, its events read.
func (s *stream) ends(d time.Duration) bool {
	timeout := time.After(d)
	for {
		select {
		case _, open := <-s.events:
			if !open {
				return true
			}
		case <-timeout:
			return false
		}
	}
}

func TestOffLoopbackTheServerNeedsAToken(t *testing.T) {
	_, err := live.Listen("0.0.0.0:0", "")
	if err == nil || !strings.Contains(err.Error(), live.TokenEnv) || !strings.Contains(err.Error(), "--token-file") {
		t.Fatalf("listening on every interface without a token: %v; want a refusal that says how to give one", err)
	}
	const token = "tok-3f9a1c"
	ln, err := live.Listen("0.0.0.0:0", token)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if d := ln.Describe(); strings.Contains(d, token) || !strings.Contains(d, "http://"+host+":") || !strings.Contains(d, "a token is required") {
		t.Errorf("the line the run prints: %q; want the machine's name, that a token is needed, and not the token", d)
	}
	ln.Close()
	h, _, url := serve(t, "0.0.0.0:0", token)
	h.Post(begin())
	c := &http.Client{}
	for _, path := range []string{"/", "/api/status", "/metrics", "/events"} {
		if resp, _ := get(t, c, url+path); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s without the token: %s", path, resp.Status)
		}
		if resp, _ := get(t, c, url+path, "Authorization", "Bearer wrong-"+token); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s with a wrong token: %s", path, resp.Status)
		}
	}
	if resp, body := get(t, c, url+"/api/status", "Authorization", "Bearer "+token); resp.StatusCode != http.StatusOK || !strings.Contains(body, live.Format) {
		t.Errorf("/api/status with the token: %s %.80s", resp.Status, body)
	}
	// The browser: the token once in the address, then a cookie the
	// page's event stream carries; the address bar loses it.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	resp, body := get(t, browser, url+"/?token="+token)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "<title>") || resp.Request.URL.RawQuery != "" {
		t.Fatalf("/?token=: %s at %s", resp.Status, resp.Request.URL)
	}
	s := subscribe(t, browser, url)
	s.next(t, "the campaign", func(s *live.Snapshot) bool { return len(s.Models) == 2 })
}

func TestLoopbackServerAnswersOnlyLoopbackNames(t *testing.T) {
	_, _, url := serve(t, "0", "")
	c := &http.Client{}
	for _, host := range []string{"localhost", "127.0.0.1:9410", "[::1]:9410"} {
		if resp, _ := get(t, c, url+"/api/status", "Host", host); resp.StatusCode != http.StatusOK {
			t.Errorf("Host %s: %s", host, resp.Status)
		}
	}
	// A page elsewhere that re-points its name at 127.0.0.1 (DNS
	// rebinding) is refused.
	if resp, _ := get(t, c, url+"/api/status", "Host", "attacker.example:9410"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("Host attacker.example: %s, want 403", resp.Status)
	}
}

func TestPageIsSelfContained(t *testing.T) {
	_, _, url := serve(t, "0", "")
	resp, body := get(t, &http.Client{}, url+"/")
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("CSP = %q: the page may load from elsewhere", csp)
	}
	for _, ref := range []string{"http://", "https://", "<link", " src=", "@import"} {
		if strings.Contains(body, ref) {
			t.Errorf("the page refers to something outside it: %q", ref)
		}
	}
}

func TestEventsFollowTheCampaignAndResumeAfterAReconnect(t *testing.T) {
	h, _, url := serve(t, "0", "")
	c := &http.Client{}
	s := subscribe(t, c, url)
	first := s.next(t, "anything", func(*live.Snapshot) bool { return true })
	if first.State != live.RunStarting {
		t.Errorf("first event: state %s", first.State)
	}
	h.Post(begin())
	s.next(t, "the campaign", func(s *live.Snapshot) bool { return len(s.Models) == 2 })
	for i := range 3 {
		h.Post(liveAnswer(modelA))
		s.next(t, fmt.Sprintf("%d answers", i+1), func(s *live.Snapshot) bool { return s.Totals.Answered == i+1 })
	}
	s.cancel() // the browser goes
	h.Post(liveAnswer(modelB))
	await(t, h, "the fourth answer", func(s *live.Snapshot) bool { return s.Totals.Answered == 4 })
	// and comes back: its first event is the latest state.
	s2 := subscribe(t, c, url)
	if got := s2.next(t, "anything", func(*live.Snapshot) bool { return true }); got.Totals.Answered != 4 {
		t.Errorf("after the reconnect: %d answered, want 4", got.Totals.Answered)
	}
}

func TestClosingTheServerEndsEveryStreamAndLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := live.NewHub(live.HubOptions{Campaign: "leak", PublishEvery: 5 * time.Millisecond})
	ln, err := live.Listen("0", "")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ln.Serve(h)
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	tr := &http.Transport{}
	c := &http.Client{Transport: tr}
	var streams []*stream
	for range 5 {
		s := subscribe(t, c, url)
		s.next(t, "the first view", func(*live.Snapshot) bool { return true })
		streams = append(streams, s)
	}
	get(t, c, url+"/metrics")
	h.Post(begin())
	start := time.Now()
	if err := h.Close(live.Ended{State: live.RunFinished}); err != nil {
		t.Fatal(err)
	}
	for _, s := range streams {
		s.next(t, "the run's end", func(s *live.Snapshot) bool { return s.State == live.RunFinished })
		if !s.ends(5 * time.Second) {
			t.Fatal("a stream outlived the hub by 5 s")
		}
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("closing took %s", d)
	}
	tr.CloseIdleConnections()
}

func liveAnswer(m string) live.Journaled {
	return live.Journaled{Record: answered(m, "sequence", "right", 100, 10, time.Second, 100*time.Millisecond)}
}
