package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func newPrepCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "prep",
		Short: "(prep is being built)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("prep: not built yet")
		},
	}
}
