package guardrails

import (
	"bytes"
	"encoding/base64"
)

// The secrets detectors: credentials recognised by their published formats (a prefix and a
// fixed alphabet and length, or a key name in an assignment), private key blocks, JWTs,
// passwords in connection strings, and an entropy check for the rest.

// prefixed is a credential format: a prefix, then a body of bytes of one alphabet.
type prefixed struct {
	det      Detector
	prefix   string
	min, max int // body length
	body     func(byte) bool
}

func isTokenB62(c byte) bool   { return isAlnum(c) }
func isTokenB64u(c byte) bool  { return isAlnum(c) || c == '_' || c == '-' }
func isTokenB64(c byte) bool   { return isAlnum(c) || c == '+' || c == '/' }
func isTokenB32(c byte) bool   { return isUpper(c) || (c >= '2' && c <= '7') }
func isTokenGHPat(c byte) bool { return isAlnum(c) || c == '_' }
func isTokenDot(c byte) bool   { return isTokenB64u(c) || c == '.' }

// lowerFormats are the formats whose prefix starts with a lower-case letter, longest prefix
// first where one is a prefix of another (sk-ant- before sk-).
var lowerFormats = []prefixed{
	// GitHub: personal, OAuth, user-to-server, server-to-server and refresh tokens, and
	// fine-grained personal access tokens (github.blog, "Behind GitHub's new authentication
	// token formats").
	{DetGitHubToken, "ghp_", 36, 255, isTokenB62},
	{DetGitHubToken, "gho_", 36, 255, isTokenB62},
	{DetGitHubToken, "ghu_", 36, 255, isTokenB62},
	{DetGitHubToken, "ghs_", 36, 255, isTokenB62},
	{DetGitHubToken, "ghr_", 36, 255, isTokenB62},
	{DetGitHubToken, "github_pat_", 70, 255, isTokenGHPat},
	// GitLab personal, deploy, runner and pipeline-trigger tokens.
	{DetGitLabToken, "glpat-", 20, 255, isTokenDot},
	{DetGitLabToken, "gldt-", 20, 255, isTokenB64u},
	{DetGitLabToken, "glrt-", 20, 255, isTokenB64u},
	{DetGitLabToken, "glptt-", 20, 255, isTokenB64u},
	// Slack bot, user, app-level, configuration and refresh tokens.
	{DetSlackToken, "xoxb-", 10, 255, isTokenB64u},
	{DetSlackToken, "xoxp-", 10, 255, isTokenB64u},
	{DetSlackToken, "xoxa-", 10, 255, isTokenB64u},
	{DetSlackToken, "xoxo-", 10, 255, isTokenB64u},
	{DetSlackToken, "xoxs-", 10, 255, isTokenB64u},
	{DetSlackToken, "xoxr-", 10, 255, isTokenB64u},
	{DetSlackToken, "xoxe.xox", 10, 255, isTokenB64u},
	{DetSlackToken, "xapp-", 10, 255, isTokenB64u},
	// Stripe secret and restricted keys, live and test, and webhook signing secrets.
	{DetStripeKey, "sk_live_", 20, 255, isTokenB62},
	{DetStripeKey, "rk_live_", 20, 255, isTokenB62},
	{DetStripeKey, "sk_test_", 20, 255, isTokenB62},
	{DetStripeKey, "rk_test_", 20, 255, isTokenB62},
	{DetStripeKey, "whsec_", 24, 255, isTokenB62},
	// Anthropic API and admin keys, before OpenAI's sk-.
	{DetAnthropicKey, "sk-ant-", 32, 255, isTokenB64u},
	// OpenAI project, service-account and admin keys, then the legacy form.
	{DetOpenAIKey, "sk-proj-", 20, 255, isTokenB64u},
	{DetOpenAIKey, "sk-svcacct-", 20, 255, isTokenB64u},
	{DetOpenAIKey, "sk-admin-", 20, 255, isTokenB64u},
	{DetOpenAIKey, "sk-", 48, 48, isTokenB62},
	// Google OAuth 2.0 access tokens.
	{DetGCPOAuthToken, "ya29.", 20, 2048, isTokenDot},
}

// upperFormats are the formats whose prefix starts with an upper-case letter.
var upperFormats = []prefixed{
	// AWS access key ids of long-term and temporary credentials (AKIA, ASIA) and their older
	// forms: 16 base32 characters after the prefix.
	{DetAWSAccessKey, "AKIA", 16, 16, isTokenB32},
	{DetAWSAccessKey, "ASIA", 16, 16, isTokenB32},
	{DetAWSAccessKey, "ABIA", 16, 16, isTokenB32},
	{DetAWSAccessKey, "ACCA", 16, 16, isTokenB32},
	// Google API keys.
	{DetGCPAPIKey, "AIza", 35, 35, isTokenB64u},
	// A PEM private key block in base64, as a Kubernetes Secret's data, a CI variable or a
	// .env file holds it: "LS0tLS1CRUdJTi" is "-----BEGIN " encoded, and what follows must
	// decode to a private key's BEGIN line (pemKeyB64). A run longer than a match is a key
	// all the same, matched as far as a match goes.
	{DetPrivateKey, "LS0tLS1CRUdJTi", 40, maxMatch, isTokenB64},
}

