// Package webui is the read-only web view that dome serve --ui adds to the
// action registry API: registry pages (tools with their profiles, languages
// and releases; one tool at a commit with the operations each profile keeps;
// the breaking changes between two commits or releases; the signed actions
// with their versions, deprecations and verification state) and run pages
// (a stack run's proposals, plan with its order, rejections and graph,
// checkpoints on the integration ref, validation reports, the evidence chain
// behind a promotion, and the run's ledger), live while the run goes on
// through server-sent events fed by the ledger.
//
// Pages are rendered on the server with html/template: everything that
// comes from a spec, a profile, a proposal, a ledger or a store is data and
// is escaped as hostile; the pages carry one small embedded stylesheet and,
// on a live run page only, one small embedded script (no framework), and the
// Content-Security-Policy forbids every other script, style, frame and
// form. Every page works without JavaScript. Links are stable: a registry
// page names a full commit SHA and a run page names a ledger sequence, so a
// shared link shows what its sender saw; a branch, tag or release in a URL
// is answered with a redirect to the commit it names.
//
// The package reads through pkg/registry, pkg/release, pkg/specfilter,
// pkg/specdiff, pkg/action, pkg/stack, pkg/workflow and pkg/ledger and is
// imported by nothing but cmd/. It writes nothing: no ref, no file, no lock.
package webui
