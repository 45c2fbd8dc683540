package password

import (
	"encoding/base64"
	"strings"
)

// itoa64 is the crypt(3) alphabet used by md5-crypt and phpass. Their
// encoding packs bytes little-endian and emits the low six bits first, so it
// is not base64 with another alphabet and needs its own encoder.
const itoa64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// appendCrypt64 appends the n lowest six-bit groups of v, lowest first.
func appendCrypt64(dst []byte, v uint32, n int) []byte {
	for ; n > 0; n-- {
		dst = append(dst, itoa64[v&63])
		v >>= 6
	}
	return dst
}

// checkCrypt64 reports whether s is a valid crypt64 encoding whose last
// character carries only lastBits significant bits (an encoder never sets
// the others, so a hash with them set cannot match).
func checkCrypt64(s string, lastBits uint) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(itoa64, s[i]) < 0 {
			return false
		}
	}
	return s == "" || strings.IndexByte(itoa64, s[len(s)-1]) < 1<<lastBits
}

// rawStd is unpadded standard base64, refusing non-zero trailing bits as
// libargon2 does.
var rawStd = base64.RawStdEncoding.Strict()

// decodeB64 decodes unpadded base64 in the given encoding. Go's decoder
// skips CR and LF, so the alphabet is checked first: "$salt\n$" must not
// be the same hash as "$salt$".
func decodeB64(enc *base64.Encoding, alphabet, s string) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(alphabet, s[i]) < 0 {
			return nil, false
		}
	}
	b, err := enc.DecodeString(s)
	return b, err == nil
}

const b64Std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
