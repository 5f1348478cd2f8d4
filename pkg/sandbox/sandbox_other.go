//go:build !linux

package sandbox

import (
	"context"
	"runtime"
)

// Options configure a Sandbox (bubblewrap runs only on Linux).
type Options struct {
	Bwrap, ScratchParent string
	UID, GID             int
	ReadOnly             []string
	Prlimit              string
}

// Sandbox is not available outside Linux.
type Sandbox struct{}

// Scratch is not available outside Linux.
type Scratch struct{}

// New refuses: bubblewrap needs Linux namespaces.
func New(context.Context, Options) (*Sandbox, error) {
	return nil, &UnavailableError{Code: "unsupported_os", Detail: "bubblewrap needs Linux; this is " + runtime.GOOS,
		Hint: "run workers on Linux, or unconfined with dome run start --sandbox=none (the run manifest records it)"}
}

func (s *Sandbox) Version() string                                 { return "" }
func (s *Sandbox) LimitsBy() string                                { return "" }
func (s *Sandbox) User() (int, int)                                { return -1, -1 }
func (s *Sandbox) NewScratch(func(string) error) (*Scratch, error) { return nil, ErrUnavailable }
func (s *Sandbox) NewScratchIn(string, func(string) error) (*Scratch, error) {
	return nil, ErrUnavailable
}
func (s *Sandbox) Run(context.Context, Spec) (Result, error) { return Result{}, ErrUnavailable }
func (sc *Scratch) Dir() string                              { return "" }
func (sc *Scratch) SocketPath() string                       { return "" }
func (sc *Scratch) OutputsDir() string                       { return "" }
func (s *Sandbox) Unconfined() bool                          { return false }
func (s *Sandbox) CheckBind(string) error                    { return ErrUnavailable }

// NewUnconfined refuses outside Linux too.
func NewUnconfined(Options) (*Sandbox, error) { return nil, ErrUnavailable }
func (sc *Scratch) Close() error              { return nil }
