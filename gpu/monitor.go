package gpu

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Monitor samples a node until its context ends or Duration passes: it
// writes every sample as one JSON line to Log and, when Listen is set,
// serves the [Collector]'s metrics at /metrics on a registry of its own.
type Monitor struct {
	// Sampler takes the samples logged.
	Sampler *Sampler
	// Collector is served at /metrics; required when Listen is set.
	Collector *Collector
	// Listen is the HTTP address ("127.0.0.1:9400", ":0"); empty serves
	// nothing.
	Listen string
	// Log receives one JSON object per sample; nil logs nothing.
	Log io.Writer
	// Duration stops the monitor after this long; zero runs until the
	// context ends.
	Duration time.Duration
	// OnListen, when set, is told the address actually listened on.
	OnListen func(addr net.Addr)
	// OnSample, when set, sees every sample after it was logged.
	OnSample func(Sample)
}

// Run monitors until ctx ends or Duration passes; either is a clean stop
// and returns nil.
func (m *Monitor) Run(ctx context.Context) error {
	if m.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, m.Duration)
		defer cancel()
	}
	serveErr := make(chan error, 1)
	if m.Listen != "" {
		if m.Collector == nil {
			return errors.New("monitor: a listen address needs a collector")
		}
		reg := prometheus.NewRegistry()
		if err := reg.Register(m.Collector); err != nil {
			return fmt.Errorf("monitor: registering the GPU collector: %w", err)
		}
		ln, err := net.Listen("tcp", m.Listen)
		if err != nil {
			return fmt.Errorf("monitor: listening on %s: %w (choose another --listen address)", m.Listen, err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { serveErr <- srv.Serve(ln) }()
		defer func() {
			shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			srv.Shutdown(shutdown)
		}()
		if m.OnListen != nil {
			m.OnListen(ln.Addr())
		}
	}
	var bw *bufio.Writer
	if m.Log != nil {
		bw = bufio.NewWriter(m.Log)
	}
	enc := json.NewEncoder(bw)
	err := m.Sampler.Run(ctx, func(s Sample) error {
		select {
		case err := <-serveErr:
			return fmt.Errorf("monitor: metrics server stopped: %w", err)
		default:
		}
		if bw != nil {
			if err := enc.Encode(s); err != nil {
				return fmt.Errorf("monitor: writing sample log: %w", err)
			}
			if err := bw.Flush(); err != nil {
				return fmt.Errorf("monitor: writing sample log: %w", err)
			}
		}
		if m.OnSample != nil {
			m.OnSample(s)
		}
		return nil
	})
	return err
}

// ReadSamples reads a sample log written by [Monitor] (one JSON object per
// line), as the report code does after a campaign.
func ReadSamples(r io.Reader) ([]Sample, error) {
	var out []Sample
	dec := json.NewDecoder(r)
	for line := 1; ; line++ {
		var s Sample
		if err := dec.Decode(&s); err == io.EOF {
			return out, nil
		} else if err != nil {
			return out, fmt.Errorf("GPU sample log, record %d: %w (the log may be truncated; earlier records are returned)", line, err)
		}
		out = append(out, s)
	}
}

// WriteTotalsText writes one line per GPU: mean and peak utilization, SM
// activity, memory, power and energy, for the end of a monitor run.
func WriteTotalsText(w io.Writer, windows []GPUWindow) error {
	fmt.Fprintf(w, "%-4s %8s %13s %13s %12s %12s %10s %10s\n", "GPU", "SAMPLES", "UTIL MEAN/MAX", "SM MEAN/MAX", "MEM PEAK", "POWER MEAN", "POWER MAX", "ENERGY")
	for _, g := range windows {
		_, err := fmt.Fprintf(w, "%-4d %8d %13s %13s %12s %12s %10s %10s\n", g.GPU, g.Samples,
			meanMax(g.GPUUtilPercent, "%"), meanMax(g.SMActivityPercent, "%"), peakMiB(g.MemUsedBytes),
			statField(g.PowerWatts, true, "W"), statField(g.PowerWatts, false, "W"), joules(g.EnergyJoules))
		if err != nil {
			return err
		}
	}
	return nil
}

func meanMax(s *Stat, unit string) string {
	if s == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f/%.0f%s", s.Mean, s.Max, unit)
}

func statField(s *Stat, wantMean bool, unit string) string {
	if s == nil {
		return "-"
	}
	if wantMean {
		return fmt.Sprintf("%.1f%s", s.Mean, unit)
	}
	return fmt.Sprintf("%.1f%s", s.Max, unit)
}

func peakMiB(s *Stat) string {
	if s == nil {
		return "-"
	}
	return fmt.Sprintf("%.0fMiB", s.Max/(1<<20))
}

func joules(j *float64) string {
	if j == nil {
		return "-"
	}
	return fmt.Sprintf("%.1fJ", *j)
}
