package app

import (
	"embed"
	"strings"

	"github.com/dome-registry/dome/internal/lazyre"

	"github.com/urfave/cli/v2"
)

// The long help of each command (its Description: what `dome CMD --help`
// prints and what docs/reference/ is generated from) is a markdown file
// under help/, named after the command path: help/stack_promote.md for
// dome stack promote. Keeping the prose out of the Go files keeps the
// command files about flags and calls, and lets the prose use backticks.
//
// Reading ~100 KB of help costs a process about 1 ms (page faults and
// copies), which is most of what `dome --version` costs, so a command's
// Description holds a reference (help("stack_promote") returns
// "help:stack_promote") until Run sees that help will be printed and
// loadHelp puts the text in.
//
//go:embed help/*.md
var helpFiles embed.FS

const helpRef = "help:"

// help returns the reference to the long help of the command at path
// ("stack_promote"); loadHelp resolves it.
func help(path string) string { return helpRef + path }

// helpText reads the long help of path ("" when there is no file).
// TestHelpFiles checks that every reference has its file and every file is
// used.
func helpText(path string) string {
	b, err := helpFiles.ReadFile("help/" + path + ".md")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// loadHelp replaces every help reference in the tree by its text, as
// markdown (the generated reference keeps its links).
func loadHelp(cmds []*cli.Command) { loadHelpAs(cmds, nil) }

// loadHelpAs replaces every help reference by its text passed through
// render (nil: as written).
func loadHelpAs(cmds []*cli.Command, render func(string) string) {
	for _, c := range cmds {
		if p, ok := strings.CutPrefix(c.Description, helpRef); ok {
			c.Description = helpText(p)
			if render != nil {
				c.Description = render(c.Description)
			}
		}
		loadHelpAs(c.Subcommands, render)
	}
}

// mdLink is a markdown link to a page of docs/ ("[text](page.md#anchor)").
var mdLink = lazyre.New(`\[([^\]\n]+)\]\(([a-z0-9-]+\.md)(#[a-z0-9-]*)?\)`)

// terminalHelp writes the links of a help text as a terminal reader can
// follow them: "[text](runs.md#x)" becomes "text (docs/runs.md)", and a
// link whose text is the page's name just the path.
func terminalHelp(s string) string {
	re := mdLink()
	return re.ReplaceAllStringFunc(s, func(m string) string {
		sub := re.FindStringSubmatch(m)
		text, page := sub[1], "docs/"+sub[2]
		if text == sub[2] || text == page {
			return page
		}
		return text + " (" + page + ")"
	})
}

// helpWanted says whether args will print a command's help: a help flag or
// the help command anywhere, or a command that has subcommands (whose help
// urfave prints when none is named).
func helpWanted(a *cli.App, args []string) bool {
	flags := a.Flags
	cmds := a.Commands
	group := false // the last command named has subcommands
	for i := 1; i < len(args); i++ {
		arg := args[i]
		switch arg {
		case "-h", "--help", "-help", "--h":
			return true
		case "--":
			return group
		}
		if strings.HasPrefix(arg, "-") && arg != "-" {
			i += flagArity(flags, arg) - 1
			continue
		}
		if cmds == nil {
			continue // a leaf command's argument
		}
		if group && (arg == "help" || arg == "h") {
			return true
		}
		var next *cli.Command
		for _, c := range cmds {
			if c.HasName(arg) {
				next = c
			}
		}
		if next == nil {
			return group
		}
		flags = append(append([]cli.Flag{}, next.Flags...), flags...)
		cmds = next.Subcommands
		group = len(cmds) > 0
		if !group {
			cmds = nil
		}
	}
	return group
}
