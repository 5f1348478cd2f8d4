// Package buildinfo is the version of this dome build: what dome version
// and dome --version print and what dome records in manifests. Both dome
// programs read it (the front, bin/dome, and the full command set,
// bin/dome-full), so it imports nothing but the runtime.
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Version and Commit are set at link time by make build and the release
// builds (-ldflags "-X .../internal/buildinfo.Version=v1.2.3 -X
// .../internal/buildinfo.Commit=<sha>"). Left empty, as in a binary made by
// `go install module@version`, they come from the build information the go
// command records in every binary.
var (
	Version = ""
	Commit  = ""
)

// Module is the Go module dome and its helper programs install from.
const Module = "github.com/dome-registry/dome"

// Info is what dome version prints.
type Info struct {
	Version    string `json:"version"`
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commit_time,omitempty"`
	Modified   bool   `json:"modified,omitempty"`
	Module     string `json:"module"`
	GoVersion  string `json:"go_version"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
}

// Read combines the link-time variables with the module build information:
// the module version (v1.2.3 for `go install ...@v1.2.3`, a pseudo-version
// or "(devel)" for a build in a checkout) and the VCS revision when the
// build recorded one.
func Read() Info {
	bi := Info{Version: Version, Commit: Commit, Module: Module,
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

// String is the version dome records in manifests and logs, and prints
// for --version.
func String() string {
	if Version != "" {
		return Version
	}
	return Read().Version
}

// InstallCommand is the go install command of the program name (dome-full,
// dome-openai, ...) at this build's version; @latest for a development
// build, whose version names no release.
func InstallCommand(name string) string {
	v := String()
	if len(v) < 2 || v[0] != 'v' || v[1] < '0' || v[1] > '9' {
		v = "latest"
	}
	return "go install " + Module + "/cmd/" + name + "@" + v
}

// InstallHint says how to install the program name (dome-full, a helper)
// beside dome, at this build's version.
func InstallHint(name string) string {
	return "install it beside dome: " + InstallCommand(name) + " (the release archive ships it next to dome)"
}
