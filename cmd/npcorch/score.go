package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func newScoreCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "score",
		Short: "(score is being built)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("score: not built yet")
		},
	}
}
