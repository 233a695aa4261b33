package toolenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// ID is a record id argument (subject_id, hadm_id, stay_id, itemid). Its schema type is string, as MIMIC's ids are
// written; a JSON integer is accepted too, because models often write numeric-looking ids as numbers, and the raw
// argument string in the log still shows what was sent.
type ID string

// UnmarshalJSON accepts "10000032" and 10000032.
func (id *ID) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*id = ID(s)
		return nil
	}
	n, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("an id must be a string or a non-negative integer, not %s", data)
	}
	*id = ID(strconv.FormatInt(n, 10))
	return nil
}
