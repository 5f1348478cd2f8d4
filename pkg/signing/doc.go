// Package signing owns dome's signatures: Ed25519 keys (private keys as
// PKCS#8 PEM, public keys as PKIX PEM or the "base64:<raw 32 bytes>" form of
// trusted key entries), trusted key sets of {kid, alg, public_key} entries,
// and signature blocks {alg, kid, sig} over canonical payloads, kept detached
// (a signature file) or embedded in the signed JSON object beside a "hash"
// member, as the action registry stores schemas. A signature covers the DSSE
// pre-authentication encoding
// (https://github.com/secure-systems-lab/dsse/blob/master/protocol.md) of the
// payload type, which names the artifact kind, and the "sha256:<hex>" digest
// of the RFC 8785 canonical payload (package canonical), so a signature made
// for one kind never verifies as another. It refuses unknown key ids
// (ErrUnknownKeyID), algorithm mismatches and malformed or failing signatures
// (ErrBadSignature), and any key set that lists a kid or a public key twice;
// it reads no files and no environment (callers pass the bytes) and supports
// no algorithm but Ed25519 (RFC 8032).
package signing
