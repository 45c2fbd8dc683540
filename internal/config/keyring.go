package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/t3agent/t3agent/internal/secret"
)

// ErrNoMasterKey is returned by Keyring when no master key is configured.
var ErrNoMasterKey = errors.New("security.master_key: no master key is configured; set T3AGENT_SECURITY_MASTER_KEY or security.master_key_file (32 random bytes, base64)")

// Keyring builds the keyring that seals secrets at rest.
func (c Config) Keyring() (*secret.Keyring, error) {
	key := c.Security.MasterKey
	if key == "" && c.Security.MasterKeyFile != "" {
		var err error
		if key, err = readKeyFile(c.Security.MasterKeyFile); err != nil {
			return nil, err
		}
	}
	if strings.TrimSpace(key) == "" {
		return nil, ErrNoMasterKey
	}
	var previous []string
	for _, p := range strings.Split(c.Security.PreviousKeys, ",") {
		if strings.TrimSpace(p) != "" {
			previous = append(previous, p)
		}
	}
	k, err := secret.NewKeyring(key, previous...)
	if err != nil {
		return nil, fmt.Errorf("security: %w", err)
	}
	return k, nil
}

// EnsureMasterKey creates the configured master key file when it is
// missing (see EnsureMasterKeyFile) and checks it when it exists. It does
// nothing when the key is given inline or no key is configured. created
// reports a new file.
func (c Config) EnsureMasterKey() (created bool, err error) {
	if c.Security.MasterKey != "" || c.Security.MasterKeyFile == "" {
		return false, nil
	}
	return EnsureMasterKeyFile(c.Security.MasterKeyFile)
}

// EnsureMasterKeyFile makes path hold a usable master key: a missing file
// is created with a fresh key (32 random bytes, base64) readable by its
// owner only, in a directory created owner-only if needed; an existing file
// must be readable by its owner only and hold a key, or the error says
// what to fix. A key is never overwritten: it is what opens the sealed
// credentials.
func EnsureMasterKeyFile(path string) (created bool, err error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		if created, err = writeNewKey(path); err != nil {
			return false, err
		}
	}
	if _, err := readKeyFile(path); err != nil {
		return false, err
	}
	return created, nil
}

// writeNewKey writes a fresh key with O_EXCL, so two processes starting
// at once keep one key; the loser reports no creation and reads the
// winner's.
func writeNewKey(path string) (bool, error) {
	key, err := secret.NewKey()
	if err != nil {
		return false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, fmt.Errorf("security.master_key_file: the directory of %s cannot be created: %w", path, errors.Unwrap(err))
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("security.master_key_file: %s cannot be created: %w", path, errors.Unwrap(err))
	}
	_, err = f.WriteString(key + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return false, fmt.Errorf("security.master_key_file: %s cannot be written: %w", path, err)
	}
	return true, nil
}

// readKeyFile reads a key file that only its owner may read and that
// holds a key; every refusal is one sentence naming the file.
func readKeyFile(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("security.master_key_file: %s cannot be read", path)
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("security.master_key_file: %s is not a file", path)
	}
	// Windows has no such mode bits; its ACLs are the operator's.
	if perm := st.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		return "", fmt.Errorf("security.master_key_file: %s may be read by group or others (mode %04o); run chmod 600 %s", path, perm, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("security.master_key_file: %s cannot be read", path)
	}
	if _, err := secret.NewKeyring(string(b)); err != nil {
		return "", fmt.Errorf("security.master_key_file: %s is malformed: %w", path, err)
	}
	return string(b), nil
}
