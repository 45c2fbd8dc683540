package password

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

func TestTYPO3Vectors(t *testing.T) {
	t.Parallel()
	v := loadTYPO3Vectors(t)
	for i, vec := range v.Vectors {
		t.Run(fmt.Sprintf("%02d_%s", i, vec.Class), func(t *testing.T) {
			t.Parallel()
			if !vec.Correct || vec.Wrong {
				t.Fatalf("vector file: expected correct=true wrong=false, got %v %v", vec.Correct, vec.Wrong)
			}
			alg, err := Algorithm(vec.Hash)
			if err != nil {
				t.Fatalf("Algorithm: %v", err)
			}
			if got := TYPO3Class(alg); got != vec.Resolves || got != vec.Class {
				t.Errorf("resolves to %s (%s), TYPO3 resolves to %s", got, alg, vec.Resolves)
			}
			ok, err := Verify(vec.Hash, vec.Password)
			if err != nil || !ok {
				t.Errorf("Verify(correct) = %v, %v; want true", ok, err)
			}
			ok, err = Verify(vec.Hash, vec.Password+"x")
			if err != nil || ok {
				t.Errorf("Verify(wrong) = %v, %v; want false", ok, err)
			}
		})
	}
}

func TestTYPO3NegativeCases(t *testing.T) {
	t.Parallel()
	v := loadTYPO3Vectors(t)
	wantDetail := map[string]string{
		"5f4dcc3b5aa765d61d8327deb882cf99":         "insecure legacy format (unsalted md5)",
		"5baa61e4c9b93f3f0682250b6cf8331b7ee68fd8": "insecure legacy format (unsalted sha1)",
		"password": "may be a plaintext password",
	}
	for _, neg := range v.Negative {
		t.Run(neg.Case, func(t *testing.T) {
			t.Parallel()
			alg, aerr := Algorithm(neg.Hash)
			ok, verr := Verify(neg.Hash, "password")
			if neg.Resolves == nil {
				if shortClass(neg.Exception) != "InvalidPasswordHashException" {
					t.Fatalf("vector file: unexpected exception %q", neg.Exception)
				}
				for _, err := range []error{aerr, verr} {
					var he *HashError
					if !errors.Is(err, ErrUnsupportedHash) || !errors.As(err, &he) || he.Algorithm != "" {
						t.Fatalf("got %#v, want a *HashError of kind ErrUnsupportedHash", err)
					}
				}
				if ok || alg != "" {
					t.Errorf("Verify = %v, Algorithm = %q; want false, \"\"", ok, alg)
				}
				want := wantDetail[neg.Hash]
				if want == "" {
					t.Fatalf("no expectation for this case")
				}
				if !strings.Contains(verr.Error(), want) || !strings.Contains(verr.Error(), "reset the password in TYPO3") {
					t.Errorf("message %q lacks %q", verr, want)
				}
				return
			}
			// Resolved, but checkPassword is false: the plain bcrypt case.
			if neg.Check == nil || *neg.Check {
				t.Fatalf("vector file: expected checkPassword false")
			}
			if aerr != nil || TYPO3Class(alg) != *neg.Resolves {
				t.Errorf("Algorithm = %q, %v; TYPO3 resolves to %s", alg, aerr, *neg.Resolves)
			}
			if ok || verr != nil {
				t.Errorf("Verify = %v, %v; want false, nil", ok, verr)
			}
		})
	}
}

func TestFactoryOrderAndDefaults(t *testing.T) {
	t.Parallel()
	v := loadTYPO3Vectors(t)
	if len(v.Order) != len(schemes) {
		t.Fatalf("TYPO3 lists %d classes, we have %d", len(v.Order), len(schemes))
	}
	for i, class := range v.Order {
		if schemes[i].class != class {
			t.Errorf("position %d: TYPO3 has %s, we have %s", i, class, schemes[i].class)
		}
		if TYPO3Class(schemes[i].name) != class {
			t.Errorf("TYPO3Class(%q) = %q, want %q", schemes[i].name, TYPO3Class(schemes[i].name), class)
		}
	}
	if TYPO3Class("sha1") != "" {
		t.Error("TYPO3Class of an unknown name must be empty")
	}
	for _, c := range []string{v.DefaultBE, v.DefaultFE} {
		if shortClass(c) != TYPO3Class(Argon2id) {
			t.Errorf("TYPO3 default %s is not what HashArgon2id writes", c)
		}
	}
}

