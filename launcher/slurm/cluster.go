package slurm

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/placement"
)

// Node is one Slurm node as `scontrol show node -d` reports it.
type Node struct {
	Name string
	// Addr is the address the cluster network reaches the node at
	// (NodeAddr); engines bind to it.
	Addr       string
	State      string
	Reason     string
	Partitions []string
	Features   []string
	// GPUs counts the node's GRES of the campaign's GPU name (and type);
	// GPUsUsed those allocated to jobs now.
	GPUs     int
	GPUsUsed int
}

// FreeGPUs returns the GPUs no job holds.
func (n Node) FreeGPUs() int { return max(n.GPUs-n.GPUsUsed, 0) }

// Usable says whether Slurm would start a job on the node now, and why not.
func (n Node) Usable() (bool, string) {
	s := strings.ToUpper(n.State)
	for _, bad := range []string{"DOWN", "DRAIN", "FAIL", "MAINT", "FUTURE", "POWERED_DOWN", "POWER_DOWN", "NOT_RESPONDING", "REBOOT", "INVALID", "UNKNOWN"} {
		if strings.Contains(s, bad) {
			return false, fmt.Sprintf("node %s is %s%s", n.Name, n.State, reasonNote(n.Reason))
		}
	}
	if strings.HasSuffix(s, "*") {
		return false, fmt.Sprintf("node %s does not respond to slurmctld (%s)", n.Name, n.State)
	}
	return true, ""
}

func reasonNote(r string) string {
	if r == "" || r == "(null)" || r == "None" {
		return ""
	}
	return " (" + r + ")"
}

