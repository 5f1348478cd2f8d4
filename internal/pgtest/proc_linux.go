package pgtest

import "syscall"

// procAttr runs a server binary as cred (nil: as ourselves) and has the kernel
// stop it if the test binary dies without Close (a timeout, a kill -9), so no
// postgres outlives its tests. SIGQUIT is PostgreSQL's immediate shutdown.
func procAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT}
}
