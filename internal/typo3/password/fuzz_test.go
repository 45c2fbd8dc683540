package password

import (
	"errors"
	"strings"
	"testing"
)

// FuzzVerify feeds arbitrary hash/password pairs through parsing and, when
// the declared cost is small, through the full check. Nothing may panic,
// every refusal must be a *HashError that does not echo the hash, Algorithm
// and Verify must agree, and a match must not survive appending to the
// password.
func FuzzVerify(f *testing.F) {
	v := loadTYPO3Vectors(f)
	for _, vec := range v.Vectors {
		f.Add(vec.Hash, vec.Password)
	}
	for _, neg := range v.Negative {
		f.Add(neg.Hash, "password")
	}
	for _, vec := range extraVectors {
		f.Add(vec.hash, vec.password)
	}
	for _, pw := range []string{"password", "pässwörd"} {
		h, err := HashArgon2id(pw, TestArgon2Params)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(h, pw)
	}
	// Cheap argon2i and low-cost relatives of the TYPO3 classes, so the
	// fuzzer can reach the hashing code often.
	f.Add("$argon2i$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$6Jwj5IEx4nQ", "x")
	f.Add("$pbkdf2-sha256$01$AAAAAAAAAAAAAAAAAAAAAA$5YXxWug9q5nXYEWC2OpxIEQZ43111q16xYYoYP0hfL4", "x")

	f.Fuzz(func(t *testing.T, hash, password string) {
		alg, aerr := Algorithm(hash)
		p, perr := parse(hash)
		if aerr != nil && perr == nil {
			t.Fatalf("Algorithm refused what parse accepted: %v", aerr)
		}
		for _, err := range []error{aerr, perr} {
			if err == nil {
				continue
			}
			var he *HashError
			if !errors.As(err, &he) || he.Kind == nil || !errors.Is(err, he.Kind) {
				t.Fatalf("refusal %#v is not a proper *HashError", err)
			}
			// Short hashes may coincide with words of the message.
			if len(hash) >= 32 && strings.Contains(err.Error(), hash) {
				t.Fatalf("message discloses the hash: %q", err)
			}
		}
		if perr != nil {
			if ok, err := Verify(hash, password); ok || err == nil {
				t.Fatalf("Verify = %v, %v on a hash parse refuses", ok, err)
			}
			return
		}
		if alg == "" {
			t.Fatal("parsed hash without an algorithm")
		}
		if !cheap(p) || len(password) > MaxPasswordLength {
			return
		}
		ok, err := Verify(hash, password)
		if err != nil {
			t.Fatalf("Verify failed on a parsed hash: %v", err)
		}
		if ok && password == "" {
			t.Fatal("empty password matched")
		}
		// Blowfish legitimately ignores bytes past 72.
		if ok && (alg != Blowfish || len(password) < 72) {
			if again, _ := Verify(hash, password+"\x01"); again {
				t.Fatal("hash matches both a password and its extension")
			}
		}
	})
}
