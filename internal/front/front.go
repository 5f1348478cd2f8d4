// Package front is what bin/dome runs: it answers the commands that must
// start fast (dome --version, dome version, and dome registry cat on a
// local repository) and the one that must stay small (dome patch apply on
// a local repository, whose series may be long) itself, and hands every
// other command line, unchanged, to the full command set, bin/dome-full.
//
// Go initializes every package a program links before main runs, and the
// full command set links go-git's transports, OpenPGP, kin-openapi, the
// code generator, NATS and the rest: a few milliseconds and several hundred
// page faults on every start, whichever command runs. The front links only
// what its commands need (internal/readcmd, pkg/registry, dome's own git
// object store, and internal/patchcmd with pkg/patch; internal/archtest
// holds it to that), so a cold read starts about as fast as a Go hello
// world, a patch series runs in a few megabytes, and every other command
// pays one exec more (as git runs git-remote-https).
//
// The front is conservative: it runs a command line itself only when it
// knows the full command set would read it the same way: the flags it
// accepts are the global ones (--repo, --json, --quiet) and the command's
// own in their plain spellings, each at most once, and the right number of
// arguments.
// Anything else (help, completion, an unknown or misspelt flag, a URL
// repository, a missing argument) goes to the full command set, which
// reports usage errors as it always has. Both run the same code for these
// commands (internal/readcmd), so they print the same bytes and exit with
// the same code, which the tests check line by line.
package front

import (
	"context"
	"io"
	"slices"
	"strings"

	"github.com/dome-registry/dome/internal/readcmd"
	"github.com/dome-registry/dome/pkg/gitstore"
	"github.com/dome-registry/dome/pkg/helperexec"
)

// FullProgram is the program that holds dome's whole command set.
const FullProgram = helperexec.Full

// EnvHandedOff is set in the environment of the full command set when the
// front hands a command line over; a front that finds it set was started
// in the full command set's place (a misinstalled dome-full), and stops
// instead of handing over to itself forever. dome-full unsets it first
// thing, so the programs it runs see none.
const EnvHandedOff = "DOME_FRONT_HANDOFF"

// Env is what the front takes from the process: its command line and what
// every command takes (WorkDir "": it could not be read; the full command
// set reports that).
type Env struct {
	Args []string
	readcmd.Env
}

// Full runs the full command set with args (args[0] is the program name)
// and returns its exit code.
type Full func(args []string) int

// Main runs the command line of env and returns the exit code: itself for
// the commands it knows, else through full.
func Main(ctx context.Context, env Env, full Full) int {
	cl, ok := parse(env.Args, env.Getenv)
	if !ok || env.WorkDir == "" {
		return full(env.Args)
	}
	switch cl.cmd {
	case cmdVersionFlag:
		if _, err := io.WriteString(env.Stdout, readcmd.VersionFlagLine()); err != nil {
			return report(env, err)
		}
		return readcmd.ExitOK
	case cmdVersion:
		return report(env, readcmd.Version(env.Stdout, cl.json))
	case cmdRegistryCat:
		growStack(0)
		readcmd.ShortLived(env.Getenv)
		repo, err := readcmd.OpenLocal(env.WorkDir, cl.repo)
		if err != nil {
			return report(env, err)
		}
		reg := readcmd.Registry(repo, env.Getenv, env.WorkDir, env.Stderr)
		return report(env, readcmd.RegistryCat(ctx, reg, cl.args[0], cl.args[1], env.Stdout))
	case cmdPatchApply:
		return patchApply(env, cl, full)
	}
	return full(env.Args)
}

func report(env Env, err error) int {
	if err == nil {
		return readcmd.ExitOK
	}
	readcmd.PrintError(env.Stderr, err, readcmd.IsUsage(err))
	return readcmd.ExitCode(err)
}

type command int

const (
	cmdNone        command = iota
	cmdVersionFlag         // dome --version
	cmdVersion             // dome version
	cmdRegistryCat         // dome registry cat <tool@ref> <path>
	cmdPatchApply          // dome patch apply [flags] <patch>...
)

// commandLine is a command line the front runs itself.
type commandLine struct {
	cmd  command
	repo string   // --repo, else $DOME_REPO, else "" (the working directory's)
	json bool     // --json
	args []string // the command's arguments
	// flags are the command's own flags that were given, by name (an
	// alias is read as its flag's name): the value, "" for a bool.
	flags map[string]string
}

type flagKind uint8

const (
	boolFlag   flagKind = iota
	stringFlag          // a value that does not start with "-"
	intFlag             // a decimal number without sign or leading zeros
)

type flagSpec struct {
	name string // the flag's name, for an alias
	kind flagKind
}

