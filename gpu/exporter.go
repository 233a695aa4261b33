package gpu

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// exportLabels are dcgm-exporter's labels, so our series sit beside DCGM
// dashboards unchanged.
var exportLabels = []string{"gpu", "UUID", "device", "modelName", "Hostname"}

// gauge is one per-GPU metric: its descriptor and how to read it.
type gauge struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(DeviceSample) *float64
}

func f64[T int | uint64 | float64](v *T, scale float64) *float64 {
	if v == nil {
		return nil
	}
	return Ptr(float64(*v) * scale)
}

// newGauges builds the dcgm-exporter metrics we export.
func newGauges() []gauge {
	g := func(name, help string, kind prometheus.ValueType, value func(DeviceSample) *float64) gauge {
		return gauge{prometheus.NewDesc(name, help, exportLabels, nil), kind, value}
	}
	const mib = 1.0 / (1 << 20)
	return []gauge{
		g("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", prometheus.GaugeValue,
			func(d DeviceSample) *float64 { return d.GPUUtilPercent }),
		g("DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization (in %).", prometheus.GaugeValue,
			func(d DeviceSample) *float64 { return d.MemUtilPercent }),
		g("DCGM_FI_PROF_SM_ACTIVE", "The ratio of cycles an SM has at least 1 warp assigned (0 to 1), from NVML GPM.", prometheus.GaugeValue,
			func(d DeviceSample) *float64 { return f64(d.SMActivityPercent, 0.01) }),
		g("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", prometheus.GaugeValue,
			func(d DeviceSample) *float64 { return f64(d.MemUsedBytes, mib) }),
		g("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", prometheus.GaugeValue,
			func(d DeviceSample) *float64 { return f64(d.MemFreeBytes, mib) }),
		g("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", prometheus.GaugeValue,
			func(d DeviceSample) *float64 { return d.PowerWatts }),
		g("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "Total energy consumption since boot (in mJ).", prometheus.CounterValue,
			func(d DeviceSample) *float64 { return f64(d.EnergyMillijoules, 1) }),
		g("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", prometheus.GaugeValue,
			func(d DeviceSample) *float64 { return f64(d.TemperatureC, 1) }),
		g("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", prometheus.GaugeValue,
			func(d DeviceSample) *float64 { return f64(d.SMClockMHz, 1) }),
		g("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "Current clock throttle reasons (bitmask of NVML clock event reasons).", prometheus.GaugeValue,
			func(d DeviceSample) *float64 { return f64(d.ThrottleReasons, 1) }),
	}
}

// Collector is a Prometheus collector that reads the [Source] once per
// scrape and exports dcgm-exporter's metric names and labels, plus
// npcorch_gpu_process_memory_bytes per process with the model and replica
// npcorch launched it for. A value the driver did not report is left out,
// never exported as 0. Register it on a registry of your own.
//
// Each scrape calls Source.Sample, so a scrape and a [Sampler] on the same
// source share its GPM state: SM activity then covers the time since
// whichever read came last.
type Collector struct {
	src      Source
	hostname string
	names    map[int]string
	timeout  time.Duration
	gauges   []gauge
	procMem  *prometheus.Desc
}

// NewCollector reads the GPUs' product names once (the modelName label) and
// returns a collector for src; hostname fills the Hostname label.
func NewCollector(ctx context.Context, src Source, hostname string) (*Collector, error) {
	inv, err := src.Inventory(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading GPU names for the exporter: %w", err)
	}
	names := map[int]string{}
	for _, g := range inv.GPUs {
		if g.Name != nil {
			names[g.Index] = *g.Name
		}
	}
	return &Collector{
		src: src, hostname: hostname, names: names, timeout: 10 * time.Second, gauges: newGauges(),
		procMem: prometheus.NewDesc("npcorch_gpu_process_memory_bytes",
			"GPU memory held by a compute process (in bytes); model and replica are set for engines npcorch launched.",
			[]string{"gpu", "UUID", "pid", "model", "replica", "Hostname"}, nil),
	}, nil
}

// Describe sends every descriptor the collector may export.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, g := range c.gauges {
		ch <- g.desc
	}
	ch <- c.procMem
}

// Collect takes one sample of every GPU and sends its metrics.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	devs, err := c.src.Sample(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.gauges[0].desc, fmt.Errorf("sampling GPUs on %s: %w", c.hostname, err))
		return
	}
	for _, d := range devs {
		idx := strconv.Itoa(d.Index)
		uuid := ""
		if d.UUID != nil {
			uuid = *d.UUID
		}
		labels := []string{idx, uuid, "nvidia" + idx, c.names[d.Index], c.hostname}
		for _, g := range c.gauges {
			if v := g.value(d); v != nil {
				ch <- prometheus.MustNewConstMetric(g.desc, g.kind, *v, labels...)
			}
		}
		for _, p := range d.Processes {
			if p.GPUMemoryBytes == nil {
				continue
			}
			model, replica := "", ""
			if p.Model != nil {
				model = *p.Model
			}
			if p.Replica != nil {
				replica = *p.Replica
			}
			ch <- prometheus.MustNewConstMetric(c.procMem, prometheus.GaugeValue, float64(*p.GPUMemoryBytes),
				idx, uuid, strconv.Itoa(p.PID), model, replica, c.hostname)
		}
	}
}
