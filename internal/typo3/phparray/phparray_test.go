package phparray_test

import (
	"testing"

	"github.com/t3agent/t3agent/internal/typo3/phparray"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

func TestParse(t *testing.T) {
	t.Parallel()
	src := "<?php\n// comment [\ndeclare(strict_types=1);\n/* block ] */\nreturn [\n  'a' => ['x', 'y', 'k' => 'v', 'z'],\n  'b' => array (0 => 1, 1 => 'it\\'s'),\n  # note\n  'c' => '[not] an (array)',\n];\n"
	v, err := phparray.Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	arr := v.(*tca.Array)
	a := arr.Array("a")
	if a.Len() != 4 || a.Keys[0] != tca.IntKey(0) || a.Keys[1] != tca.IntKey(1) || a.Keys[2] != tca.StrKey("k") || a.Keys[3] != tca.IntKey(2) || a.Values[3] != "z" {
		t.Errorf("a = %+v", a)
	}
	if c, _ := arr.Get("c"); c != "[not] an (array)" {
		t.Errorf("c = %v", c)
	}
	if b, _ := arr.Array("b").Get("1"); b != "it's" {
		t.Errorf("b = %v", b)
	}
	for _, bad := range []string{"return [];", "<?php\nreturn [", "<?php\nreturn foo();", "<?php\n$x = 1;", "<?php\nreturn ['a' => 'b]", "<?php\nreturn ]];"} {
		if _, err := phparray.Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("<?php\nreturn ['a' => [1, 2], 'b' => array ('x' => true)];"))
	f.Add([]byte("<?php\n# x\nreturn array (\n  0 => 'a',\n);\n#"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = phparray.Parse(b)
	})
}