// leaves are the commands the front runs, by their words, with their own
// flags (the global ones, --repo, --json and --quiet, are read for all):
// internal/app defines the same flags, which the tests hold the front to.
var leaves = map[string]struct {
	cmd   command
	flags map[string]flagSpec
}{
	"version":      {cmd: cmdVersion},
	"registry cat": {cmd: cmdRegistryCat},
	"patch apply": {cmd: cmdPatchApply, flags: map[string]flagSpec{
		"base": {"base", stringFlag}, "three-way": {"three-way", boolFlag}, "3": {"three-way", boolFlag},
		"fuzz": {"fuzz", intFlag}, "p": {"p", intFlag}, "max-size": {"max-size", intFlag},
		"write-conflicts": {"write-conflicts", boolFlag}, "commit": {"commit", stringFlag},
		"m": {"m", stringFlag}, "message": {"m", stringFlag},
	}},
}

// groups are the words that start a leaf of more than one word: no flag
// may come between them.
var groups = map[string]bool{"registry": true, "patch": true}

// parse reads args the way the full command set does, for the command
// lines the front runs; ok is false for every other one.
func parse(args []string, getenv func(string) string) (cl commandLine, ok bool) {
	if len(args) < 2 {
		return cl, false
	}
	if len(args) == 2 {
		switch args[1] {
		case "--version", "-version", "-v", "--v":
			return commandLine{cmd: cmdVersionFlag}, true
		}
	}
	var path []string // the command's words, then its arguments
	var leafFlags map[string]flagSpec
	leafAt := 0 // len(path) once the leaf's words are read
	repos := 0
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "" || a[0] != '-' || a == "-" {
			path = append(path, a)
			if leafAt == 0 {
				if l, ok := leaves[strings.Join(path, " ")]; ok {
					cl.cmd, leafFlags, leafAt = l.cmd, l.flags, len(path)
				}
			}
			continue
		}
		if leafAt == 0 && len(path) > 0 && groups[path[0]] {
			return cl, false // a flag between a group and its command
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		switch {
		case name == readcmd.FlagJSON && !hasValue:
			cl.json = true
		case (name == readcmd.FlagQuiet || name == readcmd.FlagQuietShort) && !hasValue:
		case name == readcmd.FlagRepo:
			if !hasValue {
				if i+1 == len(args) {
					return cl, false
				}
				i++
				value = args[i]
			}
			repos++
			cl.repo = value
		default:
			f, known := leafFlags[name]
			if !known || hasFlag(cl.flags, f.name) {
				return cl, false // help, "--", another flag, a flag given twice
			}
			switch {
			case f.kind == boolFlag && hasValue:
				return cl, false // --flag=false and the like
			case f.kind != boolFlag && !hasValue:
				if i+1 == len(args) {
					return cl, false
				}
				i++
				value = args[i]
			}
			if f.kind != boolFlag && (value == "" || value[0] == '-') {
				return cl, false
			}
			if f.kind == intFlag && !plainInt(value) {
				return cl, false
			}
			if cl.flags == nil {
				cl.flags = map[string]string{}
			}
			cl.flags[f.name] = value
		}
	}
	if repos > 1 || (repos == 1 && cl.repo == "") || (repos == 1 && strings.HasPrefix(cl.repo, "-")) {
		return cl, false
	}
	if repos == 0 {
		cl.repo = getenv(readcmd.EnvRepo)
	}
	if cl.repo != "" && gitstore.IsURL(cl.repo) {
		return cl, false // a remote: its transports live in the full command set
	}
	cl.args = path[leafAt:]
	switch cl.cmd {
	case cmdVersion:
		ok = len(cl.args) == 0
	case cmdRegistryCat:
		ok = len(cl.args) == 2
	case cmdPatchApply:
		// Standard input is read once: were the series to need dome-full
		// (patchApply), it could not be handed over.
		ok = len(cl.args) > 0 && !slices.Contains(cl.args, "-")
	}
	return cl, ok
}

func hasFlag(flags map[string]string, name string) bool {
	_, ok := flags[name]
	return ok
}

// plainInt: digits, no sign, no leading zero (the full command set reads
// "010" as octal and "0x10" as hexadecimal), and small enough for an int.
func plainInt(s string) bool {
	if len(s) > 18 || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// growStack grows this goroutine's stack, while it is shallow, to the 16 KB
// a cold `dome registry cat` reaches. Go starts a goroutine on 2 KB and
// doubles the stack when a call does not fit, copying it and adjusting every
// frame on it (a look-up of each frame's stack map): the two such copies
// deep in the read (4 to 8 KB, 8 to 16 KB) cost it some 65 K instructions,
// this one copy of a few frames under 10 K. Only the read does it: dome
// --version needs no more stack than it starts with.
//
//go:noinline
func growStack(i int) byte {
	var frame [12 << 10]byte
	return frame[i]
}
