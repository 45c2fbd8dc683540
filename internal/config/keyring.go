package config

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/t3agent/t3agent/internal/secret"
)

// ErrNoMasterKey is returned by Keyring when no master key is configured.
var ErrNoMasterKey = errors.New("security.master_key: no master key is configured; set T3AGENT_SECURITY_MASTER_KEY or security.master_key_file (32 random bytes, base64)")

// Keyring builds the keyring that seals secrets at rest.
func (c Config) Keyring() (*secret.Keyring, error) {
	key := c.Security.MasterKey
	if key == "" && c.Security.MasterKeyFile != "" {
		b, err := os.ReadFile(c.Security.MasterKeyFile)
		if err != nil {
			return nil, fmt.Errorf("security.master_key_file: %s cannot be read", c.Security.MasterKeyFile)
		}
		key = string(b)
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
