// Package webpage is what the gateway's own web pages share: the approval page
// (internal/approval) and the connect page of per-user OAuth (internal/useroauth). The
// OpenID Connect sign-in of their users (authorization code flow with PKCE, state and nonce,
// the issuer discovered once and spared while it is down), the sealed session and page cookies
// any replica opens, the CSRF tokens bound to a session, the security headers and the check
// that a POST came from the pages' own origin, the rendering of names and text a backend or a
// client chose with invisible, direction-changing and look-alike characters made visible, and
// the one style sheet.
package webpage