// lowerSecret matches the formats of lowerFormats and JWTs at the token t[i:j]; it returns the
// end of a match, or i.
func (s *textScan) lowerSecret(i, j int) int {
	if e := s.prefixedAt(lowerFormats, i); e > i {
		return e
	}
	if s.on.has(DetJWT) && hasPrefix(s.t, i, "eyJ") {
		return s.jwt(i, j)
	}
	return i
}

// upperSecret matches the formats of upperFormats at t[i:j].
func (s *textScan) upperSecret(i, j int) int { return s.prefixedAt(upperFormats, i) }

func (s *textScan) prefixedAt(formats []prefixed, i int) int {
	t := s.t
	for k := range formats {
		f := &formats[k]
		if !s.on.has(f.det) || !hasPrefix(t, i, f.prefix) {
			continue
		}
		b := i + len(f.prefix)
		e := run(t, b, f.max+1, f.body)
		if f.det == DetPrivateKey {
			if e = min(e, b+f.max); !pemKeyB64(t[i:e]) {
				continue
			}
		} else if e-b < f.min || e-b > f.max || !boundary(t, e) {
			continue
		}
		if f.det == DetOpenAIKey && f.prefix == "sk-" && !mixedCase(t[b:e]) {
			continue // 48 characters of one case are not a legacy OpenAI key
		}
		s.found(f.det, i, e)
		return e
	}
	return i
}

// mixedCase reports whether b holds upper- and lower-case letters and digits.
func mixedCase(b []byte) bool {
	var u, l, d bool
	for _, c := range b {
		u, l, d = u || isUpper(c), l || isLower(c), d || isDigit(c)
	}
	return u && l && d
}

// jwt matches a JSON Web Token at t[i:]: a base64url header and payload that both encode a JSON
// object ("eyJ" is the encoding of `{"`), and a signature that may be empty (alg none). A
// payload longer than a match may be is a token all the same (the claims of many groups): the
// match runs to the token's end as far as the text goes (in a window of an escaped string, at
// least maxMatch bytes of it), as a private key's does.
func (s *textScan) jwt(i, j int) int {
	t := s.t
	h := run(t, i, maxMatch, isTokenB64u)
	if h-i < 10 || h >= len(t) || t[h] != '.' || !hasPrefix(t, h+1, "eyJ") {
		return i
	}
	p := run(t, h+1, len(t), isTokenB64u)
	long := p-h-1 >= maxMatch
	if !long && (p-h-1 < 10 || p >= len(t) || t[p] != '.') {
		return i
	}
	e := p
	if p < len(t) && t[p] == '.' {
		e = run(t, p+1, len(t), isTokenB64u)
	}
	s.found(DetJWT, i, e)
	return e
}

// Azure client secrets (Entra ID application passwords): three characters, a digit, "Q~", then
// 31 to 34 more, all of [A-Za-z0-9_~.-].
func isAzureSecretChar(c byte) bool { return isTokenB64u(c) || c == '~' || c == '.' }

// azureClientSecret matches one at the token t[i:j].
func (s *textScan) azureClientSecret(i, j int) bool {
	t := s.t
	if j-i < 37 || !isDigit(t[i+3]) || t[i+4] != 'Q' || t[i+5] != '~' {
		return false
	}
	e := run(t, i, 41, isAzureSecretChar)
	if n := e - i - 6; n < 31 || n > 34 || !boundary(t, e) {
		return false
	}
	s.found(DetAzureClientSecret, i, e)
	return true
}

// privateKey matches a PEM private key block at t[i:]: "-----BEGIN … PRIVATE KEY-----" through
// its END line, or, when the END line is not within maxMatch, everything up to there (a key
// is never partly shown).
func (s *textScan) privateKey(i int) int {
	t := s.t
	if !hasPrefix(t, i, "-----BEGIN ") {
		return i
	}
	head := i + len("-----BEGIN ")
	label := run(t, head, 64, func(c byte) bool { return isUpper(c) || c == ' ' || isDigit(c) })
	if !hasPrefix(t, label, "-----") || !containsString(t[head:label], "PRIVATE KEY") {
		return i
	}
	limit := min(len(t), i+maxMatch)
	end := limit
	if k := indexString(t[label+5:limit], "-----END "); k >= 0 {
		e := label + 5 + k + len("-----END ")
		e = run(t, e, 64, func(c byte) bool { return isUpper(c) || c == ' ' || isDigit(c) })
		if hasPrefix(t, e, "-----") {
			end = e + 5
		}
	}
	s.found(DetPrivateKey, i, end)
	return end
}

