package app

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

// Version and Commit are set at link time by make build and the release
// builds (-ldflags "-X .../app.Version=v1.2.3 -X .../app.Commit=<sha>").
// Left empty, as in a binary made by `go install module@version`, they come
// from the build information the go command records in every binary.
var (
	Version = ""
	Commit  = ""
)

// buildInfo is what dome version prints.
type buildInfo struct {
	Version    string `json:"version"`
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commit_time,omitempty"`
	Modified   bool   `json:"modified,omitempty"`
	Module     string `json:"module"`
	GoVersion  string `json:"go_version"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
}

// readBuildInfo combines the link-time variables with the module build
// information: the module version (v1.2.3 for `go install ...@v1.2.3`, a
// pseudo-version or "(devel)" for a build in a checkout) and the VCS
// revision when the build recorded one.
func readBuildInfo() buildInfo {
	bi := buildInfo{Version: Version, Commit: Commit, Module: domeModule,
		GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	info, ok := debug.ReadBuildInfo()
	if ok {
		if info.Main.Path != "" {
			bi.Module = info.Main.Path
		}
		if bi.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			bi.Version = info.Main.Version
		}
		if info.GoVersion != "" {
			bi.GoVersion = info.GoVersion
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if bi.Commit == "" {
					bi.Commit = s.Value
				}
			case "vcs.time":
				bi.CommitTime = s.Value
			case "vcs.modified":
				bi.Modified = s.Value == "true"
			}
		}
	}
	if bi.Version == "" {
		bi.Version = "(devel)"
	}
	return bi
}

// domeVersion is the version dome records in manifests and logs.
func domeVersion() string {
	if Version != "" {
		return Version
	}
	return readBuildInfo().Version
}

func newVersionCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "version",
		Usage:       "print dome's version, commit and Go version",
		Description: help("version"),
		Flags:       withGlobal(),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("version takes no arguments (got %q)", c.Args().First())
			}
			return runVersion(c.Context, env, globalBool(c, flagJSON))
		},
	}
}

func runVersion(_ context.Context, env *Env, asJSON bool) error {
	bi := readBuildInfo()
	if asJSON {
		return writeJSON(env.Stdout, bi)
	}
	w := table(env.Stdout)
	fmt.Fprintf(w, "version\t%s\n", bi.Version)
	if bi.Commit != "" {
		dirty := ""
		if bi.Modified {
			dirty = " (modified)"
		}
		fmt.Fprintf(w, "commit\t%s%s\n", bi.Commit, dirty)
	}
	if bi.CommitTime != "" {
		fmt.Fprintf(w, "commit time\t%s\n", bi.CommitTime)
	}
	fmt.Fprintf(w, "module\t%s\n", bi.Module)
	fmt.Fprintf(w, "go\t%s %s/%s\n", bi.GoVersion, bi.OS, bi.Arch)
	return w.Flush()
}

// domeModule is the Go module dome and its helper programs install from.
const domeModule = "github.com/dome-registry/dome"
