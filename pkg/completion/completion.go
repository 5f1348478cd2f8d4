package completion

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// Command is one node of the tree. The root is the program itself (its Name
// is the program name, its Flags the global flags).
type Command struct {
	Name        string
	Usage       string
	Flags       []Flag
	Subcommands []*Command
}

// Flag is one flag with all its names (without dashes).
type Flag struct {
	Names      []string
	Usage      string
	TakesValue bool
	// Local flags of the root (--version) are not offered below it; the
	// root's other flags are global and offered everywhere.
	Local bool
}

// Shells are the shells Write supports, in the order help lists them.
var Shells = []string{"bash", "zsh", "fish"}

// Write returns the completion script of root for shell.
func Write(shell string, root *Command) ([]byte, error) {
	nodes := flatten(root)
	var b bytes.Buffer
	switch shell {
	case "bash":
		writeBash(&b, root.Name, nodes)
	case "zsh":
		writeZsh(&b, root.Name, nodes)
	case "fish":
		writeFish(&b, root.Name, nodes)
	default:
		return nil, fmt.Errorf("unknown shell %q (want one of %s)", shell, strings.Join(Shells, ", "))
	}
	return b.Bytes(), nil
}

// node is a command with its path below the root ("" for the root,
// "stack apply" for dome stack apply) and the flags that apply there: its
// own and, because dome takes global flags anywhere, the root's.
type node struct {
	path  string
	cmd   *Command
	flags []Flag
}

func flatten(root *Command) []node {
	var out []node
	var walk func(path string, c *Command, inherited []Flag)
	walk = func(path string, c *Command, inherited []Flag) {
		flags := mergeFlags(c.Flags, inherited)
		out = append(out, node{path: path, cmd: c, flags: flags})
		for _, s := range c.Subcommands {
			p := s.Name
			if path != "" {
				p = path + " " + s.Name
			}
			walk(p, s, inherited)
		}
	}
	var global []Flag
	for _, f := range root.Flags {
		if !f.Local {
			global = append(global, f)
		}
	}
	out = append(out, node{path: "", cmd: root, flags: root.Flags})
	for _, s := range root.Subcommands {
		walk(s.Name, s, global)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// mergeFlags is own followed by the inherited flags own does not redefine.
func mergeFlags(own, inherited []Flag) []Flag {
	seen := map[string]bool{}
	var out []Flag
	for _, list := range [][]Flag{own, inherited} {
		for _, f := range list {
			if len(f.Names) == 0 || seen[f.Names[0]] {
				continue
			}
			for _, n := range f.Names {
				seen[n] = true
			}
			out = append(out, f)
		}
	}
	return out
}

// dashed is the flag name as typed: -q, --repo.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func (n node) subNames() []string {
	var out []string
	for _, s := range n.cmd.Subcommands {
		out = append(out, s.Name)
	}
	return out
}

func (n node) flagWords(valueOnly bool) []string {
	var out []string
	for _, f := range n.flags {
		if valueOnly && !f.TakesValue {
			continue
		}
		for _, name := range f.Names {
			out = append(out, dashed(name))
		}
	}
	return out
}

// firstLine is a one-line summary for a shell's menu.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// singleQuote quotes s for bash and zsh: a quote inside is closed, escaped and reopened.
func singleQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// fishQuote quotes s for fish, where a backslash escapes inside '...'.
func fishQuote(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return "'" + strings.ReplaceAll(s, "'", `\'`) + "'"
}
