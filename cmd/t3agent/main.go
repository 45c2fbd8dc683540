// Command t3agent is the AI tooling authority for a TYPO3 site.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/t3agent/t3agent/internal/cli"
)

func main() {
	root := cli.NewRootCommand(cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ()})
	if err := root.ExecuteContext(context.Background()); err != nil {
		var exit cli.ExitError
		if errors.As(err, &exit) {
			os.Exit(exit.Code)
		}
		fmt.Fprintln(os.Stderr, "t3agent:", err)
		os.Exit(1)
	}
}