// keyRE finds the start of a key=value field in scontrol's one-line output.
var keyRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_/:.]*=`)

// parseRecord splits one scontrol --oneliner record into its fields. Values
// may contain spaces (OS=Linux 6.1 #1 SMP, Reason=Not responding): a word
// that does not start a key continues the previous value.
func parseRecord(line string) map[string]string {
	out := map[string]string{}
	last := ""
	for _, w := range strings.Fields(line) {
		if keyRE.MatchString(w) {
			k, v, _ := strings.Cut(w, "=")
			out[k], last = v, k
			continue
		}
		if last != "" {
			out[last] += " " + w
		}
	}
	return out
}

// ParseNodes reads `scontrol show node -d --oneliner` output, counting the
// GRES named gres ("gpu" or "gpu:TYPE").
func ParseNodes(out []byte, gres string) ([]Node, error) {
	var nodes []Node
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line == "No nodes in the system" {
			continue
		}
		f := parseRecord(line)
		name := f["NodeName"]
		if name == "" {
			return nil, fmt.Errorf("scontrol show node: a record without NodeName: %.120s", line)
		}
		total, err := GRESCount(f["Gres"], gres)
		if err != nil {
			return nil, fmt.Errorf("node %s: Gres=%s: %w", name, f["Gres"], err)
		}
		used, err := GRESCount(f["GresUsed"], gres)
		if err != nil {
			return nil, fmt.Errorf("node %s: GresUsed=%s: %w", name, f["GresUsed"], err)
		}
		addr := f["NodeAddr"]
		if addr == "" {
			addr = name
		}
		nodes = append(nodes, Node{
			Name: name, Addr: addr, State: f["State"], Reason: f["Reason"],
			Partitions: splitList(f["Partitions"]), Features: splitList(f["ActiveFeatures"]),
			GPUs: total, GPUsUsed: used,
		})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("scontrol show node: %w", err)
	}
	slices.SortFunc(nodes, func(a, b Node) int { return strings.Compare(a.Name, b.Name) })
	return nodes, nil
}

func splitList(s string) []string {
	if s == "" || s == "(null)" {
		return nil
	}
	return strings.Split(s, ",")
}

// GRESCount adds the counts of the entries of a GRES list ("gpu:a100:4(S:0-1),
// gpu:v100:2", "gpu:3(IDX:0-2)", "(null)") that match want: "gpu" matches
// every GPU type, "gpu:a100" only that type.
func GRESCount(list, want string) (int, error) {
	wantName, wantType, typed := strings.Cut(want, ":")
	n := 0
	for _, e := range splitGRES(list) {
		if i := strings.IndexByte(e, '('); i >= 0 {
			e = e[:i]
		}
		parts := strings.Split(e, ":")
		if len(parts) == 0 || parts[0] != wantName {
			continue
		}
		count := 1
		typ := ""
		switch len(parts) {
		case 1:
		case 2:
			// gpu:4 or gpu:a100 (count 1)
			if c, err := strconv.Atoi(parts[1]); err == nil {
				count = c
			} else {
				typ = parts[1]
			}
		default:
			typ = parts[1]
			c, err := strconv.Atoi(parts[len(parts)-1])
			if err != nil {
				return 0, fmt.Errorf("entry %q has no count", e)
			}
			count = c
		}
		if typed && typ != wantType {
			continue
		}
		n += count
	}
	return n, nil
}

// splitGRES splits a GRES list at the commas outside parentheses.
func splitGRES(list string) []string {
	if list == "" || list == "(null)" || list == "N/A" {
		return nil
	}
	var out []string
	depth, start := 0, 0
	for i, c := range list {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, list[start:i])
				start = i + 1
			}
		}
	}
	return append(out, list[start:])
}

// ParseDefaultPartition returns the partition marked Default=YES in
// `scontrol show partition --oneliner` output, or "" when none is.
func ParseDefaultPartition(out []byte) string {
	for _, line := range strings.Split(string(out), "\n") {
		f := parseRecord(line)
		if f["Default"] == "YES" {
			return f["PartitionName"]
		}
	}
	return ""
}

// Cluster is what Discover found: the nodes a campaign may use and why the
// others were left out.
type Cluster struct {
	Partition string
	Nodes     []Node
	Skipped   []string
}

// Discover lists the nodes of the campaign's partition (the default one
// when none is set) that have GPUs of the campaign's GRES, keeps those that
// are up and match s.Nodes and a simple s.Constraint (feature names joined
// by &), and says why it left each other node out.
func Discover(ctx context.Context, cmd Commander, s configs.SlurmSettings) (*Cluster, error) {
	part := s.Partition
	if part == "" {
		out, err := cmd.Run(ctx, "scontrol", "show", "partition", "--oneliner")
		if err != nil {
			return nil, fmt.Errorf("slurm: reading the partitions: %w (is slurmctld running? try `sinfo`)", err)
		}
		part = ParseDefaultPartition(out)
	}
	out, err := cmd.Run(ctx, "scontrol", "show", "node", "--details", "--oneliner")
	if err != nil {
		return nil, fmt.Errorf("slurm: reading the nodes: %w (is slurmctld running? try `sinfo -N`)", err)
	}
	all, err := ParseNodes(out, s.GRES)
	if err != nil {
		return nil, fmt.Errorf("slurm: %w", err)
	}
	c := &Cluster{Partition: part}
	features := simpleFeatures(s.Constraint)
	for _, n := range all {
		switch {
		case part != "" && !slices.Contains(n.Partitions, part):
			continue // not ours to use; not worth a note
		case len(s.Nodes) > 0 && !slices.Contains(s.Nodes, n.Name):
			continue
		case n.GPUs == 0:
			c.Skipped = append(c.Skipped, fmt.Sprintf("node %s has no %s GRES", n.Name, s.GRES))
			continue
		}
		if ok, why := n.Usable(); !ok {
			c.Skipped = append(c.Skipped, why)
			continue
		}
		if missing := missingFeatures(n, features); len(missing) > 0 {
			c.Skipped = append(c.Skipped, fmt.Sprintf("node %s lacks feature %s (slurm.constraint %q)", n.Name, strings.Join(missing, ", "), s.Constraint))
			continue
		}
		c.Nodes = append(c.Nodes, n)
	}
	if len(c.Nodes) == 0 {
		where := "the cluster"
		if part != "" {
			where = "partition " + part
		}
		return c, fmt.Errorf("slurm: no usable node with %s GRES in %s%s; check `sinfo -N -o '%%N %%T %%G'` and the campaign's slurm.partition, slurm.gres and slurm.nodes", s.GRES, where, skippedNote(c.Skipped))
	}
	return c, nil
}

func skippedNote(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return " (" + strings.Join(s, "; ") + ")"
}

// simpleFeatures returns the features of a constraint made only of names
// joined by &; nil for anything richer, which Slurm alone then checks.
func simpleFeatures(c string) []string {
	if c == "" || strings.ContainsAny(c, "|[]*()!") {
		return nil
	}
	return strings.Split(c, "&")
}

func missingFeatures(n Node, want []string) []string {
	var out []string
	for _, f := range want {
		if !slices.Contains(n.Features, f) {
			out = append(out, f)
		}
	}
	return out
}

// slotPrefix starts the UUID of a GPU slot in the cluster's placement.Node.
const slotPrefix = "slurm:"

// slotUUID names GPU slot i of node: Slurm, not npcorch, picks the device,
// so a slot stands for "one GPU of this node".
func slotUUID(node string, i int) string { return fmt.Sprintf("%s%s:%d", slotPrefix, node, i) }

// SlotNode returns the node a GPU slot UUID belongs to.
func SlotNode(uuid string) (string, bool) {
	rest, ok := strings.CutPrefix(uuid, slotPrefix)
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(rest, ':')
	if i <= 0 {
		return "", false
	}
	return rest[:i], true
}

// PlacementNode turns the cluster into one placement.Node: a GPU per GRES
// slot, numbered node by node, with s.GPUMemoryGiB each; GPUs other jobs
// hold have no free memory, so placement leaves them alone and says why.
// GPUs of one node are joined by NVLink (Slurm does not report the
// topology), GPUs of two nodes by placement.LinkSeparate.
func (c *Cluster) PlacementNode(s configs.SlurmSettings) placement.Node {
	mem := uint64(s.GPUMemoryGiB * (1 << 30))
	name := "slurm"
	if c.Partition != "" {
		name += ":" + c.Partition
	}
	n := placement.Node{Name: name, Speed: s.GPUSpeed}
	host := map[int]string{}
	for _, nd := range c.Nodes {
		for i := range nd.GPUs {
			free := mem
			if i < nd.GPUsUsed {
				free = 0
			}
			idx := len(n.GPUs)
			host[idx] = nd.Name
			n.GPUs = append(n.GPUs, placement.GPU{Index: idx, UUID: slotUUID(nd.Name, i), Name: nd.Name + " " + s.GRES,
				MemTotal: mem, MemFree: free, NUMA: -1})
		}
	}
	n.Link = func(a, b int) placement.LinkClass {
		if host[a] != host[b] {
			return placement.LinkSeparate
		}
		return placement.LinkNVLink
	}
	return n
}

// Node returns the discovered node of the given name.
func (c *Cluster) Node(name string) (Node, bool) {
	for _, n := range c.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return Node{}, false
}
