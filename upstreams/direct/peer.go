//go:build linux || darwin || freebsd || netbsd || openbsd

package direct

import (
	"net"
	"syscall"
)

// peerClosed reports whether the backend closed c or sent bytes nobody asked for, without
// waiting and without consuming anything: a non-blocking MSG_PEEK of one byte. A read with an
// expired deadline cannot tell, since it fails before reaching the socket.
func peerClosed(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	var one [1]byte
	var rerr error
	if err := raw.Read(func(fd uintptr) bool {
		_, _, rerr = syscall.Recvfrom(int(fd), one[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true // never wait: the answer is wanted now
	}); err != nil {
		return true
	}
	if rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK {
		return false // open and quiet
	}
	return true // a byte (unasked), zero bytes (closed), or any other error (unusable)
}
