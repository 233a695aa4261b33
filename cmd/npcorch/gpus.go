package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func newGpusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "gpus",
		Short: "(gpus is being built)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("gpus: not built yet")
		},
	}
}
