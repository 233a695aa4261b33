package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func newSynthCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "synth",
		Short: "(synth is being built)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("synth: not built yet")
		},
	}
}
