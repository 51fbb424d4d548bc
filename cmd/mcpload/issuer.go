package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
)

// runIssuer serves the development token issuer on loopback for benchmarks of the
// authenticated gateway, writes its URL and a bearer token to files, and runs until ctx ends or
// -max-lifetime passes.
func runIssuer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("issuer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	audience := fs.String("audience", "", "token audience: the gateway's public URL (required)")
	scope := fs.String("scope", "bench:call", "scopes of the minted token")
	urlFile := fs.String("url-file", "", "write the issuer URL to this file")
	tokenFile := fs.String("token-file", "", "write a bearer token to this file (required)")
	life := fs.Duration("max-lifetime", time.Hour, "stop after this long")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if *audience == "" || *tokenFile == "" {
		fmt.Fprintln(stderr, "mcpload issuer: -audience and -token-file are required")
		return errUsage
	}
	iss, err := devissuer.New(devissuer.Options{Audience: *audience, TTL: *life + time.Minute})
	if err != nil {
		return err
	}
	defer iss.Close()
	tok, err := iss.Mint(devissuer.Claims{"sub": "bench", "scope": *scope})
	if err != nil {
		return err
	}
	if err := os.WriteFile(*tokenFile, []byte(tok), 0o600); err != nil {
		return err
	}
	if *urlFile != "" {
		if err := os.WriteFile(*urlFile, []byte(iss.URL()), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintln(stdout, iss.URL())
	ctx, cancel := context.WithTimeout(ctx, *life)
	defer cancel()
	<-ctx.Done()
	return nil
}
