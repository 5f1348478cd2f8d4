//go:build !unix

package readlimit

const syscallNonblock = 0
