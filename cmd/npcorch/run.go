package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func newRunCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "run",
		Short: "(run is being built)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("run: not built yet")
		},
	}
}
