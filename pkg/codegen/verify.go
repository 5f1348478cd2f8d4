package codegen

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/readlimit"
)

// Verification is the result of re-hashing one client folder against its
// manifest.
type Verification struct {
	Dir                string   `json:"dir"`
	ClientArtifactHash string   `json:"client_artifact_hash,omitempty"`
	Files              int      `json:"files"`
	Problems           []string `json:"problems"`
	Untracked          []string `json:"untracked,omitempty"` // files no manifest lists
}

// OK reports whether the folder matches its manifest.
func (v *Verification) OK() bool { return len(v.Problems) == 0 }

// VerifyDir finds every manifest.json at or below dir and re-hashes the
// outputs it lists: a missing file, a different size or sha256, or a
// client_artifact_hash that does not match the outputs list is a problem.
// A dir with no manifest at all is an input error.
func VerifyDir(dir string) ([]*Verification, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, &errkind.InputError{Source: dir, Problem: err.Error(), Hint: "give a directory that dome gen wrote"}
	}
	if !fi.IsDir() {
		return nil, &errkind.InputError{Source: dir, Problem: "not a directory", Hint: "give the --out directory of dome gen or one client folder"}
	}
	var manifests []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() != "." && len(d.Name()) > 1 && d.Name()[0] == '.' && p != dir {
			return filepath.SkipDir // staging folders, .git
		}
		if !d.IsDir() && d.Name() == ManifestFile {
			manifests = append(manifests, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(manifests) == 0 {
		return nil, &errkind.InputError{Source: dir, Problem: "no manifest.json at or below this directory", Hint: "run dome gen --out " + dir + " first"}
	}
	sort.Strings(manifests)
	var out []*Verification
	for _, mp := range manifests {
		out = append(out, verifyOne(dir, mp))
	}
	return out, nil
}

func verifyOne(root, manifestPath string) *Verification {
	cdir := filepath.Dir(manifestPath)
	rel, _ := filepath.Rel(root, cdir)
	v := &Verification{Dir: filepath.ToSlash(rel), Problems: []string{}}
	add := func(f string, a ...any) { v.Problems = append(v.Problems, fmt.Sprintf(f, a...)) }
	data, err := readlimit.ReadRegularFile(manifestPath, readlimit.Document)
	if err != nil {
		add("%v", err)
		return v
	}
	m, err := ParseManifest(manifestPath, data)
	if err != nil {
		add("%v", err)
		return v
	}
	v.ClientArtifactHash = m.ClientArtifactHash
	v.Files = len(m.Outputs)
	if h, err := ArtifactHash(m.Outputs); err != nil || h != m.ClientArtifactHash {
		add("client_artifact_hash is %s but the outputs list hashes to %s", m.ClientArtifactHash, h)
	}
	listed := map[string]bool{ManifestFile: true}
	for _, o := range m.Outputs {
		listed[o.Path] = true
		b, err := readlimit.ReadRegularFile(filepath.Join(cdir, filepath.FromSlash(o.Path)), readlimit.Document)
		if errors.Is(err, fs.ErrNotExist) {
			add("%s: missing", o.Path)
			continue
		}
		if err != nil {
			add("%s: %v", o.Path, err)
			continue
		}
		if int64(len(b)) != o.Size {
			add("%s: size %d, the manifest says %d", o.Path, len(b), o.Size)
		}
		if d := FileDigest(b); d != o.SHA256 {
			add("%s: sha256 %s, the manifest says %s", o.Path, d, o.SHA256)
		}
	}
	files, _ := listFiles(cdir)
	for _, f := range files {
		if !listed[f] {
			v.Untracked = append(v.Untracked, f)
		}
	}
	return v
}
