# syntax=docker/dockerfile:1
# dome serve (the action registry HTTP API) in a container: a static binary
# built with the same flags as make build, on a distroless base, as a non-root
# user. compose.yaml runs it with PostgreSQL; docs/deploy.md explains both.
#
#   docker build --build-arg VERSION=$(git describe --tags --always) \
#                --build-arg COMMIT=$(git rev-parse HEAD) -t dome .
#   docker run --rm dome version

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
# Modules first, so that a source change does not download them again.
# go.work (and third_party/) are part of the build: the start-up patch of
# santhosh-tekuri/jsonschema is replaced in there.
COPY go.mod go.sum go.work go.work.sum ./
COPY third_party/ third_party/
# GOWORK=off: in workspace mode go mod download fetches the whole module
# graph, SDKs of other clouds that dependencies only require for packages dome
# never builds (openai-go's bedrock and azure); by go.mod it fetches what the
# main module's packages need. The build below uses go.work again.
RUN GOWORK=off go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=
# dome (the front) and dome-full (the whole command set, which dome runs
# from its own folder for every command but --version, version and
# registry cat).
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false -tags urfave_cli_no_docs \
      -ldflags "-s -w -X github.com/dome-registry/dome/internal/buildinfo.Version=${VERSION} -X github.com/dome-registry/dome/internal/buildinfo.Commit=${COMMIT}" \
      -o /out/dome ./cmd/dome \
 && CGO_ENABLED=0 go build -trimpath -buildvcs=false -tags urfave_cli_no_docs \
      -ldflags "-s -w -X github.com/dome-registry/dome/internal/buildinfo.Version=${VERSION} -X github.com/dome-registry/dome/internal/buildinfo.Commit=${COMMIT}" \
      -o /out/dome-full ./cmd/dome-full \
 && /out/dome version && /out/dome-full version

# static-debian12: CA certificates and tzdata, no shell, no package manager;
# :nonroot runs as uid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/dome /out/dome-full /usr/local/bin/
USER 65532:65532
ENV DOME_SERVE_ADDR=0.0.0.0:8080
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["/usr/local/bin/dome", "serve", "probe"]
ENTRYPOINT ["/usr/local/bin/dome"]
CMD ["serve", "--store", "postgres"]
