package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks"
)

// Floor clients send the file:// request body that npcorch's client would
// send, built once before the clock starts, and read the answer without
// parsing it: what any Go client pays for the exchange alone. "http" goes
// through net/http and reads the stream line by line; "tcp" writes the
// HTTP/1.1 request on a kept-alive socket and reads raw bytes until the
// final chunk. They bound from below what a better SSE reader or request
// builder could save.
const (
	floorHTTP = "go floor: net/http, lines read, nothing parsed"
	floorTCP  = "go floor: raw TCP, nothing parsed"
)

// goFloor is the "go-floor" role.
func goFloor(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("go-floor", flag.ContinueOnError)
	base := fs.String("base", "", "engine base URL")
	root := fs.String("root", "", "image folder")
	imagesJSON := fs.String("images", "", "images.json")
	mode := fs.String("mode", "http", "http or tcp")
	n := fs.Int("requests", 10, "requests")
	conc := fs.Int("concurrency", 4, "requests in flight")
	if err := fs.Parse(args); err != nil {
		return err
	}
	body, err := floorBody(*imagesJSON, *root)
	if err != nil {
		return err
	}
	u, err := url.Parse(*base)
	if err != nil {
		return err
	}
	var send func(ctx context.Context, requests int) error
	switch *mode {
	case "http":
		send = httpFloor(*base+"/v1/chat/completions", body)
	case "tcp":
		send = tcpFloor(u.Host, body)
	default:
		return fmt.Errorf("-mode %q: want http or tcp", *mode)
	}
	res := clientResult{Client: floorHTTP, Media: configs.MediaFile, Requests: *n, BodyBytes: len(body)}
	if *mode == "tcp" {
		res.Client = floorTCP
	}
	g, gctx := errgroup.WithContext(ctx)
	cpu0, t0 := cpuSeconds(), time.Now()
	for w := 0; w < *conc; w++ {
		share := *n / *conc
		if w < *n%*conc {
			share++
		}
		g.Go(func() error { return send(gctx, share) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	res.CPUSeconds, res.WallSeconds, res.MaxRSSKB = cpuSeconds()-cpu0, time.Since(t0).Seconds(), maxRSSKB()
	return json.NewEncoder(stdout).Encode(res)
}

// floorBody is the JSON body of the benchmark's file:// request, built as
// npcorch's client builds it.
func floorBody(imagesJSON, root string) ([]byte, error) {
	images, m, prompts, err := clientInputs(imagesJSON)
	if err != nil {
		return nil, err
	}
	req, err := tasks.RequestBuilder{Model: m, Media: configs.MediaFile, Root: root}.Build(prompts, stagingItem(images), 0, nil)
	if err != nil {
		return nil, err
	}
	return json.Marshal(req.Body)
}

// httpFloor posts body through one shared net/http client and reads each
// answer line by line.
func httpFloor(endpoint string, body []byte) func(context.Context, int) error {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	return func(ctx context.Context, requests int) error {
		for range requests {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
			if err != nil {
				return err
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			if resp.StatusCode != http.StatusOK {
				resp.Body.Close()
				return fmt.Errorf("HTTP %d", resp.StatusCode)
			}
			br := bufio.NewReader(resp.Body)
			for {
				if _, err = br.ReadSlice('\n'); err != nil {
					break
				}
			}
			resp.Body.Close()
			if !errors.Is(err, io.EOF) {
				return err
			}
		}
		return nil
	}
}

// tcpFloor writes the request on one kept-alive connection per worker and
// reads until the chunked body's last chunk.
func tcpFloor(host string, body []byte) func(context.Context, int) error {
	head := fmt.Sprintf("POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", host, len(body))
	msg := append([]byte(head), body...)
	end := []byte("\r\n0\r\n\r\n")
	return func(ctx context.Context, requests int) error {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", host)
		if err != nil {
			return err
		}
		defer conn.Close()
		buf := make([]byte, 64<<10)
		tail := make([]byte, 0, 2*len(end))
		for range requests {
			if _, err := conn.Write(msg); err != nil {
				return err
			}
			tail = tail[:0]
			for !bytes.HasSuffix(tail, end) {
				n, err := conn.Read(buf)
				if err != nil {
					return fmt.Errorf("reading the answer: %w", err)
				}
				tail = append(tail, buf[max(0, n-len(end)):n]...)
				tail = tail[max(0, len(tail)-len(end)):]
			}
		}
		return nil
	}
}
