//go:build !unix

package testredis

import "syscall"

// Without job-control signals Pause and Resume send signals the process
// cannot receive, and the test fails with the error from os.Process.Signal.
const (
	sigStop = syscall.Signal(-1)
	sigCont = syscall.Signal(-1)
)
