// Package completion writes shell completion scripts for bash, zsh and fish
// from a command tree: subcommands, flags (and which take a value) and one
// line of help each. The scripts are static: they know the tree of the dome
// that wrote them, so `source <(dome completion bash)` in a shell's start-up
// file keeps them in step with the installed binary. They never run dome
// while completing and complete file names wherever a command takes
// arguments or a flag takes a value. It does not print: Write returns the
// script for the caller to write.
package completion
