package completion

import (
	"bytes"
	"fmt"
	"strings"
)

// Each script holds the tree as three lookup functions keyed by the command
// path typed so far: the subcommands there, the flags there and the flags
// that take a value (whose next word is not a command). One loop walks the
// words before the cursor, the same in the three shells.

func writeBash(b *bytes.Buffer, prog string, nodes []node) {
	fn := "__" + ident(prog)
	fmt.Fprintf(b, `# bash completion for %[1]s.
# Load it in this shell:  source <(%[1]s completion bash)
# or for every shell:     %[1]s completion bash > ~/.local/share/bash-completion/completions/%[1]s

`, prog)
	bashCase(b, fn+"_commands", nodes, func(n node) []string { return n.subNames() })
	bashCase(b, fn+"_flags", nodes, func(n node) []string { return n.flagWords(false) })
	bashCase(b, fn+"_value_flags", nodes, func(n node) []string { return n.flagWords(true) })
	fmt.Fprintf(b, `_%[2]s() {
  local cur=${COMP_WORDS[COMP_CWORD]} cmdpath='' w i skip=0
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    if ((skip)); then
      # bash splits --flag=value at "=": the value is the word after it.
      [[ $w == = ]] || skip=0
      continue
    fi
    case $w in
      --) break ;;
      -*=*) ;;
      -*) [[ " $(%[1]s_value_flags "$cmdpath") " == *" $w "* ]] && skip=1 ;;
      *) [[ " $(%[1]s_commands "$cmdpath") " == *" $w "* ]] && cmdpath=${cmdpath:+$cmdpath }$w ;;
    esac
  done
  COMPREPLY=()
  # A flag's value or a command's arguments: the shell's default (file names).
  ((skip)) && return 0
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(%[1]s_flags "$cmdpath")" -- "$cur"))
    return 0
  fi
  local cmds
  cmds=$(%[1]s_commands "$cmdpath")
  [[ -n $cmds ]] && COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
  return 0
}
complete -o default -F _%[2]s %[3]s
`, fn, ident(prog), prog)
}

func bashCase(b *bytes.Buffer, name string, nodes []node, words func(node) []string) {
	fmt.Fprintf(b, "%s() {\n  case $1 in\n", name)
	for _, n := range nodes {
		if w := words(n); len(w) > 0 {
			fmt.Fprintf(b, "    %s) echo %s ;;\n", singleQuote(n.path), singleQuote(strings.Join(w, " ")))
		}
	}
	b.WriteString("  esac\n}\n\n")
}

func writeZsh(b *bytes.Buffer, prog string, nodes []node) {
	fn := "__" + ident(prog)
	fmt.Fprintf(b, `#compdef %[1]s
# zsh completion for %[1]s.
# Load it in this shell (after compinit):  source <(%[1]s completion zsh)
# or for every shell:                      %[1]s completion zsh > "${fpath[1]}/_%[1]s"

`, prog)
	// name:description lines for _describe (a colon in a name is escaped).
	zshCase(b, fn+"_commands", nodes, func(n node) []string {
		var out []string
		for _, s := range n.cmd.Subcommands {
			out = append(out, zshItem(s.Name, s.Usage))
		}
		return out
	}, true)
	zshCase(b, fn+"_flags", nodes, func(n node) []string {
		var out []string
		for _, f := range n.flags {
			for _, name := range f.Names {
				out = append(out, zshItem(dashed(name), f.Usage))
			}
		}
		return out
	}, true)
	zshCase(b, fn+"_value_flags", nodes, func(n node) []string { return n.flagWords(true) }, false)
	fmt.Fprintf(b, `_%[2]s() {
  local cmdpath='' w i skip=0
  local -a known items
  for ((i = 2; i < CURRENT; i++)); do
    w=${words[i]}
    if ((skip)); then skip=0; continue; fi
    case $w in
      --) break ;;
      -*=*) ;;
      -*)
        known=(${=$(%[1]s_value_flags "$cmdpath")})
        (( ${known[(Ie)$w]} )) && skip=1 ;;
      *)
        known=(${(f)"$(%[1]s_commands "$cmdpath")"})
        known=(${known%%%%:*})
        (( ${known[(Ie)$w]} )) && cmdpath=${cmdpath:+$cmdpath }$w ;;
    esac
  done
  # A flag's value or a command's arguments: file names.
  if ((skip)); then _files; return; fi
  if [[ ${words[CURRENT]} == -* ]]; then
    items=(${(f)"$(%[1]s_flags "$cmdpath")"})
    _describe -t options '%[3]s flag' items
    return
  fi
  items=(${(f)"$(%[1]s_commands "$cmdpath")"})
  if (( ${#items} )); then
    _describe -t commands '%[3]s command' items
  else
    _files
  fi
}

if [[ ${funcstack[1]} == _%[2]s ]]; then
  _%[2]s "$@"
else
  compdef _%[2]s %[3]s
fi
`, fn, ident(prog), prog)
}

