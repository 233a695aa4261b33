package configs

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// SpeedField is the registry field a measured speed overrides: token
// equivalents per second per A800-equivalent.
const SpeedField = "speed_tokens_per_s"

// MeasuredSpeed is one model's measured speed for SpeedField, with a note
// (where it comes from, how sure it is) written beside it as a comment.
type MeasuredSpeed struct {
	TokensPerS float64
	Note       string
}

// ApplySpeeds sets SpeedField on the model entries of a campaign file's
// text that speeds names, keeping the rest of the text (comments, order,
// other fields): an entry that is a bare registry name becomes a mapping
// with its name. It returns the new text, the models it set, and the
// measured models the campaign does not list (in name order). name says
// where data comes from in errors.
func ApplySpeeds(name string, data []byte, speeds map[string]MeasuredSpeed) (out []byte, set, absent []string, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil, nil, fmt.Errorf("%s: not a campaign file (no mapping at the top)", name)
	}
	models := mapValue(doc.Content[0], "models")
	if models == nil || models.Kind != yaml.SequenceNode {
		return nil, nil, nil, fmt.Errorf("%s: no models list to set measured speeds on", name)
	}
	for i, entry := range models.Content {
		model := entry.Value
		if entry.Kind == yaml.MappingNode {
			if n := mapValue(entry, "name"); n != nil {
				model = n.Value
			}
		}
		sp, ok := speeds[model]
		if !ok || slices.Contains(set, model) {
			continue
		}
		if entry.Kind == yaml.ScalarNode {
			v := scalar(model)
			v.LineComment = entry.LineComment
			entry = &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{scalar("name"), v}, HeadComment: entry.HeadComment}
			models.Content[i] = entry
		}
		setSpeed(entry, sp)
		set = append(set, model)
	}
	for model := range speeds {
		if !slices.Contains(set, model) {
			absent = append(absent, model)
		}
	}
	slices.Sort(absent)
	out, err = encodeYAML(&doc)
	return out, set, absent, err
}

// SpeedOverrides is a `models:` list that sets SpeedField on every model
// of speeds, in name order: the lines to put in a campaign file.
func SpeedOverrides(speeds map[string]MeasuredSpeed) ([]byte, error) {
	names := make([]string, 0, len(speeds))
	for n := range speeds {
		names = append(names, n)
	}
	slices.Sort(names)
	list := &yaml.Node{Kind: yaml.SequenceNode}
	for _, n := range names {
		entry := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{scalar("name"), scalar(n)}}
		setSpeed(entry, speeds[n])
		list.Content = append(list.Content, entry)
	}
	doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Content: []*yaml.Node{scalar("models"), list}}}}
	return encodeYAML(doc)
}

// setSpeed sets SpeedField of a model entry, replacing any value.
func setSpeed(entry *yaml.Node, sp MeasuredSpeed) {
	v := scalar(strconv.FormatFloat(sp.TokensPerS, 'f', 0, 64))
	v.LineComment = sp.Note
	if old := mapValue(entry, SpeedField); old != nil {
		*old = *v
		return
	}
	entry.Content = append(entry.Content, scalar(SpeedField), v)
}

// mapValue returns the value of key in a mapping node, or nil.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }

func encodeYAML(doc *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