func TestExtraVectors(t *testing.T) {
	t.Parallel()
	for _, vec := range extraVectors {
		t.Run(vec.hash, func(t *testing.T) {
			t.Parallel()
			if alg, err := Algorithm(vec.hash); err != nil || alg != vec.alg {
				t.Fatalf("Algorithm = %q, %v; want %q", alg, err, vec.alg)
			}
			if ok, err := Verify(vec.hash, vec.password); !ok || err != nil {
				t.Errorf("Verify(correct) = %v, %v", ok, err)
			}
			if ok, err := Verify(vec.hash, vec.password+"x"); (ok && len(vec.password) < 72) || err != nil {
				t.Errorf("Verify(wrong) = %v, %v", ok, err)
			}
			if ok, err := Verify(vec.hash, vec.password[:len(vec.password)-1]); ok || err != nil {
				t.Errorf("Verify(shortened) = %v, %v", ok, err)
			}
		})
	}
}

// TestPlainCryptQuirks pins where plain crypt() hashes differ from a naive
// reading: bcrypt's 72-byte limit, and the bytes we refuse (doc.go).
func TestPlainCryptQuirks(t *testing.T) {
	t.Parallel()
	a72 := strings.Repeat("A", 72)
	const bf72 = "$2a$04$ABCDEFGHIJKLMNOPQRSTUuMfrF.qa9cm9n5e.IRGBiWzTB2S0BQai"
	const bfPassword = "$2a$04$abcdefghijklmnopqrstuughE8Ev8uGFaUgY2cNEySvxngrb/Jzdm"
	const md5x = "$1$a$TYcRT0JumNkKBBlirG1X4/"
	const by2y = "$2y$10$abcdefghijklmnopqrstuucAtmrtkTpaaUQpvbD0RH0SuvNFwHcku" // 200 × "a"
	cases := []struct {
		name, hash, password string
		want                 bool
	}{
		{"blowfish ignores bytes past 72 like crypt()", bf72, a72 + "anything", true},
		{"blowfish 71 bytes differ", bf72, a72[:71], false},
		{"blowfish refuses NUL", bfPassword, "password\x00", false},
		{"blowfish refuses 0xFF", bfPassword, "password\xff", false},
		{"md5-crypt refuses NUL", md5x, "x\x00", false},
		{"TYPO3 bcrypt pre-hash sees all 200 bytes", by2y, strings.Repeat("a", 200), true},
		{"TYPO3 bcrypt pre-hash: 199 bytes differ", by2y, strings.Repeat("a", 199), false},
		{"TYPO3 bcrypt pre-hash: byte 201 counts", by2y, strings.Repeat("a", 201), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if ok, err := Verify(c.hash, c.password); ok != c.want || err != nil {
				t.Errorf("Verify = %v, %v; want %v", ok, err, c.want)
			}
		})
	}
}

func TestEmptyAndLongPasswords(t *testing.T) {
	t.Parallel()
	h, err := HashArgon2id(strings.Repeat("z", MaxPasswordLength), TestArgon2Params)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := Verify(h, strings.Repeat("z", MaxPasswordLength)); !ok || err != nil {
		t.Errorf("max-length password: %v, %v", ok, err)
	}
	if ok, err := Verify(h, strings.Repeat("z", MaxPasswordLength+1)); ok || !errors.Is(err, ErrPasswordTooLong) {
		t.Errorf("over-long password: %v, %v; want ErrPasswordTooLong", ok, err)
	}
	for _, vec := range extraVectors {
		if ok, err := Verify(vec.hash, ""); ok || err != nil {
			t.Errorf("%s: empty password gave %v, %v; want false, nil", vec.alg, ok, err)
		}
	}
	// A bad hash is reported even with an empty password.
	if _, err := Verify("5f4dcc3b5aa765d61d8327deb882cf99", ""); !errors.Is(err, ErrUnsupportedHash) {
		t.Errorf("got %v, want ErrUnsupportedHash", err)
	}
}

// A valid TYPO3 argon2id vector ("password"), taken apart for edits.
const (
	a2Salt = "YXRaSzZPbFRTQWtjQlpiWg"
	a2Key  = "qlLWEzKh4FgQDpv/QgXKWwq2q27D5+oTT4oPakz/++4"
)

