package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func newSimEngineCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "sim-engine",
		Short: "(sim-engine is being built)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("sim-engine: not built yet")
		},
	}
}
