package ledger

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFilesDurable(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "blocker")
	if err := os.WriteFile(blocker, []byte("a file, not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		files   []File
		wantErr string
		want    []string // files whole afterwards
	}{
		{name: "two folders, one created", files: []File{
			{filepath.Join(dir, "a", "1.json"), []byte("one")},
			{filepath.Join(dir, "b", "new", "2.json"), []byte("two")},
			{filepath.Join(dir, "a", "3.json"), []byte("three")},
		}, want: []string{"a/1.json", "b/new/2.json", "a/3.json"}},
		{name: "replaces a file whole", files: []File{{filepath.Join(dir, "a", "1.json"), []byte("one again")}}, want: []string{"a/1.json"}},
		{name: "a folder that cannot be made stops the batch", files: []File{
			{filepath.Join(dir, "c", "4.json"), []byte("four")},
			{filepath.Join(blocker, "5.json"), []byte("five")},
		}, wantErr: "not a directory", want: []string{"c/4.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := WriteFilesDurable(tc.files)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			for _, rel := range tc.want {
				var data []byte
				for _, f := range tc.files {
					if f.Path == filepath.Join(dir, rel) {
						data = f.Data
					}
				}
				got, err := os.ReadFile(filepath.Join(dir, rel))
				if err != nil || string(got) != string(data) {
					t.Errorf("%s = %q, %v; want %q", rel, got, err, data)
				}
			}
			// no temporary file is left behind
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && strings.Contains(d.Name(), ".tmp-") {
					t.Errorf("left %s", p)
				}
				return nil
			})
		})
	}
}
