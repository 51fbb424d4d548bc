//go:build !linux

package main

import "syscall"

// demoProcAttr: only Linux can tie the demo's life to the test binary's.
func demoProcAttr() *syscall.SysProcAttr { return nil }
