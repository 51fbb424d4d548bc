//go:build unix

package testredis

import "syscall"

// Job-control signals behind Pause and Resume.
const (
	sigStop = syscall.SIGSTOP
	sigCont = syscall.SIGCONT
)
