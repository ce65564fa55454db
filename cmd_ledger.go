package main

import "github.com/urfave/cli/v2"

func ledgerCommand(e *env, jsonErrors *bool) *cli.Command {
	return &cli.Command{Name: "ledger", Hidden: true}
}
