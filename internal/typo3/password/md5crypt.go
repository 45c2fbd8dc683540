package password

import (
	"crypto/md5"
	"crypto/subtle"
	"strings"
)

const (
	md5cryptPrefix  = "$1$"
	md5cryptMaxSalt = 8
	md5cryptRounds  = 1000
)

type md5cryptHash struct {
	hash string
	salt string
}

// parseMD5Crypt accepts $1$<salt>$<22 characters>. crypt() reads at most
// eight salt characters, up to the first '$', and PHP compares the whole
// output, so a longer salt could never match.
func parseMD5Crypt(h string) (verifier, error) {
	const alg = MD5Crypt
	rest := h[len(md5cryptPrefix):]
	end := strings.IndexByte(rest, '$')
	if end < 0 || end > md5cryptMaxSalt {
		return nil, malformed(alg, "bad salt")
	}
	// 16 bytes leave 2 significant bits in the last character.
	if enc := rest[end+1:]; len(enc) != 22 || !checkCrypt64(enc, 2) {
		return nil, malformed(alg, "bad hash encoding")
	}
	return &md5cryptHash{hash: h, salt: rest[:end]}, nil
}

func (m *md5cryptHash) verify(password string) (bool, error) {
	if strings.IndexByte(password, 0) >= 0 {
		return false, nil // crypt() would stop at the NUL; see the package comment
	}
	sum := md5crypt([]byte(password), []byte(m.salt))
	return subtle.ConstantTimeCompare(sum, []byte(m.hash)) == 1, nil
}

// md5crypt is Poul-Henning Kamp's FreeBSD MD5 crypt as PHP's crypt() runs
// it, returning the full "$1$salt$hash" string.
func md5crypt(pw, salt []byte) []byte {
	// A helper digest of password, salt, password seeds the main one.
	alt := md5.Sum(concat(pw, salt, pw))

	d := md5.New()
	d.Write(pw)
	d.Write([]byte(md5cryptPrefix))
	d.Write(salt)
	// As many helper bytes as the password is long, cycling the digest.
	for n := len(pw); n > 0; n -= md5.Size {
		d.Write(alt[:min(n, md5.Size)])
	}
	// For each bit of the length, low bit first: a zero byte where the bit
	// is set, the first password byte where it is clear. (The original
	// wrote from a zeroed buffer, hence the zero.)
	for n := len(pw); n > 0; n >>= 1 {
		if n&1 == 1 {
			d.Write([]byte{0})
		} else {
			d.Write(pw[:1])
		}
	}
	var sum [md5.Size]byte
	d.Sum(sum[:0])

	// 1000 rounds that mix password, salt and previous digest in an order
	// driven by the round number, to slow down brute force.
	for i := 0; i < md5cryptRounds; i++ {
		d.Reset()
		if i%2 == 1 {
			d.Write(pw)
		} else {
			d.Write(sum[:])
		}
		if i%3 != 0 {
			d.Write(salt)
		}
		if i%7 != 0 {
			d.Write(pw)
		}
		if i%2 == 1 {
			d.Write(sum[:])
		} else {
			d.Write(pw)
		}
		d.Sum(sum[:0])
	}

	out := make([]byte, 0, len(md5cryptPrefix)+len(salt)+1+22)
	out = append(append(append(out, md5cryptPrefix...), salt...), '$')
	// The digest bytes are emitted in a fixed shuffled order, three at a
	// time with the first one in the high bits; byte 11 goes last, alone.
	for _, g := range [5][3]int{{0, 6, 12}, {1, 7, 13}, {2, 8, 14}, {3, 9, 15}, {4, 10, 5}} {
		out = appendCrypt64(out, uint32(sum[g[0]])<<16|uint32(sum[g[1]])<<8|uint32(sum[g[2]]), 4)
	}
	return appendCrypt64(out, uint32(sum[11]), 2)
}

func concat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}
