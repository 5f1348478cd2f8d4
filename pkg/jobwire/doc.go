// Package jobwire is the wire between a wave run's coordinator and the
// worker daemons on other machines (dome worker --nats): the signed job
// message a coordinator publishes on a NATS JetStream work queue (format
// dome.dispatch.job/v1: the attempt's ids, command, environment, limits,
// grant and SpawnSpec, signed with the coordinator's Ed25519 key over the
// job's RFC 8785 canonical bytes, DSSE pre-authentication encoding as in
// pkg/signing), the bodies of the gateway's dispatch endpoints (claim,
// tree, result, info), the dead-letter record a daemon publishes for a
// message it refuses, and the reason codes of every refusal.
//
// Open checks a message as a daemon must before running anything: size,
// strict JSON, the signature against the coordinator keys it trusts, the
// SpawnSpec (pkg/spawn, fail closed), the grant's signature and its
// binding to the SpawnSpec, the environment's names, and the grant's
// expiry. It prints nothing and reads no clock: time is a parameter.
package jobwire
