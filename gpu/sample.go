package gpu

import (
	"context"
	"fmt"
	"time"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/mem"
)

// DeviceSample is one reading of one GPU, as a [Source] returns it. A value
// the driver did not report is nil.
type DeviceSample struct {
	// Index is the GPU's NVML index.
	Index int `json:"gpu"`
	// UUID is the GPU's identity.
	UUID *string `json:"uuid"`
	// GPUUtilPercent is NVML's "GPU utilization": the share of the last
	// sample period in which some kernel ran. It reads near 100 while the
	// SMs idle on a single busy kernel; see SMActivityPercent.
	GPUUtilPercent *float64 `json:"gpu_util_pct"`
	// MemUtilPercent is the share of time the memory controller was busy.
	MemUtilPercent *float64 `json:"mem_util_pct"`
	// SMActivityPercent is the SMs' busy share from GPM (Hopper and newer),
	// measured between this sample and the previous one; nil where GPM is
	// unsupported and on the first sample.
	SMActivityPercent *float64 `json:"sm_active_pct"`
	// MemUsedBytes and MemTotalBytes are framebuffer use (memory info v2).
	MemUsedBytes  *uint64 `json:"mem_used_bytes"`
	MemFreeBytes  *uint64 `json:"mem_free_bytes"`
	MemTotalBytes *uint64 `json:"mem_total_bytes"`
	// PowerWatts is the board power draw.
	PowerWatts *float64 `json:"power_w"`
	// EnergyMillijoules is the driver's energy counter: millijoules since
	// the driver loaded. Use differences, never integrate power.
	EnergyMillijoules *uint64 `json:"energy_mj"`
	// TemperatureC is the GPU core temperature.
	TemperatureC *int `json:"temp_c"`
	// SMClockMHz is the current SM clock.
	SMClockMHz *int `json:"sm_clock_mhz"`
	// ThrottleReasons is NVML's clock event reasons bit mask.
	ThrottleReasons *uint64 `json:"throttle_mask"`
	// Processes lists the compute processes and their GPU memory.
	Processes []Process `json:"processes"`
}

// throttleNames names NVML's clock event reason bits.
var throttleNames = []struct {
	bit  uint64
	name string
}{
	{0x1, "gpu_idle"},
	{0x2, "applications_clocks"},
	{0x4, "sw_power_cap"},
	{0x8, "hw_slowdown"},
	{0x10, "sync_boost"},
	{0x20, "sw_thermal"},
	{0x40, "hw_thermal"},
	{0x80, "hw_power_brake"},
	{0x100, "display_clocks"},
}

// ThrottleNames lists the reasons set in an NVML clock event mask, e.g.
// ["sw_power_cap"]; an empty mask gives an empty list, unknown bits "0x…".
func ThrottleNames(mask uint64) []string {
	names := []string{}
	for _, t := range throttleNames {
		if mask&t.bit != 0 {
			names = append(names, t.name)
			mask &^= t.bit
		}
	}
	if mask != 0 {
		names = append(names, fmt.Sprintf("0x%x", mask))
	}
	return names
}

// GPUSample is a [DeviceSample] within a sampler tick, with the energy used
// since the previous tick.
type GPUSample struct {
	DeviceSample
	// EnergyJoules is the energy used since the previous tick, from the
	// driver's counter; nil on the first tick or when the counter is
	// unknown. A counter that went backwards (driver reload) restarts the
	// count from zero, so the delta is the new counter value.
	EnergyJoules *float64 `json:"energy_j"`
	// Throttle names the throttle reasons; nil when unknown.
	Throttle []string `json:"throttle"`
}

// HostSample is the host's CPU and memory load during a tick.
type HostSample struct {
	CPUPercent    *float64 `json:"cpu_pct"`
	MemUsedBytes  *uint64  `json:"mem_used_bytes"`
	MemTotalBytes *uint64  `json:"mem_total_bytes"`
}

