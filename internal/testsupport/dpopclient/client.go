// Package dpopclient makes DPoP keys and proofs (RFC 9449) for the gateway's tests with an
// independent implementation: panva's dpop library for JavaScript (2.1.2, pinned with
// node/package-lock.json and installed by .ci/setup into the cache), run by node/proof.mjs under
// the cached Node 22. The gateway verifies proofs with go-jose; proofs it accepts in the tests
// are made by other code than its own.
//
// Proofs with a defect the library will not make (another typ, alg none or HS256, a private key
// in the jwk, a claim left out, a broken signature) are forged in Go with the same key (Forge),
// so that exactly one thing is wrong with each.
//
// A missing Node or library fails the test rather than skipping it.
package dpopclient

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/nodecache"
)

// Version is the panva dpop release node/package-lock.json pins.
const Version = "2.1.2"

// What the client runs and where .ci/setup installs it.
const (
	scriptName     = "proof.mjs"
	libCacheSubdir = "dpop-client"
	// answerTimeout bounds one answer of the Node process.
	answerTimeout = 30 * time.Second
)

// Client is a running Node process holding keys made by the library. It is safe for concurrent
// use and stops when the test ends.
type Client struct {
	mu    sync.Mutex
	in    io.WriteCloser
	out   *bufio.Scanner
	next  int
	errAt string // the process's stderr file, for a failure message
}

// Key is a key pair the library made, by its id in the Node process.
type Key struct {
	// ID names the key in the Node process.
	ID string
	// Alg is the JWS algorithm the library signs with.
	Alg string
	// JKT is the library's RFC 7638 thumbprint of the public key: a bound token's cnf.jkt.
	JKT string
	// PrivateJWK is the private key, for Forge.
	PrivateJWK json.RawMessage
}

// Proof asks for one proof.
type Proof struct {
	// Method and URL are the htm and htu.
	Method, URL string
	// AccessToken, when set, makes the library add its ath.
	AccessToken string
	// Nonce is a server nonce to carry.
	Nonce string
	// Skew moves the library's clock while it makes the proof, so its iat lies that far from
	// now.
	Skew time.Duration
}

// Start runs the Node process.
func Start(t testing.TB) *Client {
	t.Helper()
	node, lib := nodeAndLibrary(t)
	errFile, err := os.CreateTemp(t.TempDir(), "dpopclient-stderr-*")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join(packageDir(t), "node", scriptName))
	cmd.Env = append(os.Environ(), "DPOP_CLIENT_DIR="+lib)
	cmd.Stderr = errFile
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("dpopclient: starting node: %v", err)
	}
	t.Cleanup(func() {
		_ = in.Close() // the script ends at the end of its input
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = errFile.Close()
	})
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	return &Client{in: in, out: sc, errAt: errFile.Name()}
}

// call sends one request and reads its answer into v.
func (c *Client) call(t testing.TB, req map[string]any, v any) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	req["id"] = c.next
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		t.Fatalf("dpopclient: writing to node: %v%s", err, c.stderr())
	}
	line := make(chan bool, 1)
	go func() { line <- c.out.Scan() }()
	select {
	case ok := <-line:
		if !ok {
			t.Fatalf("dpopclient: node ended: %v%s", c.out.Err(), c.stderr())
		}
	case <-time.After(answerTimeout):
		t.Fatalf("dpopclient: no answer from node in %s%s", answerTimeout, c.stderr())
	}
	var res struct {
		ID    int    `json:"id"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(c.out.Bytes(), &res); err != nil || res.ID != c.next {
		t.Fatalf("dpopclient: answer %q to request %d", c.out.Text(), c.next)
	}
	if res.Error != "" {
		t.Fatalf("dpopclient: %s", res.Error)
	}
	if err := json.Unmarshal(c.out.Bytes(), v); err != nil {
		t.Fatal(err)
	}
}

func (c *Client) stderr() string {
	b, _ := os.ReadFile(c.errAt)
	if len(b) == 0 {
		return ""
	}
	return "; node's stderr:\n" + string(b)
}

// NewKey makes a key pair for alg: ES256, PS256, RS256 or Ed25519, what the library supports.
func (c *Client) NewKey(t testing.TB, alg string) Key {
	t.Helper()
	var res struct {
		Key string          `json:"key"`
		JKT string          `json:"jkt"`
		JWK json.RawMessage `json:"jwk"`
	}
	c.call(t, map[string]any{"op": "key", "alg": alg}, &res)
	return Key{ID: res.Key, Alg: alg, JKT: res.JKT, PrivateJWK: res.JWK}
}

// Proof makes a proof with k.
func (c *Client) Proof(t testing.TB, k Key, p Proof) string {
	t.Helper()
	var res struct {
		Proof string `json:"proof"`
	}
	c.call(t, map[string]any{"op": "proof", "key": k.ID, "htm": p.Method, "htu": p.URL, "nonce": p.Nonce,
		"accessToken": p.AccessToken, "skew": int64(p.Skew / time.Second)}, &res)
	if res.Proof == "" {
		t.Fatal("dpopclient: empty proof")
	}
	return res.Proof
}

// packageDir is this package's source directory, where node/ lives.
func packageDir(tb testing.TB) string {
	tb.Helper()
	return nodecache.CallerDir(tb)
}

func nodeAndLibrary(tb testing.TB) (node, lib string) {
	tb.Helper()
	return nodecache.Require(tb, "dpopclient", libCacheSubdir, "node_modules/dpop/package.json")
}