func TestRejectedHashes(t *testing.T) {
	t.Parallel()
	bfBody := "abcdefghijklmnopqrstuughE8Ev8uGFaUgY2cNEySvxngrb/Jzdm"
	pbSalt, pbKey := "MDEyMzQ1Njc4OWFiY2RlZg", "hRRjgXWkW8ResfIvBP99J/T4vkgEmMRV/0tJTOjR59I"
	cases := []struct {
		hash string
		kind error
		alg  string // Algorithm() result; "" when no scheme claims it
		in   string // expected in the message
	}{
		// Not hashes TYPO3 accepts.
		{"", ErrUnsupportedHash, "", "no password hash"},
		{"5F4DCC3B5AA765D61D8327DEB882CF99", ErrUnsupportedHash, "", "unsalted md5"},
		{"M$P$CG/sl9.wN3WNgnFaYrsmNbM0/h29Ia1", ErrUnsupportedHash, "", "saltedpasswords"},
		{"$5$rounds=5000$saltsalt$Bz6C5qvNPjDf5ASUEAk0ni3EgwD0o8oOtrnm8EXdQF7", ErrUnsupportedHash, "", "does not support"},
		{"$6$saltsalt$qFmFH.bQmmtXzyBY0s9v7Oicd2z4XSIecDzlB5KiA2/jctKu9YterLp8wwnSq.qc.eoxqOmSuNp2xS0ktL3nh/", ErrUnsupportedHash, "", "does not support"},
		{"$argon2d$v=19$m=65536,t=16,p=1$" + a2Salt + "$" + a2Key, ErrUnsupportedHash, "", "does not support"},
		{"$2b$12$N8cuINvz1eyrME1Q3ZqCc.V1Oj2kDWOgkSt9G2oeJCOTBi81vvnqe", ErrUnsupportedHash, "", "bcrypt variant"},
		{"$2x$12$N8cuINvz1eyrME1Q3ZqCc.V1Oj2kDWOgkSt9G2oeJCOTBi81vvnqe", ErrUnsupportedHash, "", "bcrypt variant"},
		{" $argon2id$v=19$m=65536,t=16,p=1$" + a2Salt + "$" + a2Key, ErrUnsupportedHash, "", "plaintext"},

		// argon2: claimed on prefix alone, as PHP's password_get_info does.
		{"$argon2id$", ErrMalformedHash, Argon2id, "damaged"},
		{"$argon2i$v=19$m=65536,t=16,p=1$" + a2Salt, ErrMalformedHash, Argon2i, "damaged"},
		{"$argon2id$v=19$m=65536,t=16,p=1$" + a2Salt + "$" + a2Key + "$", ErrMalformedHash, Argon2id, "damaged"},
		{"$argon2id$v=16$m=65536,t=16,p=1$" + a2Salt + "$" + a2Key, ErrUnsupportedHash, Argon2id, "version 16"},
		{"$argon2id$m=65536,t=16,p=1$" + a2Salt + "$" + a2Key, ErrUnsupportedHash, Argon2id, "no version"},
		{"$argon2id$v=019$m=65536,t=16,p=1$" + a2Salt + "$" + a2Key, ErrMalformedHash, Argon2id, "version"},
		{"$argon2id$v=19$t=16,m=65536,p=1$" + a2Salt + "$" + a2Key, ErrMalformedHash, Argon2id, "m=…"},
		{"$argon2id$v=19$m=65536,t=16,p=1,keyid=x$" + a2Salt + "$" + a2Key, ErrMalformedHash, Argon2id, "m=…"},
		{"$argon2id$v=19$m=+65536,t=16,p=1$" + a2Salt + "$" + a2Key, ErrMalformedHash, Argon2id, "m=…"},
		{"$argon2id$v=19$m=99999999999,t=16,p=1$" + a2Salt + "$" + a2Key, ErrMalformedHash, Argon2id, "m=…"},
		{"$argon2id$v=19$m=65536,t=0,p=1$" + a2Salt + "$" + a2Key, ErrMalformedHash, Argon2id, "impossible"},
		{"$argon2id$v=19$m=65536,t=16,p=0$" + a2Salt + "$" + a2Key, ErrMalformedHash, Argon2id, "impossible"},
		{"$argon2id$v=19$m=15,t=1,p=2$" + a2Salt + "$" + a2Key, ErrMalformedHash, Argon2id, "impossible"},
		{"$argon2id$v=19$m=65536,t=16,p=256$" + a2Salt + "$" + a2Key, ErrUnsupportedHash, Argon2id, "256 lanes"},
		{"$argon2id$v=19$m=2097152,t=1,p=1$" + a2Salt + "$" + a2Key, ErrCostTooHigh, Argon2id, "2097152 KiB"},
		{"$argon2id$v=19$m=1048576,t=17,p=1$" + a2Salt + "$" + a2Key, ErrCostTooHigh, Argon2id, "17 passes"},
		{"$argon2id$v=19$m=8,t=4294967295,p=1$" + a2Salt + "$" + a2Key, ErrCostTooHigh, Argon2id, "passes"},
		{"$argon2id$v=19$m=65536,t=16,p=1$YXRaSzZP!FRTQWtjQlpiWg$" + a2Key, ErrMalformedHash, Argon2id, "salt"},
		{"$argon2id$v=19$m=65536,t=16,p=1$YXRaSzZP$" + a2Key, ErrMalformedHash, Argon2id, "salt"}, // 6 bytes
		{"$argon2id$v=19$m=65536,t=16,p=1$YXRaSzZPbFRTQWtj\nQlpiWg$" + a2Key, ErrMalformedHash, Argon2id, "salt"},
		{"$argon2id$v=19$m=65536,t=16,p=1$" + a2Salt + "$" + a2Key + "=", ErrMalformedHash, Argon2id, "hash value"},
		{"$argon2id$v=19$m=65536,t=16,p=1$" + a2Salt + "$" + a2Key[:42] + "5", ErrMalformedHash, Argon2id, "hash value"}, // stray low bits
		{"$argon2id$v=19$m=65536,t=16,p=1$" + a2Salt + "$qlLW", ErrMalformedHash, Argon2id, "hash value"},                // 3 bytes
		{"$argon2id$v=19$m=65536,t=16,p=1$" + a2Salt + "$-_-_-_", ErrMalformedHash, Argon2id, "hash value"},

		// TYPO3 bcrypt ($2y$): claimed only at length 60 and cost 10–31.
		{"$2y$12$N8cuINvz1eyrME1Q3ZqCc.V1Oj2kDWOgkSt9G2oeJCOTBi81vvnq", ErrMalformedHash, "", "wrong length"},
		{"$2y$05$N8cuINvz1eyrME1Q3ZqCc.V1Oj2kDWOgkSt9G2oeJCOTBi81vvnqe", ErrUnsupportedHash, "", "cost below 10"},
		{"$2y$1a$N8cuINvz1eyrME1Q3ZqCc.V1Oj2kDWOgkSt9G2oeJCOTBi81vvnqe", ErrMalformedHash, "", "cost field"},
		{"$2y$12xN8cuINvz1eyrME1Q3ZqCc.V1Oj2kDWOgkSt9G2oeJCOTBi81vvnqe", ErrMalformedHash, Bcrypt, "cost field"},
		{"$2y$17$N8cuINvz1eyrME1Q3ZqCc.V1Oj2kDWOgkSt9G2oeJCOTBi81vvnqe", ErrCostTooHigh, Bcrypt, "cost 17"},
		{"$2y$31$N8cuINvz1eyrME1Q3ZqCc.V1Oj2kDWOgkSt9G2oeJCOTBi81vvnqe", ErrCostTooHigh, Bcrypt, "cost 31"},
		{"$2y$32$N8cuINvz1eyrME1Q3ZqCc.V1Oj2kDWOgkSt9G2oeJCOTBi81vvnqe", ErrMalformedHash, "", "cost"},
		{"$2y$12$N8cuINvz1eyrME1Q3ZqCc.V1Oj2kDWOgkSt9G2oeJCOTBi81vvn!e", ErrMalformedHash, Bcrypt, "bad character"},
		{"$2y$12$N8cuINvz1eyrME1Q3ZqCc/V1Oj2kDWOgkSt9G2oeJCOTBi81vvnqe", ErrMalformedHash, Bcrypt, "non-canonical"},
		{"$2y$12$N8cuINvz1eyrME1Q3ZqCc.V1Oj2kDWOgkSt9G2oeJCOTBi81vvnqf", ErrMalformedHash, Bcrypt, "non-canonical"},

		// Blowfish ($2a$): claimed from 22 characters on.
		{"$2a$07$", ErrMalformedHash, "", "too short"},
		{"$2a$04$" + bfBody[:20], ErrMalformedHash, Blowfish, "wrong length"},
		{"$2a$03$" + bfBody, ErrMalformedHash, Blowfish, "cost field"},
		{"$2a$17$" + bfBody, ErrCostTooHigh, Blowfish, "cost 17"},

		// pbkdf2-sha256
		{"$pbkdf2-sha256$", ErrMalformedHash, "", "too short"},
		{"$pbkdf2-sha256$1000$" + pbSalt, ErrMalformedHash, PBKDF2SHA256, "rounds$salt$hash"},
		{"$pbkdf2-sha256$0$" + pbSalt + "$" + pbKey, ErrMalformedHash, PBKDF2SHA256, "rounds"},
		{"$pbkdf2-sha256$01000$" + pbSalt + "$" + pbKey, ErrMalformedHash, PBKDF2SHA256, "rounds"},
		{"$pbkdf2-sha256$+1000$" + pbSalt + "$" + pbKey, ErrMalformedHash, PBKDF2SHA256, "rounds"},
		{"$pbkdf2-sha256$5$" + pbSalt + "$" + pbKey, ErrMalformedHash, PBKDF2SHA256, "rounds"}, // %02u writes 05
		{"$pbkdf2-sha256$99999999999999999999$" + pbSalt + "$" + pbKey, ErrMalformedHash, PBKDF2SHA256, "rounds"},
		{"$pbkdf2-sha256$10000001$" + pbSalt + "$" + pbKey, ErrCostTooHigh, PBKDF2SHA256, "10000001 rounds"},
		{"$pbkdf2-sha256$1000$MDEyMzQ1Njc4OWFiY2R+Zg$" + pbKey, ErrMalformedHash, PBKDF2SHA256, "salt"}, // '+' is '.' here
		{"$pbkdf2-sha256$1000$MDEyMzQ1Njc4OWFiY2Rl$" + pbKey, ErrMalformedHash, PBKDF2SHA256, "salt"},   // 15 bytes
		{"$pbkdf2-sha256$1000$" + pbSalt + "$" + pbKey[:40], ErrMalformedHash, PBKDF2SHA256, "hash value"},

		// phpass
		{"$P$C", ErrMalformedHash, "", "too short"},
		{"$P$CG/sl9.wN3WNgnFaYrsmNbM0/h29Ia", ErrMalformedHash, Phpass, "wrong length"},
		{"$P$CG/sl9.wN3WNgnFaYrsmNbM0/h29Ia11", ErrMalformedHash, Phpass, "wrong length"},
		{"$P$4G/sl9.wN3WNgnFaYrsmNbM0/h29Ia1", ErrMalformedHash, Phpass, "cost"}, // 2^6
		{"$P$NG/sl9.wN3WNgnFaYrsmNbM0/h29Ia1", ErrMalformedHash, Phpass, "cost"}, // 2^25
		{"$P$JG/sl9.wN3WNgnFaYrsmNbM0/h29Ia1", ErrCostTooHigh, Phpass, "2^21"},
		{"$P$CG/sl9.wN3WNgnFaYrsmNbM0/h29Ia$", ErrMalformedHash, Phpass, "encoding"},
		{"$P$CG/sl9.wN3WNgnFaYrsmNbM0/h29Ia4", ErrMalformedHash, Phpass, "encoding"}, // stray high bits

		// md5-crypt
		{"$1$ab", ErrMalformedHash, "", "too short"},
		{"$1$ThbqYJ9Hx$BpSuTeaCH32xZyvWX911q1", ErrMalformedHash, MD5Crypt, "salt"},
		{"$1$ThbqYJ9HBpSuTeaCH32xZyvWX911q1", ErrMalformedHash, MD5Crypt, "salt"},
		{"$1$ThbqYJ9H$BpSuTeaCH32xZyvWX911q", ErrMalformedHash, MD5Crypt, "encoding"},
		{"$1$ThbqYJ9H$BpSuTeaCH32xZyvWX911q1$", ErrMalformedHash, MD5Crypt, "encoding"},
		{"$1$ThbqYJ9H$BpSuTeaCH32xZyvWX911q5", ErrMalformedHash, MD5Crypt, "encoding"},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.hash, "/", "_"), func(t *testing.T) {
			t.Parallel()
			ok, err := Verify(c.hash, "password")
			if ok {
				t.Fatal("Verify accepted a bad hash")
			}
			var he *HashError
			if !errors.As(err, &he) || !errors.Is(err, c.kind) {
				t.Fatalf("err = %v; want *HashError of kind %v", err, c.kind)
			}
			if !strings.Contains(err.Error(), c.in) {
				t.Errorf("message %q lacks %q", err, c.in)
			}
			if len(c.hash) > 6 && strings.Contains(err.Error(), c.hash) {
				t.Errorf("message discloses the hash: %q", err)
			}
			alg, aerr := Algorithm(c.hash)
			if alg != c.alg || (aerr == nil) != (c.alg != "") {
				t.Errorf("Algorithm = %q, %v; want %q", alg, aerr, c.alg)
			}
			if c.alg != "" && he.Algorithm != c.alg {
				t.Errorf("HashError.Algorithm = %q, want %q", he.Algorithm, c.alg)
			}
		})
	}
}