// pemKeyB64 reports whether the base64 run b decodes to the BEGIN line of a PEM private key
// block, as privateKey reads one: "-----BEGIN ", a label of at most 64 upper-case letters,
// digits and spaces that holds "PRIVATE KEY", and "-----". A certificate or a public key in
// base64 is no secret.
func pemKeyB64(b []byte) bool {
	const line = len("-----BEGIN ") + 64 + len("-----")
	var dec [line + 3]byte
	n := min(len(b), (line+2)/3*4) / 4 * 4
	m, err := base64.StdEncoding.Decode(dec[:], b[:n])
	if err != nil {
		return false
	}
	d := dec[:m]
	head := len("-----BEGIN ")
	label := run(d, head, 64, func(c byte) bool { return isUpper(c) || c == ' ' || isDigit(c) })
	return hasPrefix(d, label, "-----") && containsString(d[head:label], "PRIVATE KEY")
}

// Assignments: a secret recognised by the name it is given ("Password=…;", "AccountKey=…",
// "aws_secret_access_key = …", `"password": "…"`), at the ':' or '=' at t[i].

// assignment matches the value assigned at t[i] when its key names a secret.
func (s *textScan) assignment(i int) {
	t := s.t
	k := i - 1
	for k >= 0 && i-k <= 2 && t[k] == ' ' {
		k--
	}
	if k >= 0 && (t[k] == '"' || t[k] == '\'') {
		k--
	}
	ke := k + 1
	if !secretKeyEnd(t, ke) {
		return
	}
	for k >= 0 && ke-k <= 40 && (isAlnum(t[k]) || t[k] == '_' || t[k] == '-' || t[k] == '.') {
		k--
	}
	det, ok := assignedSecret(t[k+1:ke], t[i])
	if !ok || !s.on.has(det) {
		return
	}
	vs := i + 1
	for vs < len(t) && vs-i <= 2 && t[vs] == ' ' {
		vs++
	}
	quote := byte(0)
	if vs < len(t) && (t[vs] == '"' || t[vs] == '\'') {
		quote = t[vs]
		vs++
	}
	ve := vs
	for ve < len(t) && ve-vs < 512 && valueByte(t[ve], quote) {
		ve++
	}
	if plausibleValue(det, t[vs:ve]) && (quote != 0 || !codeValue(t[vs:ve])) && !workingDir(t[k+1:ke], t[vs:ve]) {
		s.found(det, vs, ve)
	}
}

// workingDir reports whether the value of a key named like a password is a directory: the
// shell's PWD and OLDPWD (env, printenv and declare -x print them), which share the
// abbreviation with MYSQL_PWD and ADO's Pwd=, hold an absolute path, which no password is.
func workingDir(key, v []byte) bool {
	n := len(key)
	return n >= 3 && eqFold(key[n-3:], "pwd") && len(v) > 0 && (v[0] == '/' || v[0] == '~')
}

// codeValue reports whether the unquoted value v is code that reads a secret rather than a
// literal one: a call or an index ("rs.Password(", "os.Getenv(", "os.environ["; the value ends
// at the argument's quote or parenthesis), a field or variable whose name names a password
// ("cfg.DB.Password", "process.env.DB_PASSWORD", "dbPassword"). A value in quotes is a literal
// however it reads, and so is any other unquoted value.
func codeValue(v []byte) bool {
	parts := 0
	for k := 0; k < len(v); parts++ {
		e := k
		for e < len(v) && (isAlnum(v[e]) || v[e] == '_' || v[e] == '$') {
			e++
		}
		if e == k || isDigit(v[k]) {
			return false // not an identifier
		}
		switch {
		case e == len(v):
			return passwordName(v[k:e]) && (parts > 0 || !oneWord(v[k:e]))
		case (v[e] == '(' || v[e] == '[') && e+1 == len(v):
			return true
		case v[e] != '.':
			return false
		}
		k = e + 1
	}
	return false
}

// passwordName reports whether the identifier name names a password ("Password", "DB_PASSWORD",
// "dbPasswd").
func passwordName(name []byte) bool {
	if len(name) > 40 {
		return false
	}
	det, named := assignedSecret(name, ':')
	return named && det == DetConnectionString
}

