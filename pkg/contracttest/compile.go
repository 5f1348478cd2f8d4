package contracttest

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dome-registry/dome/pkg/codegen"
)

// CompileResult says whether the clients of one language compile.
type CompileResult struct {
	Language string   `json:"language"`
	Clients  int      `json:"clients"`
	Status   string   `json:"status"` // pass, fail, skip
	Command  string   `json:"command"`
	Problems []string `json:"problems,omitempty"`
}

// Compile checks that generated clients compile, one toolchain run per
// language: go build over every Go client as a package of one temporary
// module (the bundle's harness go.mod, module cache only: GOPROXY=off), tsc
// --noEmit over every TypeScript client, python3 -m compileall plus an
// import of every Python client. A missing toolchain (or, for Go, a module
// cache without the clients' dependencies) is a skip that says so.
func Compile(ctx context.Context, opts Options, clients []*codegen.Client) []CompileResult {
	byLang := map[string][]*codegen.Client{}
	for _, c := range clients {
		byLang[c.Language] = append(byLang[c.Language], c)
	}
	var out []CompileResult
	for _, lang := range codegen.Languages {
		cs := byLang[lang]
		if len(cs) == 0 {
			continue
		}
		res := CompileResult{Language: lang, Clients: len(cs)}
		var err error
		switch lang {
		case "go":
			res.Command = "go build"
			err = compileGo(ctx, opts, cs, &res)
		case "ts":
			res.Command = "tsc --noEmit"
			err = compileTS(ctx, opts, cs, &res)
		case "python":
			res.Command = "python3 -m compileall + import"
			err = compilePython(ctx, opts, cs, &res)
		}
		if err != nil {
			res.Status, res.Problems = Fail, []string{err.Error()}
		} else if res.Status == "" {
			res.Status = Pass
		}
		out = append(out, res)
	}
	return out
}

// stage writes each client into dir/c<i>/ (manifest included: Go clients
// embed it) and returns the folder names, in client order.
func stage(dir string, cs []*codegen.Client) ([]string, error) {
	var names []string
	for i, c := range cs {
		name := fmt.Sprintf("c%d", i)
		if err := writeTree(filepath.Join(dir, name), clientFiles(c)); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, nil
}

// attribute rewrites c<i>/ in compiler output as the client's folder.
func attribute(msg string, names []string, cs []*codegen.Client) string {
	for i := len(names) - 1; i >= 0; i-- {
		msg = strings.ReplaceAll(msg, names[i]+"/", cs[i].Dir()+"/")
	}
	return msg
}

func compileGo(ctx context.Context, opts Options, cs []*codegen.Client, res *CompileResult) error {
	if opts.Go == "" {
		res.Status, res.Problems = Skip, []string{"the Go toolchain (go) is not on PATH"}
		return nil
	}
	dir, err := os.MkdirTemp(opts.TempDir, "dome-compile-go-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// The harness of the first bundle: clients of different Go bundles
	// are built with their own harness each.
	groups := map[string][]*codegen.Client{}
	var keys []string
	for _, c := range cs {
		k := c.Bundle.Resolution.Tree.String()
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], c)
	}
	sort.Strings(keys)
	for gi, k := range keys {
		g := groups[k]
		mod := filepath.Join(dir, fmt.Sprintf("m%d", gi))
		harness := map[string][]byte{}
		for _, h := range g[0].Bundle.Spec.Harness {
			harness[path.Base(h)] = g[0].Bundle.Files[h]
		}
		if harness["go.mod"] == nil {
			return fmt.Errorf("bundle %s has no harness/go.mod to build its clients in", g[0].Bundle.Spec.ID)
		}
		if err := writeTree(mod, harness); err != nil {
			return err
		}
		names, err := stage(mod, g)
		if err != nil {
			return err
		}
		env := opts
		env.Env = append(append([]string{}, opts.Env...), "GOPROXY=off")
		if _, err := runTool(ctx, env, mod, nil, opts.Go, "build", "./..."); err != nil {
			msg := attribute(err.Error(), names, g)
			if strings.Contains(msg, "GOPROXY=off") || strings.Contains(msg, "module lookup disabled") {
				res.Status, res.Problems = Skip, []string{"the Go module cache lacks the clients' dependencies (listed in generators/" + g[0].Bundle.Spec.ID + "/harness/go.mod); dome does not download them: " + lastLine(msg)}
				return nil
			}
			return fmt.Errorf("%s", msg)
		}
	}
	return nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func compileTS(ctx context.Context, opts Options, cs []*codegen.Client, res *CompileResult) error {
	if opts.TSC == "" {
		res.Status, res.Problems = Skip, []string{"the TypeScript compiler is not installed (npm ci --prefix contract-tests/ts, or set DOME_TSC)"}
		return nil
	}
	dir, err := os.MkdirTemp(opts.TempDir, "dome-compile-ts-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	names, err := stage(dir, cs)
	if err != nil {
		return err
	}
	// One program over every client, with the first bundle's compiler options.
	var cfg []byte
	for _, h := range cs[0].Bundle.Spec.Harness {
		if path.Base(h) == "tsconfig.json" {
			cfg = cs[0].Bundle.Files[h]
		}
	}
	if cfg == nil {
		cfg = []byte(`{"compilerOptions": {"target": "ES2022", "module": "ES2022", "moduleResolution": "bundler", "lib": ["ES2022", "DOM"], "strict": true, "noEmit": true, "skipLibCheck": true, "types": []}}`)
	}
	cfg = []byte(strings.Replace(string(cfg), `"include": ["*.ts"]`, `"include": ["*/*.ts"]`, 1))
	if !strings.Contains(string(cfg), `"include"`) {
		cfg = []byte(strings.TrimSuffix(strings.TrimSpace(string(cfg)), "}") + `, "include": ["*/*.ts"]}`)
	}
	if err := writeTree(dir, map[string][]byte{"tsconfig.json": cfg}); err != nil {
		return err
	}
	if _, err := runTool(ctx, opts, dir, nil, opts.TSC, "-p", "tsconfig.json", "--noEmit"); err != nil {
		return fmt.Errorf("%s", attribute(err.Error(), names, cs))
	}
	return nil
}

func compilePython(ctx context.Context, opts Options, cs []*codegen.Client, res *CompileResult) error {
	if opts.Python == "" {
		res.Status, res.Problems = Skip, []string{"python3 is not on PATH"}
		return nil
	}
	dir, err := os.MkdirTemp(opts.TempDir, "dome-compile-py-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	names, err := stage(dir, cs)
	if err != nil {
		return err
	}
	if _, err := runTool(ctx, opts, dir, nil, opts.Python, append([]string{"-m", "compileall", "-q"}, names...)...); err != nil {
		return fmt.Errorf("%s", attribute(err.Error(), names, cs))
	}
	// Importing runs the module-level code: TypedDicts, aliases, the policy.
	args := append([]string{"-B", "-c", "import importlib, sys\nfor n in sys.argv[1:]: importlib.import_module(n)"}, names...)
	if _, err := runTool(ctx, opts, dir, nil, opts.Python, args...); err != nil {
		return fmt.Errorf("%s", attribute(err.Error(), names, cs))
	}
	return nil
}
