package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"
)

// flagRange is a numeric flag's smallest valid value and what to give.
type flagRange struct {
	name string
	min  float64 // seconds for a duration flag
	hint string
}

// refuseOutOfRange is a PreRunE that refuses a numeric flag given below its
// range (a negative count or duration used to mean the default silently).
func refuseOutOfRange(ranges ...flagRange) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		for _, r := range ranges {
			f := cmd.Flags().Lookup(r.name)
			if f == nil || !f.Changed {
				continue
			}
			v, err := strconv.ParseFloat(f.Value.String(), 64)
			if f.Value.Type() == "duration" {
				var d time.Duration
				d, err = time.ParseDuration(f.Value.String())
				v = d.Seconds()
			}
			if err != nil {
				return fmt.Errorf("%s: --%s %s: %w", cmd.Name(), r.name, f.Value, err)
			}
			if v < r.min {
				return fmt.Errorf("%s: --%s %s is out of range; %s", cmd.Name(), r.name, f.Value, r.hint)
			}
		}
		return nil
	}
}
