package password

import (
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"math"
	"strings"

	"golang.org/x/crypto/argon2"
)

const (
	argon2iPrefix  = "$argon2i$"
	argon2idPrefix = "$argon2id$"
	argon2Version  = 19 // 0x13; x/crypto/argon2 implements no other
)

// Argon2Params are the cost settings for HashArgon2id. Memory is in KiB, as
// in PHP's memory_cost and the hash's m= field.
type Argon2Params struct {
	Memory     uint32
	Time       uint32
	Threads    uint8
	SaltLength uint32 // bytes
	KeyLength  uint32 // bytes
}

var (
	// DefaultArgon2Params are TYPO3 v13's Argon2id defaults
	// (memory_cost 65536, time_cost 16, one thread, PHP's 16-byte salt and
	// 32-byte hash).
	DefaultArgon2Params = Argon2Params{Memory: 65536, Time: 16, Threads: 1, SaltLength: 16, KeyLength: 32}
	// TestArgon2Params are cheap settings for tests and demo data. TYPO3
	// verifies such hashes but rehashes them at the next login.
	TestArgon2Params = Argon2Params{Memory: 1024, Time: 2, Threads: 1, SaltLength: 16, KeyLength: 32}
)

// HashArgon2id hashes password in PHP password_hash(PASSWORD_ARGON2ID)
// format, e.g. $argon2id$v=19$m=65536,t=16,p=1$<salt>$<hash>, with a fresh
// random salt.
func HashArgon2id(password string, p Argon2Params) (string, error) {
	if password == "" {
		return "", ErrEmptyPassword
	}
	if len(password) > MaxPasswordLength {
		return "", ErrPasswordTooLong
	}
	switch {
	case p.Time < 1, p.Threads < 1, uint64(p.Memory) < 8*uint64(p.Threads):
		return "", errors.New("argon2 parameters out of range: need time ≥ 1, threads ≥ 1, memory ≥ 8 KiB per thread")
	case p.Memory > MaxArgon2Memory, uint64(p.Memory)*uint64(p.Time) > MaxArgon2Work:
		return "", fmt.Errorf("argon2 parameters exceed t3agent's limits (memory ≤ %d KiB, memory × time ≤ %d)", MaxArgon2Memory, MaxArgon2Work)
	case p.SaltLength < 8, p.KeyLength < 4, p.SaltLength > 1024, p.KeyLength > 1024:
		return "", errors.New("argon2 salt must be 8–1024 bytes and key 4–1024 bytes")
	}
	salt := make([]byte, p.SaltLength)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, p.KeyLength)
	return fmt.Sprintf("%sv=%d$m=%d,t=%d,p=%d$%s$%s", argon2idPrefix, argon2Version,
		p.Memory, p.Time, p.Threads, rawStd.EncodeToString(salt), rawStd.EncodeToString(key)), nil
}

type argon2Hash struct {
	id        bool
	memory    uint32
	time      uint32
	threads   uint8
	salt, key []byte
}

func parseArgon2i(h string) (verifier, error)  { return parseArgon2(h, false) }
func parseArgon2id(h string) (verifier, error) { return parseArgon2(h, true) }

// parseArgon2 accepts what libargon2's decoder (behind PHP's
// password_verify) accepts, minus version 1.0, which Go cannot compute.
func parseArgon2(h string, id bool) (verifier, error) {
	alg, prefix := Argon2i, argon2iPrefix
	if id {
		alg, prefix = Argon2id, argon2idPrefix
	}
	parts := strings.Split(strings.TrimPrefix(h, prefix), "$")
	if len(parts) == 3 && strings.HasPrefix(parts[0], "m=") {
		return nil, unsupported(alg, "this "+alg+" password hash has no version field, i.e. Argon2 1.0, which t3agent cannot compute; reset the password in TYPO3")
	}
	if len(parts) != 4 {
		return nil, malformed(alg, "expected v=…$m=…,t=…,p=…$salt$hash")
	}
	v, ok := strings.CutPrefix(parts[0], "v=")
	ver, ok2 := decimal(v, math.MaxUint32)
	if !ok || !ok2 {
		return nil, malformed(alg, "bad version field")
	}
	if ver != argon2Version {
		return nil, unsupported(alg, fmt.Sprintf("this %s password hash uses Argon2 version %d; t3agent computes only version 19; reset the password in TYPO3", alg, ver))
	}
	m, t, p, ok := argon2Costs(parts[1])
	if !ok {
		return nil, malformed(alg, "bad m=…,t=…,p=… field")
	}
	switch {
	case t < 1 || p < 1 || m < 8*p:
		return nil, malformed(alg, "impossible cost parameters")
	case p > MaxArgon2Threads:
		return nil, unsupported(alg, fmt.Sprintf("this %s password hash uses %d lanes; t3agent computes at most %d; reset the password in TYPO3", alg, p, MaxArgon2Threads))
	case m > MaxArgon2Memory:
		return nil, tooCostly(alg, fmt.Sprintf("%d KiB of memory", m))
	case m*t > MaxArgon2Work:
		return nil, tooCostly(alg, fmt.Sprintf("%d passes over %d KiB", t, m))
	}
	salt, ok := decodeB64(rawStd, b64Std, parts[2])
	if !ok || len(salt) < 8 {
		return nil, malformed(alg, "bad salt")
	}
	key, ok := decodeB64(rawStd, b64Std, parts[3])
	if !ok || len(key) < 4 {
		return nil, malformed(alg, "bad hash value")
	}
	return &argon2Hash{id: id, memory: uint32(m), time: uint32(t), threads: uint8(p), salt: salt, key: key}, nil
}

// argon2Costs parses "m=<KiB>,t=<passes>,p=<lanes>", in that order.
func argon2Costs(s string) (m, t, p uint64, ok bool) {
	f := strings.Split(s, ",")
	if len(f) != 3 {
		return 0, 0, 0, false
	}
	var vals [3]uint64
	for i, name := range []string{"m=", "t=", "p="} {
		v, found := strings.CutPrefix(f[i], name)
		n, good := decimal(v, math.MaxUint32)
		if !found || !good {
			return 0, 0, 0, false
		}
		vals[i] = n
	}
	return vals[0], vals[1], vals[2], true
}

func (a *argon2Hash) verify(password string) (bool, error) {
	derive := argon2.Key
	if a.id {
		derive = argon2.IDKey
	}
	key := derive([]byte(password), a.salt, a.time, a.memory, a.threads, uint32(len(a.key)))
	return subtle.ConstantTimeCompare(key, a.key) == 1, nil
}
