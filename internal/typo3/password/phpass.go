package password

import (
	"crypto/md5"
	"crypto/subtle"
	"fmt"
	"strings"
)

const (
	phpassPrefix = "$P$"
	phpassLen    = 34 // prefix, cost, 8 salt characters, 22 hash characters
)

type phpassHash struct {
	hash string
	log2 int
}

// parsePhpass accepts what PhpassPasswordHash::checkPassword can match: it
// rebuilds the first 12 characters plus 22 of encoded md5, and gives up on
// costs outside 2^7–2^24.
func parsePhpass(h string) (verifier, error) {
	const alg = Phpass
	if len(h) != phpassLen {
		return nil, malformed(alg, "wrong length")
	}
	log2 := strings.IndexByte(itoa64, h[3])
	if log2 < 7 || log2 > 24 {
		return nil, malformed(alg, "bad cost character")
	}
	if log2 > MaxPhpassLog2 {
		return nil, tooCostly(alg, fmt.Sprintf("2^%d md5 rounds", log2))
	}
	// The salt is used verbatim, whatever its characters.
	if !checkCrypt64(h[12:], 2) { // 16 bytes leave 2 bits in the last character
		return nil, malformed(alg, "bad hash encoding")
	}
	return &phpassHash{hash: h, log2: log2}, nil
}

func (p *phpassHash) verify(password string) (bool, error) {
	buf := make([]byte, 0, md5.Size+len(password))
	sum := md5.Sum(append(append(buf, p.hash[4:12]...), password...))
	for n := 1 << p.log2; n > 0; n-- {
		sum = md5.Sum(append(append(buf[:0], sum[:]...), password...))
	}
	out := append(make([]byte, 0, phpassLen), p.hash[:12]...)
	for i := 0; i < len(sum); i += 3 {
		// Little-endian groups of three bytes; the 16th byte stands alone.
		v, n := uint32(sum[i]), 2
		if i+1 < len(sum) {
			v |= uint32(sum[i+1])<<8 | uint32(sum[i+2])<<16
			n = 4
		}
		out = appendCrypt64(out, v, n)
	}
	return subtle.ConstantTimeCompare(out, []byte(p.hash)) == 1, nil
}
