package registry

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/gitstore"
)

// Agent folders of the registry (beside tools/): agents/<id>.agent.json
// (or .agent.yaml, .agent.yml), agents/runtimes/<id>.runtime.json and
// abilities/<id>.md.
const (
	AgentsDir    = "agents"
	RuntimesDir  = "agents/runtimes"
	AbilitiesDir = "abilities"
)

// Bounds on what the agent folders may hold.
const (
	MaxAgentFiles     = 100000
	MaxAgentFileBytes = 1 << 20
)

// RawFile is one file read from the registry at a commit.
type RawFile struct {
	Path string        // relative to the repository root
	Blob gitstore.Hash // its blob id
	Data []byte
}

// AgentFiles are the raw files of the agent part of a registry.
type AgentFiles struct {
	Root      string // "registry" or "" (the repository root)
	Agents    []RawFile
	Runtimes  []RawFile
	Abilities []RawFile
}

// ReadAgentFiles returns the agent profiles, model runtimes and abilities
// at a pinned commit, sorted by path, read from git objects. The folders sit
// beside tools/ (in registry/ or at the root); a registry without tools/
// is looked up in registry/ first. Anything in agents/ other than profiles,
// runtimes/ and a README.md is refused, as are symlinks, submodules and
// files over MaxAgentFileBytes. A registry without an agents/ folder has
// no agents (the caller decides whether that is an error).
func (r *Registry) ReadAgentFiles(p Pin) (*AgentFiles, error) {
	root, err := r.agentRoot(p)
	if err != nil {
		return nil, err
	}
	out := &AgentFiles{Root: root}
	at := p.Commit.Short()
	count := 0
	read := func(dir string, ok func(name string) bool, skip func(e gitstore.TreeEntry) bool) ([]RawFile, error) {
		full := path.Join(root, dir)
		e, err := r.repo.EntryAt(p.Tree, full)
		if errors.Is(err, gitstore.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if !e.Mode.IsDir() {
			return nil, &errkind.InputError{Source: full + "@" + at, Problem: "is not a folder"}
		}
		es, err := r.repo.ReadTree(e.Hash)
		if err != nil {
			return nil, err
		}
		var files []RawFile
		for _, fe := range es {
			fp := path.Join(full, fe.Name)
			if skip != nil && skip(fe) {
				continue
			}
			if !ok(fe.Name) {
				return nil, &errkind.InputError{Source: fp + "@" + at, Problem: "unexpected entry in " + full + "/",
					Hint: "agent profiles are agents/<id>.agent.json (or .agent.yaml), runtimes agents/runtimes/<id>.runtime.json, abilities abilities/<id>.md"}
			}
			if count++; count > MaxAgentFiles {
				return nil, &errkind.InputError{Source: full + "@" + at, Problem: fmt.Sprintf("more than %d agent files", MaxAgentFiles)}
			}
			if fe.Mode.IsRegular() {
				size, err := r.repo.BlobSize(fe.Hash)
				if err != nil {
					return nil, err
				}
				if size > MaxAgentFileBytes {
					return nil, &errkind.InputError{Source: fp + "@" + at, Problem: fmt.Sprintf("%d bytes, over the limit of %d", size, MaxAgentFileBytes)}
				}
			}
			data, err := r.readRegular(fe, fp+"@"+at)
			if err != nil {
				return nil, err
			}
			files = append(files, RawFile{Path: fp, Blob: fe.Hash, Data: data})
		}
		sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
		return files, nil
	}
	isProfile := func(n string) bool {
		for _, ext := range []string{".agent.json", ".agent.yaml", ".agent.yml"} {
			if strings.HasSuffix(n, ext) && len(n) > len(ext) {
				return true
			}
		}
		return false
	}
	agentsSkip := func(e gitstore.TreeEntry) bool {
		return (e.Name == "runtimes" && e.Mode.IsDir()) || (e.Name == "README.md" && e.Mode.IsRegular())
	}
	if out.Agents, err = read(AgentsDir, isProfile, agentsSkip); err != nil {
		return nil, err
	}
	if out.Runtimes, err = read(RuntimesDir, func(n string) bool { return strings.HasSuffix(n, ".runtime.json") && n != ".runtime.json" }, nil); err != nil {
		return nil, err
	}
	readmeSkip := func(e gitstore.TreeEntry) bool { return e.Name == "README.md" && e.Mode.IsRegular() }
	if out.Abilities, err = read(AbilitiesDir, func(n string) bool { return strings.HasSuffix(n, ".md") && n != ".md" }, readmeSkip); err != nil {
		return nil, err
	}
	return out, nil
}

// agentRoot is where the agent folders sit at a commit: beside tools/ when
// the registry has tools, else registry/ when it has an agents/ folder,
// else the repository root.
func (r *Registry) agentRoot(p Pin) (string, error) {
	if l, err := r.layoutAt(p); err == nil {
		return l.root, nil
	} else if !errkind.IsInput(err) {
		return "", err
	}
	e, err := r.repo.EntryAt(p.Tree, path.Join("registry", AgentsDir))
	switch {
	case err == nil && e.Mode.IsDir():
		return "registry", nil
	case err != nil && !errors.Is(err, gitstore.ErrNotFound):
		return "", err
	}
	return "", nil
}
