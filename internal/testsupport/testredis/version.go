package testredis

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// OlderVersion starts a loopback TCP relay in front of s that rewrites the version a HELLO
// answer carries (and an INFO answer's redis_version line) to an older one of the same length,
// "6." followed by nines, leaving every other byte as s sent it: the real server and wire
// protocol, as a Redis older than 7.0 would announce itself. It returns the relay's address and
// the version it announces. The relay and its connections close at the end of the test.
func (s *Server) OlderVersion(tb testing.TB) (addr, version string) {
	tb.Helper()
	info, err := s.Do("INFO", "server")
	if err != nil {
		tb.Fatalf("testredis: INFO: %v", err)
	}
	var have string
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			have = v
		}
	}
	if len(have) < 3 {
		tb.Fatalf("testredis: INFO names no usable redis_version: %q", have)
	}
	version = "6." + strings.Repeat("9", len(have)-2)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	closed := false
	tb.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		closed = true
		for _, c := range conns {
			c.Close() // ends its relayOlder, which closes the server side
		}
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if closed {
				mu.Unlock()
				c.Close()
				return
			}
			conns = append(conns, c)
			mu.Unlock()
			go relayOlder(c, s.Addr(), []byte(have), []byte(version))
		}
	}()
	return l.Addr().String(), version
}

// relayOlder relays one client connection to the server at addr, replacing the version have
// with older where the server's answer names its version.
func relayOlder(c net.Conn, addr string, have, older []byte) {
	defer c.Close()
	up, err := net.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer up.Close()
	go func() {
		_, _ = io.Copy(up, c)
		up.Close()
	}()
	// RESP answers are made of lines ending in CRLF (a bulk string's content too), so the relay
	// reads the server line by line: a HELLO answer's "version" name is followed by the bulk
	// length of its value and the value, an INFO answer holds "redis_version:<version>".
	r := bufio.NewReader(up)
	afterName := 0 // lines since a "version" bulk name
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			body := bytes.TrimSuffix(line, []byte("\r\n"))
			switch {
			case afterName == 2 && bytes.Equal(body, have):
				line = append(append([]byte{}, older...), "\r\n"...)
			case bytes.HasPrefix(body, []byte("redis_version:")):
				line = bytes.Replace(line, have, older, 1)
			}
			afterName++
			if bytes.Equal(body, []byte("version")) {
				afterName = 1
			}
			if _, werr := c.Write(line); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
