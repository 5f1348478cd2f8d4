// Package helperexec finds dome's helper programs: what would make every
// dome command slower to start if dome linked it is a separate program,
// installed beside dome and run only when used, as git runs
// git-remote-https: dome-full, the whole command set, which dome's front
// runs for every command it does not answer itself; dome-openai, the
// OpenAI SDK; dome-otel, the OpenTelemetry SDK. Find looks in $DOME_EXEC_PATH (a list of
// directories, when set), then the directory of the running executable
// (symlinks resolved: a dome linked into ~/bin still finds the helpers
// unpacked beside it), then $PATH; a helper found nowhere is an
// *errkind.InputError that names the program, where it looked and how to
// install it. The package runs nothing and prints nothing; the caller
// passes the environment.
package helperexec
