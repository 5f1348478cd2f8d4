// Package trace makes requirement traceability executable: it reads the
// requirements catalogue (doc/graph/reviewpack_requirements.json, validated
// against the JSON Schema in schemas/), indexes the checks a repository has
// (Go tests found by parsing its _test.go files, testscript stories,
// JSON Schemas by $id), reads the output of "go test -json" headed by the
// commit the tests ran at, and reports every gap: a required, implemented
// requirement without a check, a check that did not run or did not pass, a
// deprecated path in the pages users read. It also builds the requirement to
// check to result matrix with a status summary per source document.
//
// It refuses a catalogue with duplicate ids, unknown source documents or
// checks that name tests, scripts or schemas the repository does not have,
// and a results file with a malformed line, no header or another commit's
// header, as input errors naming the file, the line and the field. It reads
// through an fs.FS the caller opens, runs nothing and prints nothing.
package trace
