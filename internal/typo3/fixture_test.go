package typo3_test

import (
	"testing"

	"github.com/t3agent/t3agent/internal/demo/demotest"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// setup builds a fresh demo site (docs/demo-site.md) on dialect d.
func setup(t *testing.T, d typo3.Dialect) *env {
	t.Helper()
	s := demotest.New(t, d)
	pass := map[string]string{}
	for _, u := range s.Result.Users {
		pass[u.Username] = u.Password
	}
	return newEnv(t, s.DSN, tca.Bundled(), pass, fixedNow)
}