func zshCase(b *bytes.Buffer, name string, nodes []node, words func(node) []string, lines bool) {
	fmt.Fprintf(b, "%s() {\n  case $1 in\n", name)
	for _, n := range nodes {
		w := words(n)
		if len(w) == 0 {
			continue
		}
		if lines {
			var q []string
			for _, s := range w {
				q = append(q, singleQuote(s))
			}
			fmt.Fprintf(b, "    %s) print -rl -- \\\n      %s ;;\n", singleQuote(n.path), strings.Join(q, " \\\n      "))
		} else {
			fmt.Fprintf(b, "    %s) print -r -- %s ;;\n", singleQuote(n.path), singleQuote(strings.Join(w, " ")))
		}
	}
	b.WriteString("  esac\n}\n\n")
}

func zshItem(name, usage string) string {
	return strings.ReplaceAll(name, ":", `\:`) + ":" + firstLine(usage)
}

func writeFish(b *bytes.Buffer, prog string, nodes []node) {
	fn := "__" + ident(prog)
	fmt.Fprintf(b, `# fish completion for %[1]s.
# Load it in this shell:  %[1]s completion fish | source
# or for every shell:     %[1]s completion fish > ~/.config/fish/completions/%[1]s.fish

`, prog)
	fishSwitch(b, fn+"_commands", nodes, func(n node) []string { return n.subNames() })
	fishSwitch(b, fn+"_value_flags", nodes, func(n node) []string { return n.flagWords(true) })
	fmt.Fprintf(b, `# The command path typed so far ("" at the top, "stack apply" below it).
function %[1]s_path
    set -l words (commandline -opc)
    set -e words[1]
    set -l p ''
    set -l skip 0
    for w in $words
        if test $skip = 1
            set skip 0
            continue
        end
        switch $w
            case '--'
                break
            case '-*=*'
            case '-*'
                if contains -- $w (%[1]s_value_flags "$p")
                    set skip 1
                end
            case '*'
                if contains -- $w (%[1]s_commands "$p")
                    set p (string trim -- "$p $w")
                end
        end
    end
    echo $p
end

function %[1]s_at --argument-names want
    set -l p (%[1]s_path)
    test "$p" = "$want"
end

`, fn)
	for _, n := range nodes {
		cond := fishQuote(fn + "_at " + fishQuoteDouble(n.path))
		if len(n.cmd.Subcommands) > 0 {
			// A command group takes no file names, only its subcommands.
			fmt.Fprintf(b, "complete -c %s -n %s -f\n", prog, cond)
			for _, s := range n.cmd.Subcommands {
				fmt.Fprintf(b, "complete -c %s -n %s -a %s -d %s\n", prog, cond, fishQuote(s.Name), fishQuote(firstLine(s.Usage)))
			}
		}
		for _, f := range n.flags {
			var opts []string
			for _, name := range f.Names {
				if len(name) == 1 {
					opts = append(opts, "-s "+fishQuote(name))
				} else {
					opts = append(opts, "-l "+fishQuote(name))
				}
			}
			if f.TakesValue {
				opts = append(opts, "-r")
			}
			fmt.Fprintf(b, "complete -c %s -n %s %s -d %s\n", prog, cond, strings.Join(opts, " "), fishQuote(firstLine(f.Usage)))
		}
	}
}

func fishSwitch(b *bytes.Buffer, name string, nodes []node, words func(node) []string) {
	fmt.Fprintf(b, "function %s\n    switch $argv[1]\n", name)
	for _, n := range nodes {
		if w := words(n); len(w) > 0 {
			var q []string
			for _, s := range w {
				q = append(q, fishQuote(s))
			}
			fmt.Fprintf(b, "        case %s\n            printf '%%s\\n' %s\n", fishQuote(n.path), strings.Join(q, " "))
		}
	}
	b.WriteString("    end\nend\n\n")
}

// fishQuoteDouble quotes a command path inside the single-quoted -n
// condition: "stack apply" (paths hold only command names).
func fishQuoteDouble(s string) string { return `"` + s + `"` }

// ident turns a program name into a shell function name.
func ident(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' {
			return r
		}
		return '_'
	}, s)
}
