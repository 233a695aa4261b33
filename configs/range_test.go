package configs

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// numericRanges lists every number (integer, float or duration) a
// campaign file can hold, each with a value outside its range, or "" for a
// number any value of which is valid. TestEveryNumberHasARange fails when a
// numeric field is added to the campaign's types without a row here.
var numericRanges = map[string]string{
	"seed":                                    "",
	"repeat":                                  "-2",
	"client.connect_timeout":                  "-1s",
	"client.first_token_timeout":              "-1s",
	"client.chunk_timeout":                    "-1s",
	"client.total_timeout":                    "-1s",
	"client.retries":                          "-3",
	"client.backoff":                          "-1s",
	"client.concurrency":                      "-1",
	"client.max_request_bytes":                "-1",
	"launch.no_progress_timeout":              "-1s",
	"launch.start_timeout":                    "-1s",
	"launch.warm_up_timeout":                  "-1s",
	"launch.warm_up_failures":                 "-1",
	"launch.max_restarts":                     "-1",
	"launch.restart_backoff":                  "-1s",
	"launch.max_restart_backoff":              "-1s",
	"launch.max_start_failures":               "-1",
	"launch.max_model_restarts":               "-1",
	"launch.stall_window":                     "-1s",
	"launch.stop_grace":                       "-1s",
	"slurm.time_limit":                        "30s",
	"slurm.cpus_per_gpu":                      "-1",
	"slurm.gpu_memory_gib":                    "-80",
	"slurm.gpu_speed":                         "-1",
	"slurm.poll":                              "-1s",
	"slurm.max_resubmits":                     "-1",
	"slurm.port_base":                         "80",
	"slurm.port_span":                         "-1",
	"slurm.orphan_timeout":                    "", // negative disables
	"models[0].params_b":                      "-7",
	"models[0].weight_bytes":                  "-1",
	"models[0].attention_heads":               "-32",
	"models[0].kv_heads":                      "-8",
	"models[0].vision_heads":                  "-16",
	"models[0].vocab_size":                    "-1",
	"models[0].context_length":                "-1",
	"models[0].tasks.pathology.max_tokens":    "-1",
	"models[0].tasks.pathology.max_images":    "-1",
	"models[0].speed_tokens_per_s":            "-1",
	"models[0].preprocess_images_per_s":       "-1",
	"models[0].engine.gpu_memory_utilization": "1.5",
	"models[0].engine.max_num_seqs":           "-1",
	"models[0].engine.tensor_parallel":        "3",
	"models[0].engine.replicas":               "-2",
}

// TestOutOfRangeNumbersAreErrors: every number outside its range is
// refused with the file, the line and the field (docs/campaign.md:
// "out-of-range values are errors"); engine.max_num_seqs: -1 used to start
// engines with vLLM's 256 and engine.replicas: -2 passed the plan.
func TestOutOfRangeNumbersAreErrors(t *testing.T) {
	for field, bad := range numericRanges {
		if bad == "" {
			continue
		}
		src := campaignWith(field, bad)
		_, err := ParseCampaign("c.yaml", ".", []byte(src), nil)
		var fe *fieldError
		if !errors.As(err, &fe) {
			t.Errorf("%s: %s accepted or not a field error: %v\n%s", field, bad, err, src)
			continue
		}
		wantField := field
		if strings.HasPrefix(field, "models[0].tasks.") {
			wantField = "models[0].tasks.pathology"
		}
		if fe.Field != wantField || fe.File != "c.yaml" || fe.Line != lineOf(src, lastKey(field)) {
			t.Errorf("%s: %s: error names %s line %d field %s, want c.yaml line %d field %s",
				field, bad, fe.File, fe.Line, fe.Field, lineOf(src, lastKey(field)), wantField)
		}
	}
}