// Sample is one sampler tick: every GPU and the host at one instant.
type Sample struct {
	Time time.Time   `json:"time"`
	GPUs []GPUSample `json:"gpus"`
	Host HostSample  `json:"host"`
}

// HostProbe reads the host's CPU and memory load.
type HostProbe interface {
	Host(ctx context.Context) HostSample
}

// SystemHost is the [HostProbe] of this machine, through gopsutil. CPU
// percent is measured since the previous call (the first call: since boot).
type SystemHost struct{}

// Host reads CPU and memory load; values it cannot read stay nil.
func (SystemHost) Host(ctx context.Context) HostSample {
	var h HostSample
	if pct, err := cpu.PercentWithContext(ctx, 0, false); err == nil && len(pct) == 1 {
		h.CPUPercent = &pct[0]
	}
	if vm, err := mem.VirtualMemoryWithContext(ctx); err == nil {
		h.MemUsedBytes, h.MemTotalBytes = &vm.Used, &vm.Total
	}
	return h
}

// Clock tells the time; tests pin it.
type Clock interface{ Now() time.Time }

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// Ticker delivers ticks; tests drive it by hand.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

type systemTicker struct{ *time.Ticker }

// C returns the ticker's channel.
func (t systemTicker) C() <-chan time.Time { return t.Ticker.C }

// DefaultInterval is the sampler's period when none is set.
const DefaultInterval = time.Second

// Sampler reads a [Source] (and the host) once per tick and turns the
// driver's energy counters into per-tick energy. The zero value needs only
// Source; every other field has a working default. A Sampler is used by one
// goroutine at a time.
type Sampler struct {
	// Source is the node being sampled.
	Source Source
	// Host reads host CPU and memory; nil leaves them unknown.
	Host HostProbe
	// Clock stamps samples; nil means the wall clock.
	Clock Clock
	// Interval is the tick period; zero means DefaultInterval.
	Interval time.Duration
	// NewTicker makes the ticker Run waits on; nil means time.NewTicker.
	NewTicker func(time.Duration) Ticker

	lastEnergy map[int]uint64
}

// Tick takes one sample now.
func (s *Sampler) Tick(ctx context.Context) (Sample, error) {
	clock := s.Clock
	if clock == nil {
		clock = SystemClock{}
	}
	devs, err := s.Source.Sample(ctx)
	if err != nil {
		return Sample{}, fmt.Errorf("sampling GPUs: %w", err)
	}
	out := Sample{Time: clock.Now(), GPUs: make([]GPUSample, len(devs))}
	if s.lastEnergy == nil {
		s.lastEnergy = map[int]uint64{}
	}
	for i, d := range devs {
		g := GPUSample{DeviceSample: d}
		if d.ThrottleReasons != nil {
			g.Throttle = ThrottleNames(*d.ThrottleReasons)
		}
		if d.EnergyMillijoules != nil {
			cur := *d.EnergyMillijoules
			if prev, ok := s.lastEnergy[d.Index]; ok {
				delta := cur - prev
				if cur < prev { // counter restarted
					delta = cur
				}
				g.EnergyJoules = Ptr(float64(delta) / 1000)
			}
			s.lastEnergy[d.Index] = cur
		} else {
			delete(s.lastEnergy, d.Index)
		}
		out.GPUs[i] = g
	}
	if s.Host != nil {
		out.Host = s.Host.Host(ctx)
	}
	return out, nil
}

// Run samples once at once and then on every tick until ctx ends, handing
// each sample to record. It returns nil when ctx ends, or the first error
// of the source or of record.
func (s *Sampler) Run(ctx context.Context, record func(Sample) error) error {
	interval := s.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	newTicker := s.NewTicker
	if newTicker == nil {
		newTicker = func(d time.Duration) Ticker { return systemTicker{time.NewTicker(d)} }
	}
	t := newTicker(interval)
	defer t.Stop()
	for {
		smp, err := s.Tick(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if err := record(smp); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}
