package mcpauth_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(conformanceClientEnv) == "1" {
		os.Exit(conformanceClient())
	}
	goleak.VerifyTestMain(m)
}
