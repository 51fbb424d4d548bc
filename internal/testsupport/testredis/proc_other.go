//go:build !linux

package testredis

import "syscall"

// sysProcAttr has no parent-death signal outside Linux.
func sysProcAttr() *syscall.SysProcAttr { return nil }
