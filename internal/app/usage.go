package app

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/urfave/cli/v2"
)

// wireUsage applies dome's usage rules to every command of the tree in one
// place, so that no command has to remember them:
//
//   - a flag error (unknown flag, bad value) is a usage error: exit 2, one
//     line on stderr, a hint naming the command's --help;
//   - a required flag that is missing is the same kind of usage error (urfave
//     would print the whole help on stdout and exit 1);
//   - a command group answers an unknown subcommand with a usage error that
//     lists its commands (urfave exits 3 with "No help topic");
//   - a command refuses more positional arguments than its ArgsUsage
//     declares: none when it declares none (urfave ignores them silently).
//
// path is the command path of the parent ("dome").
func wireUsage(cmds []*cli.Command, path string) {
	for _, c := range cmds {
		wireCommand(c, path+" "+c.Name)
	}
}

func wireCommand(c *cli.Command, path string) {
	c.HideHelpCommand = true // "dome help [command...]" is the one help command
	c.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
		return usageError{Err: &errkind.InputError{Source: cmdSource(path), Problem: flagProblem(err), Hint: helpHint(path)}}
	}
	required := takeRequired(c.Flags)
	_, maxArgs := argsRange(c.ArgsUsage)
	if len(c.Subcommands) > 0 {
		wireUsage(c.Subcommands, path)
		if c.Action == nil {
			c.Action = groupAction(c, path)
			return
		}
		// A group with an action of its own (dome release): its own rules.
	}
	action := c.Action
	if action == nil {
		return
	}
	c.Action = func(ctx *cli.Context) error {
		for _, name := range required {
			if !ctx.IsSet(name) {
				return usageError{Err: &errkind.InputError{Source: cmdSource(path), Problem: "missing required flag --" + name, Hint: helpHint(path)}}
			}
		}
		if maxArgs == 0 && len(c.Subcommands) > 0 && ctx.NArg() > 0 {
			// dome serve probe: a word after a command with subcommands
			// of its own is a misspelt subcommand more likely than an argument.
			return usageError{Err: &errkind.InputError{
				Source:  cmdSource(path),
				Problem: fmt.Sprintf("unknown command %q (commands: %s)", ctx.Args().First(), commandNames(c.Subcommands)),
				Hint:    helpHint(path),
			}}
		}
		if maxArgs >= 0 && ctx.NArg() > maxArgs {
			return usageError{Err: strayArgs(path, c.ArgsUsage, ctx.Args().Slice(), maxArgs)}
		}
		return action(ctx)
	}
}

// groupAction runs a command group given no known subcommand: help on stdout
// when it was given nothing, a usage error naming the commands otherwise.
func groupAction(c *cli.Command, path string) cli.ActionFunc {
	return func(ctx *cli.Context) error {
		if !ctx.Args().Present() {
			return cli.ShowSubcommandHelp(ctx)
		}
		return usageError{Err: &errkind.InputError{
			Source:  cmdSource(path),
			Problem: fmt.Sprintf("unknown command %q (commands: %s)", ctx.Args().First(), commandNames(c.Subcommands)),
			Hint:    helpHint(path),
		}}
	}
}

// strayArgs names the first argument beyond what the command takes.
func strayArgs(path, argsUsage string, args []string, maxArgs int) error {
	extra := args[maxArgs]
	problem := fmt.Sprintf("unexpected argument %q: the command takes no arguments", extra)
	if maxArgs > 0 {
		problem = fmt.Sprintf("unexpected argument %q: the command takes %s", extra, strings.TrimSpace(argsUsage))
	}
	hint := helpHint(path)
	if strings.HasPrefix(extra, "[") || strings.Contains(extra, " ") {
		hint = "a flag goes on its own, without brackets or quotes around it and its value; " + hint
	}
	return &errkind.InputError{Source: cmdSource(path), Problem: problem, Hint: hint}
}

