package password

import (
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/bcrypt"
)

const (
	bcryptPrefix   = "$2y$"
	blowfishPrefix = "$2a$"
	bcryptLen      = 60
	// bcryptAlphabet is bcrypt's own base64 order, unlike itoa64.
	bcryptAlphabet = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	// bcryptMinCost is PHP 8.2's PASSWORD_BCRYPT_DEFAULT_COST, the lowest
	// cost BcryptPasswordHash::isValidSaltedPW accepts (PHP 8.4 raised the
	// constant to 12; the reference vectors come from 8.2).
	bcryptMinCost = 10
)

// claimsBcrypt mirrors BcryptPasswordHash::isValidSaltedPW: PHP's
// password_get_info wants exactly 60 characters, TYPO3 a cost of 10–31.
func claimsBcrypt(h string) bool {
	if !strings.HasPrefix(h, bcryptPrefix) || len(h) != bcryptLen {
		return false
	}
	c, ok := twoDigits(h[4:6])
	return ok && c >= bcryptMinCost && c <= 31
}

func twoDigits(s string) (int, bool) {
	if len(s) != 2 || s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
		return 0, false
	}
	return int(s[0]-'0')*10 + int(s[1]-'0'), true
}

type bcryptHash struct {
	hash    []byte
	prehash bool // TYPO3's $2y$ class; $2a$ is plain crypt()
}

func parseBcrypt(h string) (verifier, error)   { return parseBcryptLike(h, Bcrypt, true) }
func parseBlowfish(h string) (verifier, error) { return parseBcryptLike(h, Blowfish, false) }

// parseBcryptLike accepts only hashes crypt_blowfish could have written:
// the final salt and hash characters carry unused bits that it always
// leaves zero, and PHP compares the whole string.
func parseBcryptLike(h, alg string, prehash bool) (verifier, error) {
	if len(h) != bcryptLen {
		return nil, malformed(alg, "wrong length")
	}
	cost, ok := twoDigits(h[4:6])
	if !ok || h[6] != '$' || cost < 4 || cost > 31 {
		return nil, malformed(alg, "bad cost field")
	}
	if cost > MaxBcryptCost {
		return nil, tooCostly(alg, fmt.Sprintf("cost %d", cost))
	}
	body := h[7:] // 22 salt characters (16 bytes), 31 hash characters (23 bytes)
	for i := 0; i < len(body); i++ {
		if strings.IndexByte(bcryptAlphabet, body[i]) < 0 {
			return nil, malformed(alg, "bad character")
		}
	}
	if strings.IndexByte(bcryptAlphabet, body[21])%16 != 0 || strings.IndexByte(bcryptAlphabet, body[52])%4 != 0 {
		return nil, malformed(alg, "non-canonical encoding")
	}
	return &bcryptHash{hash: []byte(h), prehash: prehash}, nil
}

func (b *bcryptHash) verify(password string) (bool, error) {
	pw := []byte(password)
	if b.prehash {
		// 64 base64 characters: under bcrypt's 72-byte limit, never NUL.
		sum := sha512.Sum384(pw)
		pw = []byte(base64.StdEncoding.EncodeToString(sum[:]))
	} else if strings.IndexByte(password, 0) >= 0 || strings.IndexByte(password, 0xff) >= 0 {
		return false, nil // see the package comment
	}
	// Past 72 bytes Go ignores the password exactly as crypt_blowfish does.
	err := bcrypt.CompareHashAndPassword(b.hash, pw)
	if errors.Is(err, bcrypt.ErrMismatchedHashAndPassword) {
		return false, nil
	}
	return err == nil, err // parseBcryptLike rules out other errors
}
