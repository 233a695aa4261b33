package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func newPlanCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "plan",
		Short: "(plan is being built)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("plan: not built yet")
		},
	}
}