// TestDamagedHashesNeverMatch truncates every vector at every length and
// flips every character of the cheap ones: the result must be an error or
// false for the right password, and must not panic.
func TestDamagedHashesNeverMatch(t *testing.T) {
	t.Parallel()
	v := loadTYPO3Vectors(t)
	all := append([]vector(nil), extraVectors...)
	for _, vec := range v.Vectors {
		all = append(all, vector{"", vec.Password, vec.Hash})
	}
	for _, pw := range []string{"password", "pässwörd-ünïcødé"} {
		h, err := HashArgon2id(pw, TestArgon2Params)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, vector{Argon2id, pw, h})
	}
	check := func(t *testing.T, hash, pw string) {
		t.Helper()
		p, err := parse(hash)
		if err != nil {
			var he *HashError
			if !errors.As(err, &he) {
				t.Errorf("%q: error %v is not a *HashError", hash, err)
			}
			return
		}
		if !cheap(p) {
			return
		}
		if ok, err := p.verify(pw); ok || err != nil {
			t.Errorf("damaged hash %q: verify = %v, %v", hash, ok, err)
		}
	}
	for _, vec := range all {
		t.Run(vec.hash, func(t *testing.T) {
			t.Parallel()
			for i := range len(vec.hash) {
				check(t, vec.hash[:i], vec.password)
			}
			p, err := parse(vec.hash)
			if err != nil {
				t.Fatal(err)
			}
			if !cheap(p) {
				return
			}
			b := []byte(vec.hash)
			for i := range b {
				b[i] ^= 1
				check(t, string(b), vec.password)
				b[i] ^= 1
			}
		})
	}
}

