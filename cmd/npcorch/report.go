package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func newReportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "report",
		Short: "(report is being built)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("report: not built yet")
		},
	}
}
