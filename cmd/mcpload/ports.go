package main

import (
	"flag"
	"fmt"
	"io"
	"net"
)

const maxPorts = 64

// runPorts is `mcpload ports`: print n loopback TCP ports that were free a moment ago, for
// processes that must be told their port up front.
func runPorts(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ports", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 1, "how many ports")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *n < 1 || *n > maxPorts {
		return fmt.Errorf("n %d must be in [1, %d]", *n, maxPorts)
	}
	lns := make([]net.Listener, 0, *n)
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for range *n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		lns = append(lns, ln)
		fmt.Fprintln(stdout, ln.Addr().(*net.TCPAddr).Port)
	}
	return nil
}
