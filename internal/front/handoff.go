package front

import (
	"fmt"
	"os"

	"github.com/dome-registry/dome/internal/buildinfo"
	"github.com/dome-registry/dome/internal/readcmd"
	"github.com/dome-registry/dome/pkg/errkind"
	"github.com/dome-registry/dome/pkg/helperexec"
)

// HandOff runs the full command set, found where dome finds its helper
// programs (pkg/helperexec: $DOME_EXEC_PATH, beside the running dome,
// $PATH), with args, by replacing this process (same process id, signals,
// standard streams and exit code; nothing of the front stays behind). dome
// runs on Unix only (docs/deploy.md: no Windows build), so exec is always
// there.
func HandOff(args []string) int {
	if os.Getenv(EnvHandedOff) != "" {
		exe, _ := os.Executable()
		readcmd.PrintError(os.Stderr, &errkind.InputError{Source: FullProgram,
			Problem: fmt.Sprintf("%s was run as %s: it is dome's front, which hands commands to %s", exe, FullProgram, FullProgram),
			Hint:    buildinfo.InstallHint(FullProgram)}, false)
		return readcmd.ExitUsage
	}
	path, err := helperexec.Find(FullProgram, os.Getenv, buildinfo.InstallHint)
	if err != nil {
		readcmd.PrintError(os.Stderr, err, false)
		return readcmd.ExitCode(err)
	}
	// The full command set sees its own path as its name (ps shows what
	// runs); it prints "dome" wherever it names itself.
	argv := append([]string{path}, args[1:]...)
	return handOff(path, argv, append(os.Environ(), EnvHandedOff+"=1"))
}
