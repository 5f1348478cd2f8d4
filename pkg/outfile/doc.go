// Package outfile writes the files a user names as outputs (--out, -o,
// --lock, and dome's own state files) without ever destroying what the name
// stands for. A regular file or an absent name is written atomically: a
// temporary file in the same folder, fsync, rename over the name, fsync of
// the folder, so a reader sees the old bytes or the new ones and a crash
// leaves no half-written file. A character device or a FIFO (/dev/null,
// /dev/stdout, a named pipe) is opened and written in place: a rename would
// replace the device node with a regular file, and run as root, as in most
// CI containers, "--out /dev/null" would break the machine's /dev/null for
// every other process. A symlink is followed and the same rules apply to
// what it points to (a dangling link is refused, not created through).
// Directories, block devices and sockets are refused. Missing folders above
// a new file are created only when the caller asks (Options.MakeDirs), and
// Write lists them so the caller can say so: never silently.
package outfile