func helpHint(path string) string { return "run '" + path + " --help'" }

// cmdSource names a command in an error: "stack plan" for "dome stack plan"
// (report already prints "dome: "), nothing for dome itself.
func cmdSource(path string) string {
	if path == "dome" {
		return ""
	}
	return strings.TrimPrefix(path, "dome ")
}

// flagProblem rewords the standard flag package's errors for a reader.
func flagProblem(err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		return "unknown flag " + dashes(name)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return "flag " + dashes(name) + " needs a value"
	}
	return msg
}

// dashes spells a flag name as the help does: --name, or -n for one letter.
func dashes(name string) string {
	name = strings.TrimLeft(name, "-")
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// takeRequired returns the names of the flags marked Required and clears the
// mark (dome checks them itself, see wireUsage); their usage says
// "(required)" instead, since urfave's help does not show the mark.
func takeRequired(flags []cli.Flag) []string {
	var names []string
	for _, f := range flags {
		r, ok := f.(cli.RequiredFlag)
		if !ok || !r.IsRequired() {
			continue
		}
		v := reflect.ValueOf(f)
		if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
			continue
		}
		req, usage := v.Elem().FieldByName("Required"), v.Elem().FieldByName("Usage")
		if !req.CanSet() || req.Kind() != reflect.Bool {
			continue
		}
		req.SetBool(false)
		if usage.CanSet() && usage.Kind() == reflect.String && !strings.HasSuffix(usage.String(), "(required)") {
			usage.SetString(usage.String() + " (required)")
		}
		names = append(names, f.Names()[0])
	}
	return names
}

// argsRange reads how many positional arguments a command takes from its
// ArgsUsage, the same text its help shows:
//
//	""  or " "                         none
//	"FILE", "<tool@ref> <path>"        exactly the words given
//	"[FILE]", "[PATCH] (comment)"      optional words count toward the maximum
//	"FILE...", "[FILE|-]..."           no maximum
//	"<tool@ref> | --all"               alternatives: the widest of them; an
//	                                   alternative naming a flag takes none
//
// A parenthesized comment is ignored. max is -1 for no maximum.
func argsRange(usage string) (min, max int) {
	usage = dropParens(usage)
	first := true
	for _, alt := range splitTop(usage, '|') {
		lo, hi := altRange(strings.Fields(alt))
		if first {
			min, max, first = lo, hi, false
			continue
		}
		if lo < min {
			min = lo
		}
		if max >= 0 && (hi < 0 || hi > max) {
			max = hi
		}
	}
	return min, max
}

func altRange(words []string) (min, max int) {
	for i, w := range words {
		if w == "--" {
			// "-- COMMAND [ARGS...]": everything after the separator is the
			// wrapped command's, however many words it has.
			lo, _ := altRange(words[i+1:])
			return lo, -1
		}
	}
	var positional []string
	for i := 0; i < len(words); i++ {
		if strings.HasPrefix(words[i], "[-") {
			// An optional flag ("[--base REV]") is not a positional.
			for i < len(words) && !strings.HasSuffix(words[i], "]") {
				i++
			}
			continue
		}
		positional = append(positional, words[i])
	}
	words = positional
	for _, w := range words {
		if strings.HasPrefix(w, "-") {
			return 0, 0 // "--all", "--spec FILE": the flag stands in for the arguments
		}
	}
	for _, w := range words {
		optional := strings.HasPrefix(w, "[")
		if strings.HasSuffix(w, "...") || strings.HasSuffix(w, "...]") {
			max = -1
		} else if max >= 0 {
			max++
		}
		if !optional {
			min++
		}
	}
	return min, max
}

// dropParens removes parenthesized comments.
func dropParens(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// splitTop splits s at sep outside brackets.
func splitTop(s string, sep rune) []string {
	var parts []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '[', '<':
			depth++
		case ']', '>':
			if depth > 0 {
				depth--
			}
		case sep:
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}
