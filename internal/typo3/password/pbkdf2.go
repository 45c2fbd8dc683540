package password

import (
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

const pbkdf2Prefix = "$pbkdf2-sha256$"

// passlib's "adapted base64": the standard alphabet with '.' for '+', no
// padding. Swapping the alphabet keeps decoding strict and allocation-free.
var (
	adaptedB64      = base64.NewEncoding("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789./").WithPadding(base64.NoPadding).Strict()
	adaptedAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789./"
)

type pbkdf2Hash struct {
	rounds int
	salt   []byte
	key    []byte
}

// parsePBKDF2 accepts what Pbkdf2PasswordHash::checkPassword can match: it
// rebuilds the whole string from a 16-byte salt, the rounds printed with
// %02u and a 32-byte sha256 key, so nothing else can ever compare equal.
func parsePBKDF2(h string) (verifier, error) {
	const alg = PBKDF2SHA256
	parts := strings.Split(strings.TrimPrefix(h, pbkdf2Prefix), "$")
	if len(parts) != 3 {
		return nil, malformed(alg, "expected rounds$salt$hash")
	}
	rounds, err := strconv.Atoi(parts[0])
	if err != nil || rounds < 1 || parts[0] != fmt.Sprintf("%02d", rounds) {
		return nil, malformed(alg, "bad rounds field")
	}
	if rounds > MaxPBKDF2Rounds {
		return nil, tooCostly(alg, fmt.Sprintf("%d rounds", rounds))
	}
	salt, ok := decodeB64(adaptedB64, adaptedAlphabet, parts[1])
	if !ok || len(salt) != 16 {
		return nil, malformed(alg, "bad salt")
	}
	key, ok := decodeB64(adaptedB64, adaptedAlphabet, parts[2])
	if !ok || len(key) != sha256.Size {
		return nil, malformed(alg, "bad hash value")
	}
	return &pbkdf2Hash{rounds: rounds, salt: salt, key: key}, nil
}

func (p *pbkdf2Hash) verify(password string) (bool, error) {
	key, err := pbkdf2.Key(sha256.New, password, p.salt, p.rounds, len(p.key))
	if err != nil {
		return false, err // only in FIPS 140-only mode
	}
	return subtle.ConstantTimeCompare(key, p.key) == 1, nil
}