// oneWord reports whether name is the word password alone: as a bare value, a placeholder
// (placeholder) rather than a variable, and "Passw0rd" is a literal; a name that joins it to
// another ("dbPassword", "DB_PASSWORD") reads as a variable.
func oneWord(name []byte) bool {
	return eqFold(name, "password") || eqFold(name, "passwd") || eqFold(name, "pwd")
}

// secretKeyEnd reports whether the key that ends at t[ke] may name a secret, before it is read:
// every key assignedSecret knows ends, separators aside, with 'd' (password, passwd, pwd), 'y'
// (the keys) or 'g' (sig). Most colons (a time, a label) are told so from one byte.
func secretKeyEnd(t []byte, ke int) bool {
	l := ke - 1
	for l >= 0 && ke-l <= 40 && (t[l] == '_' || t[l] == '-' || t[l] == '.') {
		l--
	}
	if l < 0 {
		return false
	}
	switch lower(t[l]) {
	case 'd', 'y', 'g':
		return true
	case 's':
		return t[l] == 'S' && l >= 4 && passWord(t[l-4:l+1])
	}
	return false
}

// passWord reports whether the key ends with the word PASS, upper case, after a separator
// (DB_PASS, SMTP_PASS): a password's name in environment files. A word ending in "pass"
// (bypass, compass) is not, nor is a lower-case one (first_pass, two-pass), which names a step.
func passWord(key []byte) bool {
	n := len(key)
	return n >= 5 && (key[n-5] == '_' || key[n-5] == '-' || key[n-5] == '.') && string(key[n-4:]) == "PASS"
}

// valueByte reports whether c continues a value (quoted by quote, 0 for none).
func valueByte(c, quote byte) bool {
	if quote != 0 {
		return c != quote && c != '\n'
	}
	switch c {
	case ' ', '\t', '\n', '\r', ';', ',', '&', '"', '\'', '}', ')', ']', '<', '>':
		return false
	}
	return true
}

// assignedSecret says which detector a key names (op is ':' or '='), if any.
func assignedSecret(key []byte, op byte) (Detector, bool) {
	var norm [40]byte
	n := 0
	for _, c := range key {
		if c == '_' || c == '-' || c == '.' {
			continue
		}
		norm[n] = lower(c)
		n++
	}
	k := string(norm[:n])
	switch {
	case hasSuffix(k, "pwd") || hasSuffix(k, "password") || hasSuffix(k, "passwd") || passWord(key):
		return DetConnectionString, true
	case k == "accountkey" || k == "sharedaccesskey":
		return DetAzureStorageKey, true
	case k == "sig" && op == '=':
		return DetAzureSASToken, true
	case k == "awssecretaccesskey" || k == "secretaccesskey" || k == "awssecretkey":
		return DetAWSSecretKey, true
	}
	return 0, false
}

func hasSuffix(s, suf string) bool { return len(s) >= len(suf) && s[len(s)-len(suf):] == suf }

// plausibleValue reports whether v looks like a real value of det's kind rather than a
// placeholder, a type name or an empty setting.
func plausibleValue(det Detector, v []byte) bool {
	switch det {
	case DetAzureStorageKey:
		return len(v) >= 40 && all(v, func(c byte) bool { return isAlnum(c) || c == '+' || c == '/' || c == '=' })
	case DetAzureSASToken:
		return len(v) >= 40 && all(v, func(c byte) bool { return isAlnum(c) || c == '%' || c == '+' || c == '/' || c == '=' })
	case DetAWSSecretKey:
		return len(v) == 40 && all(v, func(c byte) bool { return isAlnum(c) || c == '+' || c == '/' })
	}
	return len(v) >= 4 && !placeholder(v)
}

// placeholder reports whether a password value is a stand-in: masked ("****", "xxxx"), a
// template ("<password>", "${DB_PASS}", "{{pass}}", "%s"), or a word that names no password.
func placeholder(v []byte) bool {
	switch v[0] {
	case '<', '$', '{', '%', '[', '(':
		return true
	}
	if all(v, func(c byte) bool { return c == '*' || c == 'x' || c == 'X' || c == '.' }) {
		return true
	}
	var w [16]byte
	if len(v) > len(w) {
		return false
	}
	for k, c := range v {
		w[k] = lower(c)
	}
	switch string(w[:len(v)]) {
	case "null", "none", "nil", "true", "false", "undefined", "string", "required", "optional",
		"redacted", "hidden", "secret", "password", "changeme", "example", "empty":
		return true
	}
	return false
}

func all(b []byte, ok func(byte) bool) bool {
	for _, c := range b {
		if !ok(c) {
			return false
		}
	}
	return true
}

func containsString(b []byte, s string) bool { return indexString(b, s) >= 0 }

func indexString(b []byte, s string) int { return bytes.Index(b, []byte(s)) }
