package demo

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/t3agent/t3agent/internal/typo3/password"
)

// hashInBackground starts hashing every password with Argon2id, as TYPO3
// v13 does by default, and returns a function that waits for the hashes.
// At most one hash per CPU runs at a time: a default-cost hash takes 64 MiB
// and most of a second.
func hashInBackground(passwords []string, fast bool) func() ([]string, error) {
	params := password.DefaultArgon2Params
	if fast {
		params = password.TestArgon2Params
	}
	hashes := make([]string, len(passwords))
	errs := make([]error, len(passwords))
	sem := make(chan struct{}, runtime.NumCPU())
	var wg sync.WaitGroup
	for i, pw := range passwords {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			hashes[i], errs[i] = password.HashArgon2id(pw, params)
		}()
	}
	return func() ([]string, error) {
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("hash passwords: %w", err)
		}
		return hashes, nil
	}
}

// newPasswords returns n fresh passwords.
func newPasswords(n int) ([]string, error) {
	out := make([]string, n)
	for i := range out {
		pw, err := NewPassword()
		if err != nil {
			return nil, err
		}
		out[i] = pw
	}
	return out, nil
}
