package configs

import (
	"strings"
	"testing"
	"time"
)

func TestSlurmSectionDefaultsAndErrors(t *testing.T) {
	base := "name: s\noutput: r\ndataset: {raw: d, prepared: p}\nmodels: [Lingshu-7B]\n"
	c, err := ParseCampaign("s.yaml", "/b", []byte(base+"backend: slurm\nslurm: {partition: gpu, shared_filesystem: true}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := c.Slurm
	if c.Backend != BackendSlurm || s.Partition != "gpu" || !s.SharedFilesystem || s.TimeLimit != 4*time.Hour || s.GRES != "gpu" ||
		s.GPUMemoryGiB != 80 || s.Poll != 10*time.Second || s.MaxResubmits != 5 || s.PortBase != 24000 || s.OrphanTimeout != 10*time.Minute {
		t.Errorf("slurm defaults not applied: %+v", s)
	}
	c, err = ParseCampaign("s.yaml", "/b", []byte(base), nil)
	if err != nil || c.Backend != BackendLocal {
		t.Errorf("a campaign without a backend: %v, %q; want local", err, c.Backend)
	}
	for body, want := range map[string]string{
		"backend: pbs\n": "line 5: field backend",
		"backend: slurm\nslurm: {time_limit: 30s}\n":    "slurm.time_limit",
		"backend: slurm\nslurm: {gres: 'gpu:a100:4'}\n": "slurm.gres",
		"backend: slurm\nslurm: {port_base: 65000}\n":   "slurm.port_base",
		"backend: slurm\nslurm: {max_resubmits: -1}\n":  "slurm.max_resubmits",
		"backend: slurm\nslurm: {partitoin: gpu}\n":     "partitoin",
	} {
		_, err := ParseCampaign("s.yaml", "/b", []byte(base+body), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one naming %s", body, err, want)
		}
	}
}
