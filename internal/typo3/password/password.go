package password

import (
	"errors"
	"strconv"
	"strings"
)

// Algorithm names, as returned by Algorithm.
const (
	Argon2i      = "argon2i"
	Argon2id     = "argon2id"
	Bcrypt       = "bcrypt" // $2y$, with TYPO3's sha384 pre-hash
	PBKDF2SHA256 = "pbkdf2-sha256"
	Phpass       = "phpass"
	Blowfish     = "blowfish" // $2a$, plain crypt()
	MD5Crypt     = "md5-crypt"
)

// Limits on what a stored hash may ask for. A hash above them is refused
// with ErrCostTooHigh: it comes from the database, and checking one must not
// let a planted value stall the process or exhaust its memory.
const (
	MaxArgon2Memory   = 1 << 20 // KiB (1 GiB)
	MaxArgon2Work     = 1 << 24 // memory KiB × passes, 16 × TYPO3's default
	MaxArgon2Threads  = 255     // x/crypto/argon2 takes a uint8
	MaxBcryptCost     = 16      // TYPO3 uses 12 ($2y$) and 7 ($2a$)
	MaxPBKDF2Rounds   = 10_000_000
	MaxPhpassLog2     = 20   // TYPO3 uses 14
	MaxPasswordLength = 1024 // bytes; bounds the iterated-md5 schemes
)

var (
	// ErrUnsupportedHash: the value is no hash TYPO3 v13 would accept, or a
	// variant t3agent cannot compute.
	ErrUnsupportedHash = errors.New("unsupported password hash")
	// ErrMalformedHash: the hash belongs to a known algorithm but is
	// damaged (truncated, bad encoding, impossible parameters).
	ErrMalformedHash = errors.New("malformed password hash")
	// ErrCostTooHigh: the hash's cost parameters exceed the Max* limits.
	ErrCostTooHigh = errors.New("password hash cost exceeds t3agent's limits")
	// ErrPasswordTooLong: the password exceeds MaxPasswordLength.
	ErrPasswordTooLong = errors.New("password exceeds t3agent's maximum length of " + strconv.Itoa(MaxPasswordLength) + " bytes")
	// ErrEmptyPassword: TYPO3 never hashes an empty password, nor do we.
	ErrEmptyPassword = errors.New("refusing to hash an empty password")
)

// HashError explains why a stored hash cannot be checked. errors.Is matches
// it against its Kind.
type HashError struct {
	Kind      error  // ErrUnsupportedHash, ErrMalformedHash or ErrCostTooHigh
	Algorithm string // algorithm the hash is, or looks like; "" if unknown
	Detail    string // human-readable; never contains the hash
}

func (e *HashError) Error() string { return e.Detail }

func (e *HashError) Unwrap() error { return e.Kind }

func malformed(alg, what string) error {
	return &HashError{Kind: ErrMalformedHash, Algorithm: alg,
		Detail: "this " + alg + " password hash is damaged (" + what + "); reset the password in TYPO3"}
}

func tooCostly(alg, what string) error {
	return &HashError{Kind: ErrCostTooHigh, Algorithm: alg,
		Detail: "this " + alg + " password hash asks for " + what + ", beyond what t3agent computes; reset the password in TYPO3 with its default hashing settings"}
}

func unsupported(alg, what string) error {
	return &HashError{Kind: ErrUnsupportedHash, Algorithm: alg, Detail: what}
}

// verifier is a parsed hash, ready to check passwords against.
type verifier interface {
	verify(password string) (bool, error)
}

// scheme is one entry of TYPO3's factory list. claims mirrors the class's
// isValidSaltedPW, which is looser than parse: TYPO3 picks the class on
// prefix (and sometimes length) alone and only then fails on a bad hash.
type scheme struct {
	name   string
	class  string
	claims func(hash string) bool
	parse  func(hash string) (verifier, error)
}

// schemes is SYS.availablePasswordHashAlgorithms in TYPO3 v13.4 order.
var schemes = []scheme{
	{Argon2i, "Argon2iPasswordHash", prefixed(argon2iPrefix, 0), parseArgon2i},
	{Argon2id, "Argon2idPasswordHash", prefixed(argon2idPrefix, 0), parseArgon2id},
	{Bcrypt, "BcryptPasswordHash", claimsBcrypt, parseBcrypt},
	// The remaining classes' isValidSalt accepts any prefixed string of at
	// least the base64 length of their salt (22 chars for 16 bytes, 8 for 6).
	{PBKDF2SHA256, "Pbkdf2PasswordHash", prefixed(pbkdf2Prefix, 22), parsePBKDF2},
	{Phpass, "PhpassPasswordHash", prefixed(phpassPrefix, 8), parsePhpass},
	{Blowfish, "BlowfishPasswordHash", prefixed(blowfishPrefix, 22), parseBlowfish},
	{MD5Crypt, "Md5PasswordHash", prefixed(md5cryptPrefix, 8), parseMD5Crypt},
}

