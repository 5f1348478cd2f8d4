# dome: make help lists every target.
GO        ?= go
# urfave_cli_no_docs drops urfave/cli's man-page generator (and its markdown
# parser) from the binary: less to load and initialize on every start.
TAGS      ?= urfave_cli_no_docs
BIN       ?= bin/dome
FUZZTIME  ?= 30s
TESTFLAGS ?=
# TESTJSON=FILE: make test also keeps the go test -json output in FILE,
# headed by the commit (what dome trace check --results reads).
TESTJSON  ?=
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null)
# bin/dome is dome's front: it runs dome --version, dome version and a
# local dome registry cat itself and hands every other command to
# bin/dome-full, the whole command set, built beside it. The helper programs
# dome runs when their integration is used (they keep the OpenAI and
# OpenTelemetry SDKs out of dome-full's start-up) are built beside both; one
# set of -X flags serves all four (the linker ignores the others').
HELPERS   := dome-full dome-openai dome-otel
LDFLAGS   := -s -w -X github.com/dome-registry/dome/internal/buildinfo.Version=$(VERSION) \
             -X github.com/dome-registry/dome/internal/buildinfo.Commit=$(COMMIT) \
             -X github.com/dome-registry/dome/internal/domeopenai.Version=$(VERSION) \
             -X github.com/dome-registry/dome/internal/domeotel.Version=$(VERSION)

.PHONY: help build demo test bench fleet fuzz lint docs install-check release-check vendor-check conformance contract clean

help: ## list the targets
	@awk 'BEGIN{FS=":.*## "} /^[a-z][a-z-]*:.*## /{printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## build bin/dome (the front), bin/dome-full (the whole command set) and the helper programs bin/dome-openai and bin/dome-otel
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/dome
	@for h in $(HELPERS); do echo "CGO_ENABLED=0 $(GO) build ... -o $(dir $(BIN))$$h ./cmd/$$h"; \
	  CGO_ENABLED=0 $(GO) build -trimpath -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(dir $(BIN))$$h ./cmd/$$h || exit 1; done

demo: build ## run the main job on the example registry in this repo
	./scripts/demo.sh $(BIN)

test: ## run every test (unit, CLI scripts, conformance short form); TESTJSON=FILE keeps go test -json output
ifeq ($(strip $(TESTJSON)),)
	$(GO) test -count=1 -timeout 20m $(TESTFLAGS) ./...
else
	GO=$(GO) ./scripts/testjson.sh $(TESTJSON) -count=1 -timeout 20m $(TESTFLAGS) ./...
endif

conformance: ## patch engine vs git (trees, patch ids, git am commit ids, --3way onto grandparents; xdiff's diffs and merges of each changed file): 600 simulated commits (DOME_CONFORMANCE_COMMITS), plus DOME_CONFORMANCE_REPO=path if set
	DOME_CONFORMANCE_COMMITS=$${DOME_CONFORMANCE_COMMITS:-600} $(GO) test -count=1 -timeout 30m -run 'Conformance' -v ./pkg/patch/ ./internal/xdiff/

contract: build ## contract tests of every example tool x profile and the skill contracts (go, ts, python); tsc from npm ci --prefix contract-tests/ts
	@for t in petstore ticketing inventory action-registry; do for p in default readonly highrisk; do \
	  echo "== $$t $$p"; ./$(BIN) contract-test $$t@HEAD --profile $$p || exit 1; done; done
	@for t in repo-read patch-proposal repo-admin; do \
	  echo "== $$t default"; ./$(BIN) contract-test $$t@HEAD --profile default || exit 1; done

vendor-check: ## prove internal/oapicodegen is upstream oapi-codegen + dome.patch and internal/yamlevent upstream yaml.v3 (needs the Go module proxy)
	./scripts/vendor-oapi-codegen.sh --check
	./scripts/vendor-yaml-events.sh --check

bench: build ## compare dome with its peers side by side (see bench/)
	./scripts/bench.sh $(BIN)

fleet: build ## the fleet simulation: embedded NATS, 8 worker daemons, a 1,000-node graph, two daemons killed mid-run; checks the tree and the ledger
	FLEET_MODE=check ./bench/fleet/run.sh

fuzz: ## run every fuzz target for FUZZTIME each
	./scripts/fuzz.sh $(FUZZTIME)

docs: ## regenerate the command reference (docs/reference/, docs/man/) from the CLI definitions
	$(GO) run ./cmd/dome/internal/docgen

install-check: ## prove go install github.com/dome-registry/dome/cmd/{dome,dome-full,dome-openai,dome-otel}@VERSION works (a local module proxy, a clean GOPATH)
	./scripts/go-install-check.sh

release-check: ## goreleaser check, and two snapshot builds that must be byte-identical (builds goreleaser once)
	./scripts/release-check.sh

lint: ## gofmt and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean: ## remove build output
	rm -rf bin