func TestAlgorithmFollowsFactoryNotValidity(t *testing.T) {
	t.Parallel()
	// TYPO3 picks the class on prefix (and length) alone; Verify then finds
	// the damage. Algorithm must agree with TYPO3, not with Verify.
	cases := map[string]string{
		"$argon2i$":                         Argon2i,
		"$argon2id$garbage":                 Argon2id,
		"$pbkdf2-sha256$1234567":            PBKDF2SHA256,
		"$P$xxxxx":                          Phpass,
		"$2a$xxxxxxxxxxxxxxxxxxx":           Blowfish,
		"$1$$$$$$":                          MD5Crypt,
		"$2y$10$" + strings.Repeat("x", 53): Bcrypt,
	}
	for hash, want := range cases {
		if got, err := Algorithm(hash); got != want || err != nil {
			t.Errorf("Algorithm(%q) = %q, %v; want %q", hash, got, err, want)
		}
		if _, err := Verify(hash, "password"); !errors.Is(err, ErrMalformedHash) {
			t.Errorf("Verify(%q): %v, want ErrMalformedHash", hash, err)
		}
	}
}

var argon2idFormat = regexp.MustCompile(`^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$`)

func TestHashArgon2id(t *testing.T) {
	t.Parallel()
	big := Argon2Params{Memory: 2048, Time: 1, Threads: 4, SaltLength: 32, KeyLength: 64}
	cases := []struct {
		name     string
		password string
		p        Argon2Params
		want     string // m,t,p as written
	}{
		{"test params", "password", TestArgon2Params, "1024,2,1"},
		{"unicode", "pässwörd-ünïcødé", TestArgon2Params, "1024,2,1"},
		{"NUL and 0xFF bytes", "a\x00b\xffc", TestArgon2Params, "1024,2,1"},
		{"lanes, long salt and key", "with space and $pecial '\"\\ chars", big, "2048,1,4"},
		{"TYPO3 defaults", "Tr0ub4dor&3", DefaultArgon2Params, "65536,16,1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h, err := HashArgon2id(c.password, c.p)
			if err != nil {
				t.Fatal(err)
			}
			m := argon2idFormat.FindStringSubmatch(h)
			if m == nil || strings.Join(m[1:4], ",") != c.want {
				t.Fatalf("hash %q does not look like PHP's with %s", h, c.want)
			}
			if got := (len(m[4]) * 6) / 8; got != int(c.p.SaltLength) {
				t.Errorf("salt is %d bytes, want %d", got, c.p.SaltLength)
			}
			if got := (len(m[5]) * 6) / 8; got != int(c.p.KeyLength) {
				t.Errorf("key is %d bytes, want %d", got, c.p.KeyLength)
			}
			if ok, err := Verify(h, c.password); !ok || err != nil {
				t.Errorf("own hash does not verify: %v, %v", ok, err)
			}
			if ok, err := Verify(h, c.password+"x"); ok || err != nil {
				t.Errorf("wrong password: %v, %v", ok, err)
			}
			if c.p == DefaultArgon2Params {
				return
			}
			h2, err := HashArgon2id(c.password, c.p)
			if err != nil || h2 == h {
				t.Errorf("second hash %q, %v: want a fresh salt", h2, err)
			}
		})
	}
}

