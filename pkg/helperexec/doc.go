// Package helperexec finds dome's helper programs: the integrations that
// would make every dome command slower to start if dome linked them
// (dome-openai, the OpenAI SDK; dome-otel, the OpenTelemetry SDK) are
// separate programs, installed beside dome and run only when used, as git
// runs git-remote-https. Find looks in $DOME_EXEC_PATH (a list of
// directories, when set), then the directory of the running executable
// (symlinks resolved: a dome linked into ~/bin still finds the helpers
// unpacked beside it), then $PATH; a helper found nowhere is an
// *errkind.InputError that names the program, where it looked and how to
// install it. The package runs nothing and prints nothing; the caller
// passes the environment.
package helperexec
