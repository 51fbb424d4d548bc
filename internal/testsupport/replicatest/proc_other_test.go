//go:build !linux

package replicatest

import "syscall"

// sysProcAttr has no parent-death signal outside Linux.
func sysProcAttr() *syscall.SysProcAttr { return nil }