// TestInRangeNumbersAreAccepted: the same fields at a valid value parse,
// so the test above fails for the value, not for the file around it.
func TestInRangeNumbersAreAccepted(t *testing.T) {
	good := map[string]string{"slurm.time_limit": "2h", "slurm.port_base": "30000", "slurm.gpu_memory_gib": "141",
		"models[0].engine.gpu_memory_utilization": "0.8", "models[0].engine.tensor_parallel": "2", "models[0].params_b": "7.5"}
	for field := range numericRanges {
		v, ok := good[field]
		if !ok {
			v = "1"
			if strings.HasSuffix(field, "timeout") || strings.HasSuffix(field, "backoff") || strings.HasSuffix(field, "window") ||
				strings.HasSuffix(field, "grace") || strings.HasSuffix(field, "poll") {
				v = "30s"
			}
		}
		if _, err := ParseCampaign("c.yaml", ".", []byte(campaignWith(field, v)), nil); err != nil {
			t.Errorf("%s: %s: %v", field, v, err)
		}
	}
}

// campaignWith is a valid campaign (slurm backend, one new sim model)
// that sets field to value.
func campaignWith(field, value string) string {
	top := map[string]string{}
	model := map[string]string{}
	if rest, ok := strings.CutPrefix(field, "models[0]."); ok {
		model[rest] = value
	} else {
		top[field] = value
	}
	var b strings.Builder
	b.WriteString("output: o\ndataset: {raw: r, prepared: p}\nbackend: slurm\n")
	writeNested(&b, top, "")
	b.WriteString("models:\n  - name: My-Sim\n    hf_id: me/sim\n")
	model["engine.kind"] = "sim"
	if model["params_b"] == "" && model["weight_bytes"] == "" {
		model["params_b"] = "7" // a model the campaign defines needs its size
	}
	writeNested(&b, model, "    ")
	return b.String()
}

// writeNested writes dotted keys as nested block mappings, one key a line.
func writeNested(b *strings.Builder, kv map[string]string, indent string) {
	groups := map[string]map[string]string{}
	for _, k := range sortedKeys(kv) {
		head, rest, nested := strings.Cut(k, ".")
		if !nested {
			b.WriteString(indent + k + ": " + kv[k] + "\n")
			continue
		}
		if groups[head] == nil {
			groups[head] = map[string]string{}
		}
		groups[head][rest] = kv[k]
	}
	for _, head := range sortedKeys(groups) {
		b.WriteString(indent + head + ":\n")
		writeNested(b, groups[head], indent+"  ")
	}
}

func lastKey(field string) string {
	if strings.HasPrefix(field, "models[0].tasks.") {
		return "pathology"
	}
	return field[strings.LastIndexByte(field, '.')+1:]
}

// lineOf is the 1-based line where key is first written as a key.
func lineOf(src, key string) int {
	for i, l := range strings.Split(src, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), key+":") {
			return i + 1
		}
	}
	return 0
}

// TestEveryNumberHasARange: every numeric field of the campaign's types is
// a row of numericRanges.
func TestEveryNumberHasARange(t *testing.T) {
	var fields []string
	numericFields(reflect.TypeOf(Campaign{}), "", &fields)
	numericFields(reflect.TypeOf(Model{}), "models[0]", &fields)
	for _, f := range fields {
		if _, ok := numericRanges[f]; !ok {
			t.Errorf("numeric field %s has no row in numericRanges: give it an out-of-range value and refuse it", f)
		}
	}
	if len(fields) != len(numericRanges) {
		t.Errorf("%d numeric fields, %d rows", len(fields), len(numericRanges))
	}
}

func numericFields(t reflect.Type, path string, out *[]string) {
	durType := reflect.TypeOf(time.Duration(0))
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || name == "" {
			continue
		}
		if path != "" {
			name = path + "." + name
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft == durType, ft.Kind() >= reflect.Int && ft.Kind() <= reflect.Float64:
			*out = append(*out, name)
		case ft.Kind() == reflect.Struct:
			numericFields(ft, name, out)
		case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
			numericFields(ft.Elem(), name+".pathology", out)
		}
	}
}