func prefixed(prefix string, minLen int) func(string) bool {
	return func(h string) bool { return strings.HasPrefix(h, prefix) && len(h) >= minLen }
}

// Algorithm reports which algorithm TYPO3's PasswordHashFactory would assign
// the hash to. It does not validate the rest of the hash; Verify does.
func Algorithm(hash string) (string, error) {
	s, err := identify(hash)
	if err != nil {
		return "", err
	}
	return s.name, nil
}

// TYPO3Class returns the short name of the TYPO3 class
// (TYPO3\CMS\Core\Crypto\PasswordHashing\…) that handles an algorithm, or ""
// for an unknown name.
func TYPO3Class(algorithm string) string {
	for _, s := range schemes {
		if s.name == algorithm {
			return s.class
		}
	}
	return ""
}

// Verify reports whether password matches the stored hash. It returns an
// error (a *HashError) only when the hash cannot be checked at all, and
// ErrPasswordTooLong for passwords over MaxPasswordLength. An empty password
// never matches: TYPO3 neither creates such hashes nor attempts such logins.
func Verify(hash, password string) (bool, error) {
	v, err := parse(hash)
	if err != nil {
		return false, err
	}
	if len(password) > MaxPasswordLength {
		return false, ErrPasswordTooLong
	}
	if password == "" {
		return false, nil
	}
	return v.verify(password)
}

func identify(hash string) (*scheme, error) {
	for i := range schemes {
		if schemes[i].claims(hash) {
			return &schemes[i], nil
		}
	}
	return nil, unrecognised(hash)
}

func parse(hash string) (verifier, error) {
	s, err := identify(hash)
	if err != nil {
		return nil, err
	}
	return s.parse(hash)
}

// unrecognised explains, as specifically as it safely can, why no scheme
// claimed the hash.
func unrecognised(hash string) error {
	const reset = " that t3agent refuses; reset the password in TYPO3"
	legacy := func(what string) error {
		return unsupported("", "this password hash uses an insecure legacy format ("+what+")"+reset)
	}
	switch {
	case hash == "":
		return unsupported("", "this account has no password hash; set a password in TYPO3")
	case len(hash) == 32 && isHex(hash):
		return legacy("unsalted md5")
	case len(hash) == 40 && isHex(hash):
		return legacy("unsalted sha1")
	case strings.HasPrefix(hash, "M$"):
		// saltedpasswords (TYPO3 ≤ 8) wrapped old md5 hashes like this.
		return legacy("salted hash of an md5 hash, from the old saltedpasswords upgrade wizard")
	case strings.HasPrefix(hash, bcryptPrefix):
		if c, ok := twoDigits(hash[4:min(6, len(hash))]); ok && c < bcryptMinCost && len(hash) == bcryptLen {
			return unsupported(Bcrypt, "this bcrypt password hash has a cost below 10, which TYPO3's BcryptPasswordHash does not accept"+reset)
		}
		return malformed(Bcrypt, "wrong length or cost field")
	case strings.HasPrefix(hash, "$2b$"), strings.HasPrefix(hash, "$2x$"):
		return unsupported("", "this password hash uses a bcrypt variant ($2b$/$2x$) that TYPO3 does not accept"+reset)
	}
	for _, s := range schemes {
		if p := schemePrefix(s.name); p != "" && strings.HasPrefix(hash, p) {
			return malformed(s.name, "too short")
		}
	}
	if strings.HasPrefix(hash, "$") {
		return unsupported("", "this password hash uses a format TYPO3 v13 does not support"+reset)
	}
	return unsupported("", "this password field holds no recognised hash (it may be a plaintext password)"+reset)
}

func schemePrefix(name string) string {
	switch name {
	case PBKDF2SHA256:
		return pbkdf2Prefix
	case Phpass:
		return phpassPrefix
	case Blowfish:
		return blowfishPrefix
	case MD5Crypt:
		return md5cryptPrefix
	}
	return "" // argon2 and $2y$ are claimed on prefix alone or handled above
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// decimal parses an unsigned decimal as libargon2 and printf("%u") write
// it: digits only, no sign, no leading zeros.
func decimal(s string, limit uint64) (uint64, bool) {
	if s == "" || len(s) > 20 || (s[0] == '0' && len(s) > 1) {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (limit-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}
