// Package gitsign signs and verifies annotated tags with OpenPGP the way git
// does (gitformat-signature: an armored detached signature over the tag
// object without its signature, appended to the tag's message). It reads
// private keys for `dome release --sign-key` and checks a release tag's
// signature against an armored public keyring for `dome release verify` and
// the web view. It is a package of its own because the OpenPGP library
// (ProtonMail go-crypto, with its ciphers) costs every process that links it
// start-up time, and reading a registry needs none of it. It never runs gpg.
package gitsign
