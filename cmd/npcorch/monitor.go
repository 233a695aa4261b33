package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func newMonitorCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "monitor",
		Short: "(monitor is being built)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("monitor: not built yet")
		},
	}
}
