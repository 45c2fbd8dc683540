package password

import "testing"

// BenchmarkVerify measures one successful check per algorithm at the cost
// TYPO3 writes by default (the reference vectors), plus md5-crypt, which has
// no cost setting.
func BenchmarkVerify(b *testing.B) {
	v := loadTYPO3Vectors(b)
	seen := map[string]bool{}
	for _, vec := range v.Vectors {
		if seen[vec.Class] {
			continue
		}
		seen[vec.Class] = true
		alg, err := Algorithm(vec.Hash)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(alg, func(b *testing.B) {
			for b.Loop() {
				if ok, err := Verify(vec.Hash, vec.Password); !ok || err != nil {
					b.Fatalf("Verify = %v, %v", ok, err)
				}
			}
		})
	}
	b.Run("argon2id-test-params", func(b *testing.B) {
		h, err := HashArgon2id("password", TestArgon2Params)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if ok, err := Verify(h, "password"); !ok || err != nil {
				b.Fatalf("Verify = %v, %v", ok, err)
			}
		}
	})
}

func BenchmarkHashArgon2id(b *testing.B) {
	for _, c := range []struct {
		name string
		p    Argon2Params
	}{{"default", DefaultArgon2Params}, {"test", TestArgon2Params}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := HashArgon2id("password", c.p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
