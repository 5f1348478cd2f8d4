// Package sandbox runs one command confined with bubblewrap (bwrap, the
// Debian package "bubblewrap"): new user, mount, pid, network, ipc, uts and
// cgroup namespaces (no network at all: only a loopback device), no nested
// user namespaces, a fresh /proc, a minimal /dev, a bounded tmpfs on /tmp,
// the host's /usr (and the /bin, /lib... that point into it) read-only, a
// scratch folder read-write at /work, and, when given, one Unix socket at
// /run/dome/gateway.sock as the only way out. Nothing else of the host is
// visible: not the repository's .git, not /etc/shadow, not a home folder.
//
// The environment is scrubbed to a fixed set plus what the caller passes.
// Resource limits are set with prlimit(2) on the sandbox's first process
// while bwrap holds it (--block-fd) after creating its user namespace and
// before the command starts, so each sandbox has its own count and the
// command inherits them: processes, address space, open files, file size
// (no core dumps). A wall-time limit, a bound on
// captured stdout and stderr and the caller's context end a run with a
// process-group kill of bwrap, whose --die-with-parent takes the whole pid
// namespace down with it. Every run ends with a reason code: ok,
// exit_nonzero, signaled, timeout, process_limit, output_limit,
// file_size_limit or cancelled.
//
// When dome runs as root the sandbox runs as an unprivileged user (65534 by
// default): the kernel does not enforce the process limit for root, and the
// scratch tree is handed to that user. New refuses, with a hint, when bwrap is
// missing or when user namespaces do not work.
//
// The scratch tree is filled by the caller (for dome run: the base commit's
// tree materialized from git objects, without .git); after a run it holds
// whatever the worker wrote, symlinks to anywhere included, so it must be
// read as hostile input. The package prints nothing and reads no environment
// variables except through exec.LookPath when Options.Bwrap is empty.
package sandbox
