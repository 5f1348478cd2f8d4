//go:build !linux

package pgtest

import "syscall"

// procAttr runs a server binary as cred (nil: as ourselves).
func procAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred}
}
