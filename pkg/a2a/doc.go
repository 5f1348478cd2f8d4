// Package a2a reads the registry's A2A entries: agent cards
// (registry/a2a/cards/{runtime,tool}/<id>.card.json) in the A2A v1.0
// AgentCard shape (https://a2a-protocol.org/latest/specification/: name,
// description, version, an ordered supportedInterfaces list of {url,
// protocolBinding, protocolVersion}, provider, capabilities, securitySchemes,
// securityRequirements, default input and output modes, skills) with an
// "x-dome" block naming the maximum capability classes and capabilities the
// agent may ever be granted; and A2A profiles
// (registry/a2a/profiles/<id>.profile.json), the granted view for a run:
// which card and audience, which capabilities, the constraints that narrow
// the grant, the allowed spec view and the determinism seed. Every file is
// validated against its embedded JSON Schema (schemas/), strictly: duplicate
// and unknown members are refused, and every error names the file and the
// JSON pointer of the field. The top-level url, preferredTransport and
// protocolVersion members that A2A v1.0 dropped are refused with a hint. The
// package reads no files itself: callers pass bytes.
package a2a
