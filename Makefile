# OpenIDV — the README's two commands: `make demo` (the main job) and `make test`.
SWIFT ?= swift
export IDV_MODELS_DIR ?= $(HOME)/.cache/openidv/models

.PHONY: all bootstrap build release demo demo-pg test bench fuzz deb clean

all: build

bootstrap:
	@scripts/bootstrap

build: bootstrap
	$(SWIFT) build

release: bootstrap
	$(SWIFT) build -c release

# The main job: the end-to-end demo of all five flows (scripts/demo says what it runs).
demo: release
	@scripts/demo

# The same five flows on PostgreSQL: a throw-away cluster (scripts/pg-scratch), a database created
# for the run. With your own server: IDVD_DB=postgresql://user@host/db IDVD_DB_PASSWORD=… make demo
demo-pg: release
	@scripts/pg-scratch run scripts/demo

test: bootstrap
	@scripts/test

# Benchmarks print their figures; they never assert a time.
bench: release
	@scripts/bench

# libFuzzer targets, each for FUZZ_RUNS executions (default 1,000,000) or FUZZ_SECONDS (default 900);
# scripts/fuzz says what each target fuzzes and where crash inputs go.
fuzz: bootstrap
	@scripts/fuzz

# The Debian package: .build/deb/openidv_<version>_<arch>.deb (docs/OPERATIONS.md; scripts/make-deb says what goes where).
deb: bootstrap
	@scripts/make-deb

clean:
	$(SWIFT) package clean
