package main

import "syscall"

// sandboxCred runs the bare bwrap as the sandbox user, as sandbox.Run does
// when dome runs as root, so the floor pays for the same user namespace.
func sandboxCred() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
}
