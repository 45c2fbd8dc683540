package password

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/dbtest"
)

// typo3Vectors mirrors testdata/typo3/password-hashes.json, made with TYPO3's
// own PasswordHashing classes.
type typo3Vectors struct {
	DefaultBE string   `json:"default_BE_class"`
	DefaultFE string   `json:"default_FE_class"`
	Order     []string `json:"factory_lookup_order"`
	Vectors   []struct {
		Class    string `json:"class"`
		Password string `json:"password"`
		Hash     string `json:"hash"`
		Correct  bool   `json:"checkPassword_correct"`
		Wrong    bool   `json:"checkPassword_wrong"`
		Resolves string `json:"factory_resolves_to"`
	} `json:"vectors"`
	Negative []struct {
		Case      string  `json:"case"`
		Hash      string  `json:"hash"`
		Resolves  *string `json:"factory_resolves_to"`
		Exception string  `json:"exception"`
		Check     *bool   `json:"-"` // key checkPassword("password"), which tags cannot name
	} `json:"negative_cases"`
}

func loadTYPO3Vectors(tb testing.TB) typo3Vectors {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join(dbtest.TYPO3Material(tb), "password-hashes.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var v typo3Vectors
	if err := json.Unmarshal(raw, &v); err != nil {
		tb.Fatal(err)
	}
	var loose struct {
		Negative []map[string]any `json:"negative_cases"`
	}
	if err := json.Unmarshal(raw, &loose); err != nil {
		tb.Fatal(err)
	}
	for i, m := range loose.Negative {
		if b, ok := m[`checkPassword("password")`].(bool); ok {
			v.Negative[i].Check = &b
		}
	}
	if len(v.Vectors) == 0 || len(v.Negative) == 0 || len(v.Order) == 0 {
		tb.Fatal("password-hashes.json: no vectors")
	}
	return v
}

// shortClass strips the PHP namespace.
func shortClass(c string) string { return c[strings.LastIndex(c, `\`)+1:] }

type vector struct{ alg, password, hash string }

// extraVectors are cheap hashes from independent implementations: glibc /
// libxcrypt crypt() via Python (md5-crypt, $2a$, and $2y$ over TYPO3's
// sha384 pre-hash), Python hashlib (pbkdf2-sha256, and phpass written out
// by hand from the phpass algorithm). They cover edges the TYPO3 vectors do
// not: short and long salts and passwords, non-default costs, >72-byte
// bcrypt input.
var extraVectors = []vector{
	{MD5Crypt, "x", "$1$a$TYcRT0JumNkKBBlirG1X4/"},
	{MD5Crypt, "0123456789abcdef", "$1$12345678$QzvqVyjsfEisWRspy9tfx1"},
	{MD5Crypt, "0123456789abcdefg", "$1$saltsalt$Tz7GELx6iQQ6ls/oXi2H3/"},
	{MD5Crypt, strings.Repeat("p", 100), "$1$Zz./$qA06V5GcSacelM3UloYiq."},
	{MD5Crypt, "pässwörd", "$1$ab$bRZzLnQPD1ql12pSoshc71"},
	{MD5Crypt, "\t\n\r ~", "$1$x$DPg5QQ31ybi9/5SttmwlE1"},
	{Blowfish, "password", "$2a$04$abcdefghijklmnopqrstuughE8Ev8uGFaUgY2cNEySvxngrb/Jzdm"},
	{Blowfish, strings.Repeat("A", 72), "$2a$04$ABCDEFGHIJKLMNOPQRSTUuMfrF.qa9cm9n5e.IRGBiWzTB2S0BQai"},
	{Blowfish, "pässwörd-ünïcødé", "$2a$04$0123456789./abcdefghieZmw5yZSLmqFkPjpxuxB8xxqUR4ASAjO"},
	{Blowfish, "short", "$2a$04$..............O.......GcQY0TuHPtof/St09dD6gu4cpXE1VEO"},
	{Bcrypt, "password", "$2y$10$abcdefghijklmnopqrstuuuDagIn.1PS.dyUMDsFxmPFzjoEXbnqW"},
	{Bcrypt, strings.Repeat("a", 200), "$2y$10$abcdefghijklmnopqrstuucAtmrtkTpaaUQpvbD0RH0SuvNFwHcku"},
	{PBKDF2SHA256, "password", "$pbkdf2-sha256$1000$MDEyMzQ1Njc4OWFiY2RlZg$hRRjgXWkW8ResfIvBP99J/T4vkgEmMRV/0tJTOjR59I"},
	{PBKDF2SHA256, "pässwörd", "$pbkdf2-sha256$05$/////////////////////w$lS52WHpCtx4tK7AlEMjCRN.8mHSTjSl9nqE8jPJu7IE"},
	{PBKDF2SHA256, strings.Repeat("x", 300), "$pbkdf2-sha256$01$AAAAAAAAAAAAAAAAAAAAAA$5YXxWug9q5nXYEWC2OpxIEQZ43111q16xYYoYP0hfL4"},
	{Phpass, "password", "$P$5abcdefghTirbPJao7vjX0d/TOtGeU/"},
	{Phpass, "pässwörd", "$P$6$$$$$$$$Is6RAhn/Mm2byyXZVdfMo1"},
	{Phpass, strings.Repeat("y", 500), "$P$512345678xZpe2KEak5DtzwHUOowC21"},
}

// cheap reports whether checking v costs at most about a millisecond or
// two, so tests and the fuzzer can afford many of them.
func cheap(v verifier) bool {
	switch h := v.(type) {
	case *argon2Hash:
		return uint64(h.memory)*uint64(h.time) <= 4096
	case *bcryptHash:
		return h.hash[5] <= '5' && h.hash[4] == '0'
	case *pbkdf2Hash:
		return h.rounds <= 2000
	case *phpassHash:
		return h.log2 <= 10
	case *md5cryptHash:
		return true
	}
	return false
}
