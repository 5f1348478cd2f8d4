// Package pgtest runs throwaway PostgreSQL servers for tests: it finds the
// server binaries (DOME_PG_BIN, then initdb on PATH, then
// /usr/lib/postgresql/<major>/bin, newest first), runs initdb into a new
// temporary directory, starts postgres on a free loopback port with its socket
// directory inside that temporary directory, hands each test a database of its
// own (dropped in t.Cleanup) and removes the whole cluster when the test binary
// ends. initdb refuses to run as root, so under uid 0 the server runs as the
// "postgres" system user (the Debian package creates it), or "nobody" when
// that user is missing, with the directory chowned to it.
//
// One cluster is shared by every test of a test binary whose TestMain calls
// Main; it is started on first use, so a binary whose PostgreSQL tests are
// filtered out never pays for initdb. Without Main each test that asks for a
// database gets a cluster of its own.
//
// Without server binaries the tests skip with a loud message, except in CI
// (CI=true) where they fail: CI installs PostgreSQL (.ci/run), so a missing
// server there is a broken set-up, not a reason to pass. DOME_PGTEST_URL
// (an admin connection URL, e.g. postgres://postgres:pw@db:5432/postgres)
// makes the helpers create their databases on that server instead.
//
// The shared cluster is the one piece of package-level state in dome: a test
// binary is one process and the cluster is its fixture, made once.
package pgtest
