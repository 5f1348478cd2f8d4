package patch

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

var fuzzSeeds = []string{
	twoFiles,
	"diff --git a/x b/x\nnew file mode 100644\nindex 0000000..e69de29\n",
	"diff --git \"a/q\\303\\251\" \"b/q\\303\\251\"\nsimilarity index 90%\nrename from \"q\\303\\251\"\nrename to b\n",
	"diff --git a/b.bin b/b.bin\nindex 0000000..1111111\nGIT binary patch\nliteral 5\nMcmZ?wbaT?=00A8Vg#Z8m\n\nliteral 0\nHcmV?d00001\n\n",
	"--- a/t.txt\t2024-01-02 03:04:05.000000000 +0100\n+++ b/t.txt\t1970-01-01 00:00:00.000000000 +0000\n@@ -1 +0,0 @@\n-a\n",
	"--- /dev/null\n+++ \"b/n\\303\\251\"\n@@ -0,0 +1 @@\n+x\n--- x.orig  Mon Jan  2 15:04:05 2006\n+++ x\n@@ -1 +1 @@\n-a\n+b\n",
	"From 0123456789012345678901234567890123456789 Mon Sep 17 00:00:00 2001\nFrom: A <a@b>\nSubject: [PATCH] s\n\nbody\n---\ndiff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n-- \n2.39.2\n",
}

// FuzzParse: the parser never panics, and what it accepts has only safe paths
// and hunks whose bodies agree with their headers.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ps, err := Parse(data, ParseOptions{Strip: 1, GuessStrip: len(data)%2 == 0})
		if err != nil {
			return
		}
		for _, p := range ps {
			for _, fd := range p.Files {
				if fd.OldPath != "" && CheckPath(fd.OldPath, fd.OldMode) != nil || fd.NewPath != "" && CheckPath(fd.NewPath, fd.NewMode) != nil {
					t.Fatalf("unsafe path accepted: %q %q", fd.OldPath, fd.NewPath)
				}
				for _, h := range fd.Hunks {
					o, n := 0, 0
					for _, l := range h.Lines {
						if l.Op != '+' {
							o++
						}
						if l.Op != '-' {
							n++
						}
					}
					if o != h.OldLines || n != h.NewLines {
						t.Fatalf("hunk %+v: body %d/%d lines", h, o, n)
					}
				}
			}
		}
		PatchIDs(data)
	})
}

// FuzzApply: applying any parsed patch to a small tree never panics.
func FuzzApply(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ps, err := Parse(data, ParseOptions{Strip: 1, GuessStrip: len(data)%2 == 0})
		if err != nil {
			return
		}
		st := NewMemStore(nil)
		root := build(t, st, map[string]tf{"a.txt": {data: "one\ntwo\nthree\n"}, "f": {data: "a\nb\n"}, "d/x": {data: "x"}})
		for _, p := range ps {
			Apply(st, root, p, Options{ThreeWay: true, Fuzz: 1})
		}
	})
}

// A GIT binary patch literal inflates to exactly the size its header gives:
// a header that lies either way, a stream whose checksum is wrong, and a
// header far bigger than its data can hold (read without a buffer of the
// header's size) are each refused by line, and the truth reads back.
func TestBinaryLiteralSize(t *testing.T) {
	data := bytes.Repeat([]byte("\x00\x01binary\xff"), 300)
	block := func(size int, z []byte) string {
		var b bytes.Buffer
		writeBase85(&b, z)
		return fmt.Sprintf("diff --git a/f.bin b/f.bin\nindex 0000000..1111111\nGIT binary patch\nliteral %d\n%s\nliteral 0\nHcmV?d00001\n\n", size, b.String())
	}
	z := storedZlib(data)
	bad := bytes.Clone(z)
	bad[len(bad)-1] ^= 1 // the Adler-32 checksum
	for _, tc := range []struct {
		name, patch, want string
	}{
		{"exact", block(len(data), z), ""},
		{"header too small", block(len(data)-1, z), fmt.Sprintf("inflated %d bytes, the header says %d", len(data), len(data)-1)},
		{"header too big", block(len(data)+1, z), fmt.Sprintf("inflated %d bytes, the header says %d", len(data), len(data)+1)},
		{"header far too big", block(1<<29, z), fmt.Sprintf("inflated %d bytes, the header says %d", len(data), 1<<29)},
		{"bad checksum", block(len(data), bad), "inflate: zlib: invalid checksum"},
	} {
		ps, err := Parse([]byte(tc.patch), ParseOptions{Source: "t.patch", Strip: DefaultStrip})
		if tc.want == "" {
			if err != nil || !bytes.Equal(ps[0].Files[0].Binary.Data, data) {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestBase85Table(t *testing.T) {
	for c := 0; c < 256; c++ {
		if got, want := b85value(byte(c)), strings.IndexByte(b85chars, byte(c)); got != want {
			t.Errorf("b85value(%#x) = %d, want %d", c, got, want)
		}
	}
}