func TestHashArgon2idRefuses(t *testing.T) {
	t.Parallel()
	ok := TestArgon2Params
	with := func(f func(*Argon2Params)) Argon2Params { p := ok; f(&p); return p }
	cases := []struct {
		name     string
		password string
		p        Argon2Params
		want     error // nil: any error
	}{
		{"empty password", "", ok, ErrEmptyPassword},
		{"long password", strings.Repeat("x", MaxPasswordLength+1), ok, ErrPasswordTooLong},
		{"zero time", "pw", with(func(p *Argon2Params) { p.Time = 0 }), nil},
		{"zero threads", "pw", with(func(p *Argon2Params) { p.Threads = 0 }), nil},
		{"memory below 8 KiB per lane", "pw", with(func(p *Argon2Params) { p.Memory = 31; p.Threads = 4 }), nil},
		{"memory above limit", "pw", with(func(p *Argon2Params) { p.Memory = MaxArgon2Memory + 1 }), nil},
		{"work above limit", "pw", with(func(p *Argon2Params) { p.Memory = MaxArgon2Memory; p.Time = 17 }), nil},
		{"short salt", "pw", with(func(p *Argon2Params) { p.SaltLength = 7 }), nil},
		{"short key", "pw", with(func(p *Argon2Params) { p.KeyLength = 3 }), nil},
		{"zero params", "pw", Argon2Params{}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h, err := HashArgon2id(c.password, c.p)
			if err == nil || h != "" || (c.want != nil && !errors.Is(err, c.want)) {
				t.Errorf("got %q, %v; want an error (%v)", h, err, c.want)
			}
		})
	}
}

func TestMD5CryptIndependentOfSaltAlphabet(t *testing.T) {
	t.Parallel()
	// crypt() takes any salt bytes but '$'; the result must still verify
	// and an empty salt is legal.
	for _, salt := range []string{"", "a", "ab:cd", "12345678", "äö"} {
		h := string(md5crypt([]byte("secret"), []byte(salt)))
		if ok, err := Verify(h, "secret"); !ok || err != nil {
			t.Errorf("salt %q: %q gives %v, %v", salt, h, ok, err)
		}
		if ok, _ := Verify(h, "Secret"); ok {
			t.Errorf("salt %q: wrong password accepted", salt)
		}
	}
}

func TestDecimal(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		max  uint64
		want uint64
		ok   bool
	}{
		{"0", 10, 0, true},
		{"19", 100, 19, true},
		{"4294967295", 1<<32 - 1, 1<<32 - 1, true},
		{"4294967296", 1<<32 - 1, 0, false},
		{"18446744073709551616", 1<<64 - 1, 0, false},
		{"", 10, 0, false},
		{"01", 10, 0, false},
		{"-1", 10, 0, false},
		{"1 ", 10, 0, false},
	}
	for _, c := range cases {
		if got, ok := decimal(c.in, c.max); got != c.want || ok != c.ok {
			t.Errorf("decimal(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
